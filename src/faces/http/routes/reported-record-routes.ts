import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import { MAX_VOID_REASON_LENGTH, recordVoidSchema, showPayDateVoids, voidPayDateRecords } from '../../../cycle/deduction-records/void-service.ts';
import { listPayDateExceptions, payDateExceptionSchema } from '../../../platform/pay-date-exceptions/pay-date-exceptions.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const read = { kind: 'both', scope: 'admin:read', roles: ['operator'] } as const;
const write = { kind: 'both', scope: 'admin:write', roles: ['operator'] } as const;

const payDateParams = z.strictObject({ payroll_id: z.string(), pay_date: isoDateSchema });
const voidBody = z
  .strictObject({
    reason: z.string().max(MAX_VOID_REASON_LENGTH).meta({ description: 'Why the records cannot stand: kept in the void and the audit log' }),
  })
  .meta({ description: 'Why the records are voided.', example: { reason: 'provider pushed test amounts to the live payroll; ticket 4411' } });
const voidExample = recordVoidSchema.meta()?.example;
const voidEnvelope = z.object({ void: recordVoidSchema }).meta({ description: 'The void made.', example: { void: voidExample } });
const voidsEnvelope = z.object({ voids: z.array(recordVoidSchema) }).meta({ description: 'Voids, newest first.', example: { voids: [voidExample] } });
const exceptionsQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1_000).default(100) });
const exceptionsEnvelope = z
  .object({ pay_date_exceptions: z.array(payDateExceptionSchema) })
  .meta({ description: 'Open exceptions, most recently seen first.', example: { pay_date_exceptions: [payDateExceptionSchema.meta()?.example] } });

export const registerReportedRecordRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id/pay-dates/:pay_date/reported-records/void',
    operationId: 'void_reported_records',
    summary: "Void a payroll pay date's reported records",
    description:
      'Operators: every record payroll reported for the pay date (pushes and confirmations) stops counting, kept as it was with ' +
      'the void. The pay date is then as if payroll had reported nothing: its remittance expects what was requested, and it is ' +
      'reconciled again. The provider may report again, with versions above the voided ones. Audited with the reason.',
    tags: ['Administration'],
    auth: write,
    params: payDateParams,
    body: voidBody,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The void', schema: voidEnvelope },
      400: { description: 'Missing or invalid Idempotency-Key', ...problem },
      404: { description: 'No such payroll pay date', ...problem },
      409: { description: 'No record of the pay date counts: nothing to void', ...problem },
      422: { description: 'No reason, or one too long', ...problem },
    },
    effect: async (ctx, trx) => {
      const voided = await voidPayDateRecords(trx, clientActor(ctx.caller.clientId), {
        payrollId: ctx.params.payroll_id,
        payDate: ctx.params.pay_date,
        reason: ctx.body.reason,
      });
      return { status: 201, body: { void: voided }, afterCommit: () => deps.reconciliation.request(voided.payroll_id, voided.pay_date) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/payrolls/:payroll_id/pay-dates/:pay_date/reported-records/voids',
    operationId: 'list_reported_record_voids',
    summary: "List a payroll pay date's voids",
    description: "Operators: the voids of a payroll pay date's reported records, newest first.",
    tags: ['Administration'],
    auth: read,
    params: payDateParams,
    responses: { 200: { description: 'The voids', schema: voidsEnvelope }, 404: { description: 'No such payroll pay date', ...problem } },
    handler: async (ctx) => ({ status: 200, body: { voids: await showPayDateVoids(deps.db, ctx.params.payroll_id, ctx.params.pay_date) } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/pay-date-exceptions',
    operationId: 'list_pay_date_exceptions',
    summary: 'List pay dates that work over many pay dates left behind',
    description:
      'Operators: payroll pay dates the remittance refresh (or another stage over many pay dates) could not handle and left as ' +
      'they were while every other pay date went on, most recently seen first. Each stays open until the stage next succeeds for it.',
    tags: ['Administration'],
    auth: read,
    query: exceptionsQuery,
    responses: { 200: { description: 'Open exceptions', schema: exceptionsEnvelope } },
    handler: async (ctx) => ({ status: 200, body: { pay_date_exceptions: await listPayDateExceptions(deps.db, ctx.query.limit) } }),
  });
};
