import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { purgeExpiredIdempotencyKeys } from '../src/platform/idempotency/idempotency-service.ts';
import { purgeIdempotencyKeysJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';

/** Safe to run twice: a second run finds nothing expired left to delete. */
export function purgeIdempotencyKeysProcessor(db: Database) {
  return async (job: Job) => {
    payloadOf(job, purgeIdempotencyKeysJob);
    const deleted = await purgeExpiredIdempotencyKeys(db);
    return { deleted };
  };
}
