import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import { bankHolidayRegionSchema } from '../../../directory/calendars/bank-holidays.ts';
import { addBankHoliday, listBankHolidays, removeBankHoliday } from '../../../directory/calendars/bank-holiday-service.ts';
import {
  generatePayCalendarForPayroll,
  importPayCalendarCsv,
  setGoLiveDate,
  showPayDates,
  syncPayCalendarFromProvider,
} from '../../../directory/calendars/calendar-service.ts';
import { serviceToday } from '../../../directory/calendars/lock-date.ts';
import {
  addBankHolidayRequestSchema,
  bankHolidayChangeSchema,
  bankHolidayListSchema,
  generatePayCalendarRequestSchema,
  goLiveRequestSchema,
  payCalendarChangeSchema,
  payrollGoLiveSchema,
  payrollPayDatesSchema,
} from '../../../directory/calendars/pay-calendar-resource.ts';
import { NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import type { RouteModule } from '../app.ts';
import { HttpProblem, problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const read = { kind: 'both', scope: 'admin:read', roles: ['operator'] } as const;
const write = { kind: 'both', scope: 'admin:write', roles: ['operator'] } as const;

// A malformed id names nothing, so it is a 404 like any other unknown id (checked in the service).
const payrollParams = z.strictObject({ payroll_id: z.string() });
const reasonSchema = z.string().trim().min(1).max(500).meta({ description: 'Why, kept in the audit log', example: 'Provider moved its cut-off' });
const reasonQuery = z.strictObject({ reason: reasonSchema.optional() });

const listBankHolidaysQuery = z.strictObject({
  region: bankHolidayRegionSchema,
  year: z.coerce.number().int().min(1900).max(2200).optional().meta({ description: 'Default: this year', example: 2027 }),
});
const bankHolidayParams = z.strictObject({ region: z.string(), date: z.string() });

/** A calendar file is a few hundred lines even for ten years of weekly pay dates. */
const CSV_BODY_LIMIT_BYTES = 1024 * 1024;

function isCsv(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'text/csv';
}

/** The CSV body as text, however the text/csv parser handed it over (a string here; a stream is read). */
async function csvBody(request: FastifyRequest): Promise<string> {
  if (!isCsv(request)) throw new HttpProblem(415, 'unsupported-media-type', 'Send the calendar as text/csv');
  const body: unknown = request.body;
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  if (body && typeof body === 'object' && Symbol.asyncIterator in body) {
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Buffer | string>) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks).toString('utf8');
  }
  throw new HttpProblem(400, 'empty-body', 'Send the calendar as the text/csv body');
}

