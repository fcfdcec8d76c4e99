import { z } from 'zod';
import { serviceToday } from '../../../directory/calendars/lock-date.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { amountLimitsOf } from '../../../collections/payments/amount-limits.ts';
import { DEFAULT_CURRENCY } from '../../../collections/payments/payment-service.ts';
import { exampleIds } from '../../../platform/shared/examples.ts';
import { pagingQuerySchema } from '../../../platform/shared/paging.ts';
import { currencySchema, isoDateSchema, metadataSchema, minorUnitsSchema, uuidSchema } from '../../../platform/shared/schemas.ts';
import { INSTALMENT_INTERVALS, MAX_INSTALMENTS } from '../../../collections/schedules/instalment-due-dates.ts';
import { scheduleCancelResponseSchema, scheduleEnvelopeSchema, schedulesPageSchema, SCHEDULE_STATUSES } from '../../../collections/schedules/schedule-resource.ts';
import { cancelSchedule, createSchedule, getSchedule, listScheduleResources, type ScheduleRecord } from '../../../collections/schedules/schedule-service.ts';

const instalmentRequestSchema = z
  .strictObject({
    amount: minorUnitsSchema,
    due_date: isoDateSchema,
    metadata: metadataSchema.nullable().optional(),
  })
  .meta({
    id: 'InstalmentRequest',
    description: 'One instalment: its amount in integer minor units and the date it is due by.',
    example: { amount: 5000, due_date: '2026-11-30' },
  });

const GENERATED_FORM_FIELDS = ['amount', 'count', 'interval', 'start_date'] as const;

/**
 * Two ways to state the instalments: an explicit list, or amount x count every interval from
 * start_date. Exactly one of them; mixing them would leave it unclear which one the biller meant.
 */
const scheduleRecordSchema = z
  .strictObject({
    mandate_id: uuidSchema,
    currency: currencySchema.nullable().default(DEFAULT_CURRENCY),
    total_amount: minorUnitsSchema.nullable().optional(),
    allow_post_due_date_deduction: z.boolean().default(false),
    metadata: metadataSchema.nullable().optional(),
    instalments: z.array(instalmentRequestSchema).min(1).max(MAX_INSTALMENTS).optional(),
    amount: minorUnitsSchema.optional(),
    count: z.number().int().min(1).max(MAX_INSTALMENTS).optional(),
    interval: z.enum(INSTALMENT_INTERVALS).optional(),
    start_date: isoDateSchema.optional(),
  })
  .superRefine((record, ctx) => {
    const given = GENERATED_FORM_FIELDS.filter((field) => record[field] !== undefined);
    if (record.instalments !== undefined) {
      for (const field of given) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'cannot be combined with instalments; give one form only' });
      }
      record.instalments.forEach((instalment, index) => {
        const previous = record.instalments![index - 1];
        if (previous && instalment.due_date < previous.due_date) {
          ctx.addIssue({
            code: 'custom',
            path: ['instalments', index, 'due_date'],
            message: `must be on or after the due date of the previous instalment (${previous.due_date})`,
          });
        }
      });
    } else if (given.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'give either instalments, or amount, count, interval and start_date',
      });
    } else {
      for (const field of GENERATED_FORM_FIELDS.filter((f) => record[f] === undefined)) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'is required when instalments is not given' });
      }
    }
  })
  .meta({
    id: 'ScheduleRecordRequest',
    description:
      'The instalments, in one of two forms: an explicit `instalments` list (due dates in order), or `amount` x `count` ' +
      'every `interval` from `start_date`. `total_amount`, when given, must be their sum. Amounts in integer minor units.',
    example: { mandate_id: exampleIds.mandate, currency: 'GBP', amount: 5000, count: 2, interval: 'monthly', start_date: '2026-11-30' },
  });

const createScheduleBody = z.strictObject({ schedule_record: scheduleRecordSchema }).meta({
  id: 'ScheduleCreateRequest',
  description: 'The schedule to create.',
  example: {
    schedule_record: {
      mandate_id: exampleIds.mandate,
      total_amount: 10000,
      instalments: [
        { amount: 5000, due_date: '2026-11-30' },
        { amount: 5000, due_date: '2026-12-31' },
      ],
    },
  },
});

const scheduleParams = z.strictObject({ schedule_id: z.string() });

const listSchedulesQuery = pagingQuerySchema.extend({
  status: z.enum(SCHEDULE_STATUSES).optional(),
  mandate_id: uuidSchema.optional(),
});

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

