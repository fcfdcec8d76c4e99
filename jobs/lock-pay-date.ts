import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { lockPayDateOfRun, recordPayDateFailure } from '../src/cycle/nightly/nightly-service.ts';
import { lockThenPushInstructions } from '../src/cycle/instructions/provider-push-service.ts';
import type { AmountLimits } from '../src/collections/payments/amount-limits.ts';
import type { AdapterFactory } from '../src/directory/payroll-providers/adapter.ts';
import { lockPayDateJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf, payloadOrUndefined } from '../src/platform/queue/job-contract.ts';

/**
 * The lock-pay-date job: locks one payroll pay date with its instruction file (recording the
 * outcome against its nightly run in the same transaction), then pushes changed items to a provider
 * with an API. Each step is idempotent, so a retry (or a duplicate) redoes only what is missing.
 */
export function lockPayDateProcessor(db: Database, adapterFor: AdapterFactory, limits: AmountLimits) {
  return async (job: Job) => {
    const { runId, payrollId, payDate } = payloadOf(job, lockPayDateJob);
    const { locked, pushes } = await lockThenPushInstructions(db, adapterFor, () => lockPayDateOfRun(db, runId, { payrollId, payDate }, limits));
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
