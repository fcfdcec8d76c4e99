import { retryRunPayDates } from '../../../cycle/nightly/nightly-service.ts';
import { consoleActor, recordAction } from '../../../platform/audit/audit-service.ts';
import { queueNames } from '../../../platform/queue/job-catalogue.ts';
import { ConflictError, NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { uuidSchema } from '../../../platform/shared/schemas.ts';
import { actionForm } from '../console-layout.ts';
import { CONSOLE_FORM_LIMIT_BYTES, type ConsolePageModule } from '../console-plugin.ts';
import type { Html } from '../html.ts';

const retryPath = (runId: string) => `/console/runs/nightly/${runId}/retry`;

/** The nightly run page's button: what `deductions nightly retry --run` does, without waiting for it. */
export function nightlyRetryForm(runId: string, csrfToken: string): Html {
  return actionForm(retryPath(runId), csrfToken, 'Retry the failed and skipped pay dates now');
}

/**
 * An operator's retry of a nightly run's failed and skipped pay dates: those whose payroll is ready
 * go back into the run and are locked by the workers; the run's page shows how they end.
 */
export const registerNightlyRetryAction: ConsolePageModule = (app, context) => {
  app.post<{ Params: { id: string } }>('/runs/nightly/:id/retry', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const session = context.requirePermission(request, 'rerun');
    const runId = uuidSchema.safeParse(request.params.id);
    if (!runId.success) throw new NotFoundError(`Nightly run ${request.params.id}`);
    const retry = await retryRunPayDates(context.deps.db, await context.queues.queue(queueNames.payDates), runId.data);
    if (retry.busyWith !== null) {
      throw new ConflictError('nightly-run-busy', `Another run of this date is going (${retry.busyWith}): nothing was retried. Try again once it has finished.`);
    }
    await recordAction(context.deps.db, {
      actor: consoleActor(session.email),
      action: 'nightly_run.retried',
      resourceType: 'nightly_run',
      resourceId: runId.data,
      reason: null,
      before: { retried: retry.retried.length, still_not_ready: retry.stillNotReady.length },
    });
    const still = retry.stillNotReady.length;
    const notice =
      retry.retried.length === 0 && still === 0
        ? 'Nothing to retry: every pay date of this run is locked or taken on by a later run.'
        : `Retrying ${retry.retried.length} pay date${retry.retried.length === 1 ? '' : 's'}${still > 0 ? `; ${still} still not ready, kept as skipped with the reason` : ''}. This page shows how they end.`;
    return context.redirectWithNotice(reply, `/console/runs/nightly/${runId.data}`, notice);
  });
};
