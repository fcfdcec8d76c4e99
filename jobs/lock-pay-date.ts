import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { lockPayDate } from '../src/deductions/lock-service.ts';
import { writeInstructionFile } from '../src/deductions/instruction-service.ts';
import { isoDateSchema, uuidSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ payrollId: uuidSchema, payDate: isoDateSchema });

/**
 * Locks one payroll pay date, then writes its instruction file. A retry or a duplicate finds the
 * snapshot and the file and changes nothing; a crash between the two steps is mended by the retry.
 */
export function lockPayDateProcessor(db: Database) {
  return async (job: Job) => {
    const { payrollId, payDate } = payloadSchema.parse(job.data);
    const outcome = await lockPayDate(db, payrollId, payDate);
    const file = await writeInstructionFile(db, outcome.snapshotId);
    return { ...outcome, instructionFile: file.fileName, instructionFileSha256: file.sha256 };
  };
}
