import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { lockPayDateOfRun, recordPayDateFailure } from '../src/cycle/nightly/nightly-service.ts';
import { lockThenPushInstructions } from '../src/cycle/instructions/provider-push-service.ts';
import type { AmountLimits } from '../src/collections/payments/amount-limits.ts';
import type { AdapterFactory } from '../src/directory/payroll-providers/adapter.ts';
import type { Config } from '../src/platform/config/config.ts';
import { lockPayDateJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf, payloadOrUndefined } from '../src/platform/queue/job-contract.ts';
import { expectedRemittancesFollowUp } from '../src/settlement/cash/remittance-service.ts';

/**
 * The lock-pay-date job: locks one payroll pay date with its instruction file, recording the outcome
 * against its nightly run and making the pay date's expected remittance (what the employer is to
 * remit, src/settlement/cash) in the same transaction, then pushes changed items to a provider with an
 * API. Each step is idempotent, so a retry (or a duplicate) redoes only what is missing.
 */
export function lockPayDateProcessor(
  db: Database,
  adapterFor: AdapterFactory,
  limits: AmountLimits,
  config: Pick<Config, 'SERVICE_TIME_ZONE' | 'REMITTANCE_LATE_WORKING_DAYS'>,
) {
  const remittances = expectedRemittancesFollowUp(config);
  return async (job: Job) => {
    const { runId, payrollId, payDate } = payloadOf(job, lockPayDateJob);
    const { locked, pushes } = await lockThenPushInstructions(db, adapterFor, () => lockPayDateOfRun(db, runId, { payrollId, payDate }, limits, remittances));
    const { instructionFile, ...outcome } = locked;
    return { ...outcome, instructionFile: instructionFile.fileName, instructionFileSha256: instructionFile.sha256, providerPushes: pushes.sent };
  };
}

/** A lock job that will not be retried again: its run records the pay date as failed. */
export function lockPayDateFailedForGood(db: Database) {
  return async (job: Job, error: Error) => {
    const payload = payloadOrUndefined(job, lockPayDateJob);
    if (payload?.runId === undefined) return;
    const { runId, payrollId, payDate } = payload;
    await recordPayDateFailure(db, runId, { payrollId, payDate }, error.message);
  };
}
