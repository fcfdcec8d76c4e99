import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { serviceToday } from '../src/directory/calendars/lock-date.ts';
import type { ReconciliationRequester } from '../src/cycle/reconciliation/reconciliation-requests.ts';
import { payDatesToReconcileAfter, reconcilePayDate } from '../src/cycle/reconciliation/reconciliation-service.ts';
import { reconcilePayDateJob, reconcileSweepJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';

/**
 * Reconciles one payroll pay date; a repeat over the same records writes nothing. Later pay dates that
 * have taken over a payment reconciled here build on what it collected, and earlier ones with an
 * attempt of a payment whose collection here changed are capped by it, so both are asked to reconcile
 * after it (debounced, and a no-op when nothing changed).
 */
export function reconcilePayDateProcessor(db: Database, timeZone: string, reconciliation: ReconciliationRequester) {
  return async (job: Job) => {
    const { payrollId, payDate, final } = payloadOf(job, reconcilePayDateJob);
    // The sweep's jobs carry its job id; every other job came through the debounced request.
    const trigger = job.id?.startsWith(`${reconcileSweepJob}.`) ? 'sweep' : 'request';
    const summary = await reconcilePayDate(db, payrollId, payDate, { final, today: serviceToday(new Date(), timeZone), trigger, triggeredBy: job.id ?? null });
    for (const other of payDatesToReconcileAfter(summary)) await reconciliation.request(payrollId, other);
    return summary;
  };
}
