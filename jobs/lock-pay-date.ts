import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { lockPayDate } from '../src/deductions/lock-service.ts';
import { pushInstructionsToProvider } from '../src/deductions/provider-push-service.ts';
import type { AdapterFactory } from '../src/payroll-providers/adapter.ts';
import { isoDateSchema, uuidSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ payrollId: uuidSchema, payDate: isoDateSchema });

/**
 * Locks one payroll pay date with its instruction file, then pushes changed items to a provider
 * with an API. Each step is idempotent, so a retry (or a duplicate) redoes only what is missing.
 */
export function lockPayDateProcessor(db: Database, adapterFor: AdapterFactory) {
  return async (job: Job) => {
    const { payrollId, payDate } = payloadSchema.parse(job.data);
    const outcome = await lockPayDate(db, payrollId, payDate);
    const { instructionFile, ...lock } = outcome;
    const pushes = await pushInstructionsToProvider(db, adapterFor, payrollId, payDate);
    return { ...lock, instructionFile: instructionFile.fileName, instructionFileSha256: instructionFile.sha256, providerPushes: pushes.sent };
  };
}
