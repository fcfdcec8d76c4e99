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
