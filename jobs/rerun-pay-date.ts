import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { performRerun } from '../src/deductions/rerun-service.ts';
import { uuidSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ rerunId: uuidSchema });

/** Re-runs one payroll pay date; the re-run row makes a second delivery a no-op. */
export function rerunPayDateProcessor(db: Database) {
  return async (job: Job) => performRerun(db, payloadSchema.parse(job.data).rerunId);
}
