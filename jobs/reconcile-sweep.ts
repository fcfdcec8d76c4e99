import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/platform/db/connection.ts';
import { serviceToday } from '../src/directory/calendars/lock-date.ts';
import { findPayDatesToReconcile } from '../src/cycle/reconciliation/reconciliation-service.ts';
import { defaultJobOptions, reconcilePayDateJob, sweepReconcileJobId } from '../src/platform/queue/job-catalogue.ts';
import { isoDateSchema } from '../src/platform/shared/schemas.ts';

const payloadSchema = z.object({ runDate: isoDateSchema.optional() });

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