function toScheduleRecord(body: z.output<typeof scheduleRecordSchema>): ScheduleRecord {
  const common = {
    mandate_id: body.mandate_id,
    currency: body.currency ?? DEFAULT_CURRENCY,
    total_amount: body.total_amount ?? null,
    allow_post_due_date_deduction: body.allow_post_due_date_deduction,
    metadata: body.metadata ?? null,
  };
  if (body.instalments !== undefined) {
    return {
      ...common,
      instalments: body.instalments.map((i) => ({ amount: i.amount, due_date: i.due_date, metadata: i.metadata ?? null })),
    };
  }
  // The schema's refinement guarantees all four fields of the generated form here.
  return { ...common, amount: body.amount!, count: body.count!, interval: body.interval!, start_date: body.start_date! };
}

export const registerScheduleRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/schedules',
    operationId: 'instruct_new_schedule',
    summary: 'Create a schedule of instalments',
    description:
      'Creates a schedule on an active mandate: either an explicit list of `instalments` (amount and due date ' +
      'each), or `amount` x `count` every `interval` from `start_date`. Each instalment becomes a payment ' +
      'request targeted like one created on its own; if any instalment cannot be accepted, nothing is created.',
    tags: ['Schedules'],
    auth: { kind: 'both', scope: 'payments:write', roles: ['biller'] },
    idempotencyKey: 'required',
    body: createScheduleBody,
    responses: {
      201: { description: 'Schedule created with all its instalments', schema: scheduleEnvelopeSchema },
      404: { description: 'Mandate not found', ...problem },
      422: {
        description:
          'An instalment cannot be accepted (nothing is created); type amount-over-limit when an instalment ' +
          'is over MAX_PAYMENT_AMOUNT_MINOR or the mandate would ask more than MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR on a pay date',
        ...problem,
      },
    },
    effect: async (ctx, trx) => {
      const schedule = await createSchedule(trx, {
        billerClientId: ctx.caller.clientId,
        today: serviceToday(new Date(), deps.config.SERVICE_TIME_ZONE),
        limits: amountLimitsOf(deps.config),
        record: toScheduleRecord(ctx.body.schedule_record),
      });
      return { status: 201, headers: { location: `/schedules/${schedule.id}` }, body: { schedule } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/schedules/:schedule_id/cancel',
    operationId: 'cancel_schedule',
    summary: 'Cancel a schedule',
    description:
      "Cancels the schedule's instalments that payroll has not been instructed to deduct yet; those already " +
      'instructed run their course. Cancelling a cancelled schedule answers the same again; a completed one ' +
      'cannot be cancelled (409).',
    tags: ['Schedules'],
    auth: { kind: 'both', scope: 'payments:write', roles: ['biller'] },
    idempotencyKey: 'optional',
    params: scheduleParams,
    responses: {
      200: { description: 'Cancelled (or already cancelled)', schema: scheduleCancelResponseSchema },
      404: { description: 'Schedule not found', ...problem },
      409: { description: 'Schedule already completed', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: { schedule: await cancelSchedule(trx, ctx.caller.clientId, ctx.params.schedule_id) },
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/schedules/:schedule_id',
    operationId: 'get_schedule',
    summary: 'Get a schedule',
    description: 'A schedule of the caller with its instalments.',
    tags: ['Schedules'],
    auth: { kind: 'both', scope: 'payments:read', roles: ['biller'] },
    params: scheduleParams,
    responses: {
      200: { description: 'The schedule', schema: scheduleEnvelopeSchema },
      404: { description: 'Schedule not found', ...problem },
    },
    handler: async (ctx) => ({
      status: 200,
      body: { schedule: await getSchedule(deps.db, ctx.caller.clientId, ctx.params.schedule_id) },
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/schedules',
    operationId: 'get_schedules',
    summary: 'List schedules',
    description: "The caller's schedules, newest first, one page at a time; filter by status or mandate.",
    tags: ['Schedules'],
    auth: { kind: 'both', scope: 'payments:read', roles: ['biller'] },
    query: listSchedulesQuery,
    responses: { 200: { description: 'A page of schedules', schema: schedulesPageSchema } },
    handler: async (ctx) => {
      const { status, mandate_id, ...paging } = ctx.query;
      return {
        status: 200,
        body: await listScheduleResources(deps.db, ctx.caller.clientId, { status, mandateId: mandate_id }, paging),
      };
    },
  });
};
