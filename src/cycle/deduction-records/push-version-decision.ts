// Payroll providers re-send employee records freely (retries, corrections, replays of a whole pay
// period), so whether a record changes anything is decided by its version alone, per (payroll,
// pay period, employee): the highest version is the truth and nothing ever goes backwards.

export interface RecordVersion {
  version: number;
  contentHash: string;
}

export type PushVersionDecision =
  | { kind: 'insert' }
  /** The same version with the same content: a retry, answered as before and stored once. */
  | { kind: 'unchanged' }
  | { kind: 'conflict'; reason: 'lower-version' | 'same-version-other-content'; currentVersion: number };

/** What an incoming version does against the current (highest) one, if any. */
export function pushVersionDecision(current: RecordVersion | null, incoming: RecordVersion): PushVersionDecision {
  if (current === null || incoming.version > current.version) return { kind: 'insert' };
  if (incoming.version < current.version) {
    return { kind: 'conflict', reason: 'lower-version', currentVersion: current.version };
  }
  return incoming.contentHash === current.contentHash ? { kind: 'unchanged' } : { kind: 'conflict', reason: 'same-version-other-content', currentVersion: current.version };
}
