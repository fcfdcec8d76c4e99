export interface LockoutPolicy {
  /** Failed sign-ins in a row that lock the account. */
  failures: number;
  lockMinutes: number;
}

export interface AccountLockState {
  failedSignIns: number;
  lockedUntil: Date | null;
}

/** Whether the account refuses every password now, the right one included. */
export function isLockedOut(state: AccountLockState, now: Date): boolean {
  return state.lockedUntil !== null && state.lockedUntil.getTime() > now.getTime();
}

/**
 * The account's state after a wrong password: one more failure, and a lock once the count reaches the
 * policy's limit. A lock that has run out starts the count again, so one more failure after it does
 * not lock at once; failures while locked change nothing (the lock is not extended by an attacker).
 */
export function afterFailedSignIn(state: AccountLockState, now: Date, policy: LockoutPolicy): AccountLockState {
  if (isLockedOut(state, now)) return state;
  const failedSignIns = (state.lockedUntil === null ? state.failedSignIns : 0) + 1;
  if (failedSignIns < policy.failures) return { failedSignIns, lockedUntil: null };
  return { failedSignIns, lockedUntil: new Date(now.getTime() + policy.lockMinutes * 60_000) };
}
