import type { FlowJob } from 'bullmq';
import { defaultJobOptions, queueNames } from '../queue/queues.ts';

export const nightlyTriggerJob = 'nightly-trigger';
export const nightlyRunJob = 'nightly-run';
export const lockPayDateJob = 'lock-pay-date';
export const rerunPayDateJob = 'rerun-pay-date';

export interface PayDatePair {
  payrollId: string;
  payDate: string;
}

// BullMQ job ids may not contain ':' (its key separator), hence the dots.
export const nightlyRunJobId = (runDate: string) => `nightly.${runDate}`;
export const lockJobId = (pair: PayDatePair) => `lock.${pair.payrollId}.${pair.payDate}`;
export const rerunJobId = (rerunId: string) => `rerun.${rerunId}`;

/**
 * The nightly run as a BullMQ flow: a parent per run date, a child per due (payroll, pay date).
 * Ids are deterministic, so triggering the same date twice adds nothing; a failed child is
 * recorded on the parent instead of blocking it, so the run always finishes with its failures.
 */
export function buildNightlyFlow(runDate: string, pairs: readonly PayDatePair[]): FlowJob {
  return {
    name: nightlyRunJob,
    queueName: queueNames.nightly,
    data: { runDate, pairCount: pairs.length },
    // The parent's result is the run's summary: keep it a month for `deductions status`.
    opts: { jobId: nightlyRunJobId(runDate), removeOnComplete: { age: 30 * 86_400 }, removeOnFail: { age: 30 * 86_400 } },
    children: pairs.map((pair) => ({
      name: lockPayDateJob,
      queueName: queueNames.payDates,
      data: pair,
      opts: { ...defaultJobOptions, jobId: lockJobId(pair), ignoreDependencyOnFailure: true },
    })),
  };
}
