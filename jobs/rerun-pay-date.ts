import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { performRerun } from '../src/cycle/reruns/rerun-service.ts';
import { lockThenPushInstructions } from '../src/cycle/instructions/provider-push-service.ts';
import type { AmountLimits } from '../src/collections/payments/amount-limits.ts';
import type { AdapterFactory } from '../src/directory/payroll-providers/adapter.ts';
import type { ReconciliationRequester } from '../src/cycle/reconciliation/reconciliation-requests.ts';
import type { Config } from '../src/platform/config/config.ts';
import { rerunPayDateJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';
import { expectedRemittancesFollowUp } from '../src/settlement/cash/remittance-service.ts';

/**
 * Re-runs one payroll pay date (the re-run row makes a second delivery a no-op), its expected
 * remittance following the new snapshot in the same transaction, pushes the changed items, and asks
 * for the pay date to be reconciled again against the new snapshot. The request is debounced and
 * reconciliation is idempotent, so a repeated delivery asking again is harmless and covers a crash
 * between the re-run's commit and the request.
 */
export function rerunPayDateProcessor(
  db: Database,
  adapterFor: AdapterFactory,
  reconciliation: ReconciliationRequester,
  limits: AmountLimits,
  config: Pick<Config, 'SERVICE_TIME_ZONE' | 'REMITTANCE_LATE_WORKING_DAYS'>,
) {
  const remittances = expectedRemittancesFollowUp(config);
  return async (job: Job) => {
    const { rerunId } = payloadOf(job, rerunPayDateJob);
    const { locked: outcome, pushes } = await lockThenPushInstructions(db, adapterFor, () => performRerun(db, rerunId, limits, remittances));
    await reconciliation.request(outcome.payrollId, outcome.payDate);
    return { ...outcome, providerPushes: pushes.sent };
  };
}
