import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { serviceToday } from '../src/directory/calendars/lock-date.ts';
import type { ReconciliationRequester } from '../src/cycle/reconciliation/reconciliation-requests.ts';
import { payDatesToReconcileAfter, reconcilePayDate } from '../src/cycle/reconciliation/reconciliation-service.ts';
import { reconcilePayDateJob, reconcileSweepJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';
import type { Config } from '../src/platform/config/config.ts';
import { expectedRemittancesFollowUp } from '../src/settlement/cash/remittance-service.ts';

/**
 * Reconciles one payroll pay date, its expected remittance following what payroll reported in the same
 * transaction; a repeat over the same records writes nothing. Later pay dates that have taken over a
 * payment reconciled here build on what it collected, and earlier ones with an attempt of a payment
 * whose collection here changed are capped by it, so both are asked to reconcile after it (debounced,
 * and a no-op when nothing changed).
 */
export function reconcilePayDateProcessor(db: Database, config: Pick<Config, 'SERVICE_TIME_ZONE' | 'REMITTANCE_LATE_WORKING_DAYS'>, reconciliation: ReconciliationRequester) {
  const followUp = expectedRemittancesFollowUp(config);
  return async (job: Job) => {
    const { payrollId, payDate, final } = payloadOf(job, reconcilePayDateJob);
    // The sweep's jobs carry its job id; every other job came through the debounced request.
    const trigger = job.id?.startsWith(`${reconcileSweepJob}.`) ? 'sweep' : 'request';
    const today = serviceToday(new Date(), config.SERVICE_TIME_ZONE);
    const summary = await reconcilePayDate(db, payrollId, payDate, { final, today, trigger, triggeredBy: job.id ?? null, followUp });
    for (const other of payDatesToReconcileAfter(summary)) await reconciliation.request(payrollId, other);
    return summary;
  };
}
