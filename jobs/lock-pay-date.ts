import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { lockPayDate } from '../src/deductions/lock-service.ts';
import { isoDateSchema, uuidSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ payrollId: uuidSchema, payDate: isoDateSchema });

/** Locks one payroll pay date; a retry or a duplicate finds the snapshot and changes nothing. */
export function lockPayDateProcessor(db: Database) {
  return async (job: Job) => {
    const { payrollId, payDate } = payloadSchema.parse(job.data);
    return lockPayDate(db, payrollId, payDate);
  };
}
