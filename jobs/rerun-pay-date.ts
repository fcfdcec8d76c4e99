import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { performRerun } from '../src/reruns/rerun-service.ts';
import { lockThenPushInstructions } from '../src/instructions/provider-push-service.ts';
import type { AmountLimits } from '../src/payments/amount-limits.ts';
import type { AdapterFactory } from '../src/payroll-providers/adapter.ts';
import type { ReconciliationRequester } from '../src/reconciliation/reconciliation-requests.ts';
import { uuidSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ rerunId: uuidSchema });

/**
 * Re-runs one payroll pay date (the re-run row makes a second delivery a no-op), pushes the changed
 * items, and asks for the pay date to be reconciled again against the new snapshot. The request is
 * debounced and reconciliation is idempotent, so a repeated delivery asking again is harmless and
 * covers a crash between the re-run's commit and the request.
 */
export function rerunPayDateProcessor(
  db: Database,
  adapterFor: AdapterFactory,
  reconciliation: ReconciliationRequester,
  limits: AmountLimits,
) {
  return async (job: Job) => {
    const { rerunId } = payloadSchema.parse(job.data);
    const { locked: outcome, pushes } = await lockThenPushInstructions(db, adapterFor, () => performRerun(db, rerunId, limits));
    await reconciliation.request(outcome.payrollId, outcome.payDate);
    return { ...outcome, providerPushes: pushes.sent };
  };
}
