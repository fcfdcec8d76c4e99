import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { serviceToday } from '../src/calendars/lock-date.ts';
import { reconcilePayDateJob } from '../src/reconciliation/reconciliation-requests.ts';
import { findPayDatesToReconcile } from '../src/reconciliation/reconciliation-service.ts';
import { defaultJobOptions } from '../src/queue/queues.ts';
import { isoDateSchema } from '../src/shared/schemas.ts';

export const reconcileSweepJob = 'reconcile-sweep';
/** Daily, after the nightly lock run (01:00 by default), in the service time zone. */
export const RECONCILE_SWEEP_CRON = '0 5 * * *';

const payloadSchema = z.object({ runDate: isoDateSchema.optional() });

// BullMQ job ids may not contain ':'. One id per pay date and run date: a sweep run twice on the
// same day adds each reconciliation once.
export const sweepReconcileJobId = (runDate: string, payrollId: string, payDate: string) => `reconcile-sweep.${runDate}.${payrollId}.${payDate}`;

/**
 * Finds the pay dates to reconcile today (final once the settlement window is over, otherwise those
 * with records not yet taken in) and queues one reconciliation job per payroll pay date.
 */
export function reconcileSweepProcessor(db: Database, payDates: Queue, timeZone: string) {
  return async (job: Job) => {
    const { runDate } = payloadSchema.parse(job.data ?? {});
    const today = runDate ?? serviceToday(new Date(), timeZone);
    const due = await findPayDatesToReconcile(db, today);
    await payDates.addBulk(
      due.map((pair) => ({
        name: reconcilePayDateJob,
        data: pair,
        opts: { ...defaultJobOptions, jobId: sweepReconcileJobId(today, pair.payrollId, pair.payDate) },
      })),
    );
    return { runDate: today, queued: due.length, final: due.filter((pair) => pair.final).length };
  };
}