export const registerCalendarRoutes: RouteModule = (app, deps) => {
  /** Who changes a calendar or a go-live date, why, and the service's today (which lock dates have passed). */
  const calendarEdit = (clientId: string, reason: string | null) => ({
    actor: clientActor(clientId),
    reason,
    today: serviceToday(new Date(), deps.config.SERVICE_TIME_ZONE),
  });
  // Keep the exact text: it is the file, and the idempotency fingerprint hashes what was sent.
  if (!app.hasContentTypeParser('text/csv')) {
    app.addContentTypeParser('text/csv', { parseAs: 'string' }, (request, body, done) => {
      request.rawBody = body as string;
      done(null, body);
    });
  }

  // Bank holidays ------------------------------------------------------------------------------------

  defineRoute(app, {
    method: 'GET',
    url: '/admin/bank-holidays',
    operationId: 'list_bank_holidays',
    summary: "List a region's bank holidays",
    description: "Operators: a region's bank holidays in a year, the published (library) ones and the one-off days operators added, each marked by source",
    tags: ['Administration'],
    auth: read,
    query: listBankHolidaysQuery,
    responses: {
      200: { description: 'The bank holidays, in date order', schema: bankHolidayListSchema },
      400: { description: 'Unknown region or invalid year', ...problem },
    },
    handler: async (ctx) => {
      const year = ctx.query.year ?? Number(serviceToday(new Date(), deps.config.SERVICE_TIME_ZONE).slice(0, 4));
      const bankHolidays = await listBankHolidays(deps.db, ctx.query.region, year);
      return { status: 200, body: { region: ctx.query.region, year, bank_holidays: bankHolidays } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/bank-holidays',
    operationId: 'add_bank_holiday',
    summary: 'Add a one-off bank holiday',
    description:
      "Operators: add a one-off bank holiday to a region; the lock dates of the region's payrolls' unlocked pay dates are recomputed in the same transaction; audited",
    tags: ['Administration'],
    auth: write,
    body: addBankHolidayRequestSchema,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The day was added', schema: bankHolidayChangeSchema },
      409: { description: 'The region already has a bank holiday on that date', ...problem },
      422: { description: 'Invalid body', ...problem },
    },
    effect: async (ctx, trx) => {
      const { reason, ...holiday } = ctx.body;
      const change = await addBankHoliday(trx, holiday, { actor: clientActor(ctx.caller.clientId), reason: reason ?? null });
      return { status: 201, body: change };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/admin/bank-holidays/:region/:date',
    operationId: 'remove_bank_holiday',
    summary: 'Remove a one-off bank holiday',
    description:
      "Operators: remove a one-off bank holiday an operator added; the region's unlocked lock dates are recomputed; published bank holidays cannot be removed; audited",
    tags: ['Administration'],
    auth: write,
    params: bankHolidayParams,
    query: reasonQuery,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The day was removed', schema: bankHolidayChangeSchema },
      404: { description: 'No added bank holiday on that date in that region', ...problem },
      409: { description: 'The day is a published bank holiday', ...problem },
    },
    effect: async (ctx, trx) => {
      const region = bankHolidayRegionSchema.safeParse(ctx.params.region);
      const date = isoDateSchema.safeParse(ctx.params.date);
      if (!region.success || !date.success) throw new NotFoundError(`Added bank holiday ${ctx.params.date} in ${ctx.params.region}`);
      const change = await removeBankHoliday(trx, region.data, date.data, {
        actor: clientActor(ctx.caller.clientId),
        reason: ctx.query.reason ?? null,
      });
      return { status: 200, body: change };
    },
  });

  // Pay calendars -------------------------------------------------------------------------------------

  defineRoute(app, {
    method: 'GET',
    url: '/admin/payrolls/:payroll_id/pay-dates',
    operationId: 'list_payroll_pay_dates',
    summary: "List a payroll's pay dates",
    description: "Operators: a payroll's pay dates with cut-offs, pay periods, lock dates and whether each is locked",
    tags: ['Administration'],
    auth: read,
    params: payrollParams,
    responses: {
      200: { description: "The payroll's calendar", schema: payrollPayDatesSchema },
      404: { description: 'Unknown payroll', ...problem },
    },
    handler: async (ctx) => ({ status: 200, body: await showPayDates(deps.db, ctx.params.payroll_id) }),
  });

  const calendarResponses = {
    200: { description: 'What the new calendar changed', schema: payCalendarChangeSchema },
    404: { description: 'Unknown payroll', ...problem },
    409: {
      description: 'Refused whole: the new calendar would move, remove or alter a locked pay date, or remove a pay date payment requests target (the dates are named)',
      ...problem,
    },
  };

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id/pay-calendar/generate',
    operationId: 'generate_pay_calendar',
    summary: 'Generate a pay calendar from a rule',
    description:
      "Operators: generate a payroll's pay dates from a rule for a horizon; they replace its unlocked pay dates in the horizon, with the bank holidays of the payroll's region; audited",
    tags: ['Administration'],
    auth: write,
    params: payrollParams,
    body: generatePayCalendarRequestSchema,
    idempotencyKey: 'required',
    responses: { ...calendarResponses, 422: { description: "Invalid rule or horizon, or a rule of another frequency than the payroll's", ...problem } },
    effect: async (ctx, trx) => {
      const { reason, ...request } = ctx.body;
      const change = await generatePayCalendarForPayroll(trx, ctx.params.payroll_id, request, calendarEdit(ctx.caller.clientId, reason ?? null));
      return { status: 200, body: change };
    },
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/admin/payrolls/:payroll_id/go-live',
    operationId: 'set_payroll_go_live',
    summary: "Set a payroll's go-live date",
    description:
      "Operators: a payroll's go-live date is its first pay date to collect; the nightly run never locks or catches up a pay date before it. A payroll's first calendar sets it to its first pay date whose lock date is still ahead; this moves it. The answer warns of pay dates whose lock dates have passed; audited",
    tags: ['Administration'],
    auth: write,
    params: payrollParams,
    body: goLiveRequestSchema,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The go-live date as set, with warnings', schema: payrollGoLiveSchema },
      404: { description: 'No such payroll', ...problem },
      422: { description: 'Invalid body', ...problem },
    },
    effect: async (ctx, trx) => {
      const change = await setGoLiveDate(trx, ctx.params.payroll_id, ctx.body, calendarEdit(ctx.caller.clientId, null));
      return { status: 200, body: change };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id/pay-calendar/import',
    operationId: 'import_pay_calendar',
    summary: 'Import a pay calendar (CSV)',
    description:
      "Operators: import a payroll's pay dates from a text/csv body (pay_date,payroll_cutoff_date[,pay_period]); they replace its unlocked pay dates from the file's first to its last; a file with a bad row changes nothing and every bad row is reported (line, column, reason); audited",
    tags: ['Administration'],
    auth: write,
    params: payrollParams,
    query: reasonQuery,
    bodyLimit: CSV_BODY_LIMIT_BYTES,
    idempotencyKey: 'required',
    responses: {
      ...calendarResponses,
      415: { description: 'The body is not text/csv', ...problem },
      422: { description: 'Bad rows: row_errors lists each with its line, column and reason', ...problem },
    },
    effect: async (ctx, trx) => {
      const csv = await csvBody(ctx.request);
      const change = await importPayCalendarCsv(trx, ctx.params.payroll_id, csv, calendarEdit(ctx.caller.clientId, ctx.query.reason ?? null));
      return { status: 200, body: change };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id/pay-calendar/sync',
    operationId: 'sync_pay_calendar',
    summary: 'Sync a pay calendar from the provider',
    description:
      "Operators: fetch a payroll's calendar from its provider's payroll information operation now; it replaces the unlocked pay dates from its first to its last; audited",
    tags: ['Administration'],
    auth: write,
    params: payrollParams,
    query: reasonQuery,
    idempotencyKey: 'required',
    responses: {
      ...calendarResponses,
      409: { description: `${calendarResponses[409].description}; or the provider has no API`, ...problem },
      502: { description: 'The provider failed or answered something unusable', ...problem },
      504: { description: 'The provider did not answer in time', ...problem },
    },
    effect: async (ctx, trx) => {
      const change = await syncPayCalendarFromProvider(trx, ctx.params.payroll_id, deps.adapterFor, calendarEdit(ctx.caller.clientId, ctx.query.reason ?? null));
      return { status: 200, body: change };
    },
  });
};
