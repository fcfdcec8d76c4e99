import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import { PAY_DATE_STATES } from '../../../cycle/reruns/rerun-confirmation.ts';
import { recordRerunRequest } from '../../../cycle/reruns/rerun-service.ts';
import { queueNames } from '../../../platform/queue/job-catalogue.ts';
import { createQueue, type JobQueue } from '../../../platform/queue/queues.ts';
import { producerConnection } from '../../../platform/runtime/redis-connections.ts';
import { NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import { enqueueRerun } from '../../workers/rerun-runner.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

// Ids stay plain strings here: a malformed id or date names nothing, so the answer is 404, not 400.
const rerunParams = z.strictObject({ payroll_id: z.string(), pay_date: z.string() });

const rerunBody = z
  .strictObject({
    reason: z.string().trim().min(1).max(500).meta({ description: 'Why, kept with the request and in the audit log', example: 'Employer corrected a payroll reference' }),
    force: z.boolean().default(false).meta({
      description: 'Re-run a pay date already reconciled or paid out; without it such a pay date is refused with 409 `rerun-confirmation-required`.',
      example: false,
    }),
  })
  .meta({
    id: 'RerunRequest',
    description: 'Why the pay date is re-run, and, for one already reconciled or paid out, the confirmation that it must be.',
    example: { reason: 'Employer corrected a payroll reference', force: false },
  });

const rerunAccepted = z
  .object({
    rerun: z.object({
      id: z.uuid().meta({ description: 'The re-run that answers the request: follow it at `GET /runs/rerun/{id}`' }),
      request_id: z.uuid(),
      payroll_id: z.uuid(),
      pay_date: isoDateSchema,
      joined: z.boolean().meta({ description: 'The request joined a re-run already asked for that had not begun; it answers both' }),
      pay_date_state: z.enum(PAY_DATE_STATES).meta({ description: 'Where the pay date was when asked' }),
    }),
  })
  .meta({
    id: 'RerunAccepted',
    description: 'The recorded request and the re-run that will answer it; the workers lock the new snapshot version.',
    example: {
      rerun: {
        id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
        request_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8c',
        payroll_id: '019a7b2c-0000-7000-8000-000000000001',
        pay_date: '2026-11-27',
        joined: false,
        pay_date_state: 'confirmed',
      },
    },
  });

export const registerRerunRoutes: RouteModule = (app, deps) => {
  // The pay-date queue, opened on the first re-run: a process that never re-runs opens no connection for it.
  let queue: JobQueue | undefined;
  const payDatesQueue = () => (queue ??= createQueue(queueNames.payDates, producerConnection(deps.config), deps.config.QUEUE_PREFIX, deps.health));
  app.addHook('onClose', async () => queue?.close());

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id/pay-dates/:pay_date/reruns',
    operationId: 'rerun_pay_date',
    summary: 'Re-run a pay date',
    description:
      'Operators: asks for a locked payroll pay date to be locked again from the data as it is now: a new snapshot version supersedes the current one, with a new instruction file version, and the pay date is reconciled again. The request is recorded with its reason and audited; the workers do the re-run (`GET /runs/rerun/{id}` follows it). A request joins a re-run already asked for that has not begun. A pay date already **reconciled or paid out** is refused with 409 `rerun-confirmation-required` (and `pay_date_state`) unless the body says `force: true`: its money has moved. A pay date never locked is refused with 409 `rerun-refused`.',
    tags: ['Runs'],
    auth: { kind: 'both', scope: 'admin:write', roles: ['operator'] },
    params: rerunParams,
    body: rerunBody,
    idempotencyKey: 'optional',
    responses: {
      202: { description: 'Recorded; the re-run is queued', schema: rerunAccepted },
      404: { description: 'Unknown payroll or pay date', ...problem },
      409: { description: 'The pay date was never locked, or is reconciled or paid out and `force` is not true', ...problem },
    },
    effect: async (ctx, trx) => {
      const { payroll_id: payrollId, pay_date: payDate } = ctx.params;
      if (!isoDateSchema.safeParse(payDate).success) throw new NotFoundError(`Pay date ${payDate} of payroll ${payrollId}`);
      const recorded = await recordRerunRequest(trx, { payrollId, payDate, reason: ctx.body.reason, actor: clientActor(ctx.caller.clientId), force: ctx.body.force });
      return {
        status: 202,
        body: {
          rerun: { id: recorded.id, request_id: recorded.requestId, payroll_id: payrollId, pay_date: payDate, joined: recorded.joined, pay_date_state: recorded.payDateState },
        },
        // Queued once the request is committed: the job locks the re-run row the request wrote.
        afterCommit: async () => {
          await enqueueRerun(payDatesQueue(), deps.db, recorded.id);
        },
      };
    },
  });
};
