export const nightlyTriggerJob = 'nightly-trigger';
export const lockPayDateJob = 'lock-pay-date';
export const rerunPayDateJob = 'rerun-pay-date';

export interface PayDatePair {
  payrollId: string;
  payDate: string;
}

/**
 * What a lock job carries. `runId` names the nightly run (a database row) that the pay date's
 * outcome is recorded against; a job without one (queued before runs were recorded) only locks.
 */
export interface LockPayDateData extends PayDatePair {
  runId?: string;
}

// BullMQ job ids may not contain ':' (its key separator), hence the dots.
/**
 * One id per run and pay date: a run is a database row with a generated id, so a job of another
 * database state (a restored backup, a recreated database) can never stand in for this one. A
 * job the watchdog queues again, because Redis no longer holds a live one, gets the next suffix.
 */
export const lockJobId = (runId: string, pair: PayDatePair, requeues = 0) =>
  `lock.${runId}.${pair.payrollId}.${pair.payDate}${requeues > 0 ? `.r${requeues}` : ''}`;
export const rerunJobId = (rerunId: string) => `rerun.${rerunId}`;
/** The watchdog's trigger for a run date whose scheduled trigger never ran. */
export const catchUpTriggerJobId = (runDate: string) => `nightly-trigger.catch-up.${runDate}`;
