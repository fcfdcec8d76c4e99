import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/platform/db/connection.ts';
import { lockPayDateOfRun, recordPayDateFailure } from '../src/cycle/nightly/nightly-service.ts';
import { lockThenPushInstructions } from '../src/cycle/instructions/provider-push-service.ts';
import type { AmountLimits } from '../src/collections/payments/amount-limits.ts';
import type { AdapterFactory } from '../src/directory/payroll-providers/adapter.ts';
import { isoDateSchema, uuidSchema } from '../src/platform/shared/schemas.ts';

const payloadSchema = z.object({ runId: uuidSchema.optional(), payrollId: uuidSchema, payDate: isoDateSchema });

/**
 * The lock-pay-date job: locks one payroll pay date with its instruction file (recording the
 * outcome against its nightly run in the same transaction), then pushes changed items to a provider
 * with an API. Each step is idempotent, so a retry (or a duplicate) redoes only what is missing.
 */
export function lockPayDateProcessor(db: Database, adapterFor: AdapterFactory, limits: AmountLimits) {
  return async (job: Job) => {
    const { runId, payrollId, payDate } = payloadSchema.parse(job.data);
    const { locked, pushes } = await lockThenPushInstructions(db, adapterFor, () => lockPayDateOfRun(db, runId, { payrollId, payDate }, limits));
    const { instructionFile, ...outcome } = locked;
    return { ...outcome, instructionFile: instructionFile.fileName, instructionFileSha256: instructionFile.sha256, providerPushes: pushes.sent };
  };
}

/** A lock job that will not be retried again: its run records the pay date as failed. */
export function lockPayDateFailedForGood(db: Database) {
  return async (job: Job, error: Error) => {
    const parsed = payloadSchema.safeParse(job.data);
    if (!parsed.success || parsed.data.runId === undefined) return;
    const { runId, payrollId, payDate } = parsed.data;
    await recordPayDateFailure(db, runId, { payrollId, payDate }, error.message);
  };
}
