import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { serviceToday } from '../src/directory/calendars/lock-date.ts';
import { findPayDatesToReconcile } from '../src/cycle/reconciliation/reconciliation-service.ts';
import { defaultJobOptions, reconcilePayDateJob, reconcileSweepJob, sweepReconcileJobId } from '../src/platform/queue/job-catalogue.ts';
import { enqueueJobs, payloadOf } from '../src/platform/queue/job-contract.ts';
import type { JobQueue } from '../src/platform/queue/queues.ts';

/**
 * Finds the pay dates to reconcile today (final once the settlement window is over, otherwise those
 * with records not yet taken in) and queues one reconciliation job per payroll pay date.
 */
export function reconcileSweepProcessor(db: Database, payDates: JobQueue, timeZone: string) {
  return async (job: Job) => {
    const { runDate } = payloadOf(job, reconcileSweepJob);
    const today = runDate ?? serviceToday(new Date(), timeZone);
    const due = await findPayDatesToReconcile(db, today);
    await enqueueJobs(
      payDates,
      reconcilePayDateJob,
      due.map((pair) => ({
        payload: pair,
        options: { ...defaultJobOptions, jobId: sweepReconcileJobId(today, pair.payrollId, pair.payDate) },
      })),
    );
    return { runDate: today, queued: due.length, final: due.filter((pair) => pair.final).length };
  };
}
