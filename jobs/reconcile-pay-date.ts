import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { serviceToday } from '../src/calendars/lock-date.ts';
import { reconcilePayDate } from '../src/reconciliation/reconciliation-service.ts';
import { isoDateSchema, uuidSchema } from '../src/shared/schemas.ts';

// `final` is set only by the nightly sweep, once the pay date's settlement window is over; the
// debounced request after accepted records never sets it.
const payloadSchema = z.object({ payrollId: uuidSchema, payDate: isoDateSchema, final: z.boolean().default(false) });

/** Reconciles one payroll pay date; a repeat over the same records writes nothing. */
export function reconcilePayDateProcessor(db: Database, timeZone: string) {
  return async (job: Job) => {
    const { payrollId, payDate, final } = payloadSchema.parse(job.data);
    return reconcilePayDate(db, payrollId, payDate, { final, today: serviceToday(new Date(), timeZone) });
  };
}
