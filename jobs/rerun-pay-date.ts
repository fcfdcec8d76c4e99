import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { performRerun } from '../src/cycle/reruns/rerun-service.ts';
import { lockThenPushInstructions } from '../src/cycle/instructions/provider-push-service.ts';
import type { AmountLimits } from '../src/collections/payments/amount-limits.ts';
import type { AdapterFactory } from '../src/directory/payroll-providers/adapter.ts';
import type { ReconciliationRequester } from '../src/cycle/reconciliation/reconciliation-requests.ts';
import { rerunPayDateJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';

/**
 * Re-runs one payroll pay date (the re-run row makes a second delivery a no-op), pushes the changed
 * items, and asks for the pay date to be reconciled again against the new snapshot. The request is
 * debounced and reconciliation is idempotent, so a repeated delivery asking again is harmless and
 * covers a crash between the re-run's commit and the request.
 */
export function rerunPayDateProcessor(db: Database, adapterFor: AdapterFactory, reconciliation: ReconciliationRequester, limits: AmountLimits) {
  return async (job: Job) => {
    const { rerunId } = payloadOf(job, rerunPayDateJob);
    const { locked: outcome, pushes } = await lockThenPushInstructions(db, adapterFor, () => performRerun(db, rerunId, limits));
    await reconciliation.request(outcome.payrollId, outcome.payDate);
    return { ...outcome, providerPushes: pushes.sent };
  };
}
