import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/platform/db/connection.ts';
import { purgeExpiredIdempotencyKeys } from '../src/platform/idempotency/idempotency-service.ts';

const payloadSchema = z.object({}).passthrough();

/** Safe to run twice: a second run finds nothing expired left to delete. */
export function purgeIdempotencyKeysProcessor(db: Database) {
  return async (job: Job) => {
    payloadSchema.parse(job.data ?? {});
    const deleted = await purgeExpiredIdempotencyKeys(db);
    return { deleted };
  };
}
