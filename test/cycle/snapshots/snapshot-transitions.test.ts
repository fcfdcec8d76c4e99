import { describe, expect, expectTypeOf, it } from 'vitest';
import type { SnapshotStatus as StoredSnapshotStatus } from '../../../src/platform/db/tables.ts';
import { InvalidStatusTransitionError } from '../../../src/platform/shared/status-transitions.ts';
import { SNAPSHOT_LIFECYCLE, SNAPSHOT_STATUSES, type SnapshotStatus } from '../../../src/cycle/snapshots/snapshot-transitions.ts';

// Rows: from. Columns: to, in this order. 1 = allowed. Written out by hand from what the code does
// (records confirm, reconciliation moves forward only, a re-run supersedes whatever is current),
// independently of the table in snapshot-transitions.ts.
const COLUMNS = ['locked', 'confirmed', 'reconciled', 'superseded'] as const;
const EXPECTED: Record<SnapshotStatus, readonly (0 | 1)[]> = {
  //          lock conf rec  sup
  locked: [0, 1, 1, 1],
  confirmed: [0, 0, 1, 1],
  reconciled: [0, 0, 0, 1],
  superseded: [0, 0, 0, 0],
};

const PAIRS = COLUMNS.flatMap((from) => COLUMNS.map((to, column) => [from, to, EXPECTED[from][column] === 1] as const));

describe('deduction snapshot transitions', () => {
  it('status set matches the stored SnapshotStatus type and the expected table', () => {
    expectTypeOf<(typeof SNAPSHOT_STATUSES)[number]>().toEqualTypeOf<StoredSnapshotStatus>();
    expect([...SNAPSHOT_LIFECYCLE.statuses].sort()).toEqual([...COLUMNS].sort());
    expect(Object.keys(SNAPSHOT_LIFECYCLE.transitions).sort()).toEqual([...COLUMNS].sort());
    expect(PAIRS).toHaveLength(16);
  });

  it.each(PAIRS)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(SNAPSHOT_LIFECYCLE.can(from, to)).toBe(allowed);
    if (allowed) expect(() => SNAPSHOT_LIFECYCLE.assert(from, to)).not.toThrow();
    else expect(() => SNAPSHOT_LIFECYCLE.assert(from, to)).toThrow(InvalidStatusTransitionError);
  });

  it('the error names the snapshot and both ends', () => {
    expect(() => SNAPSHOT_LIFECYCLE.assert('reconciled', 'confirmed')).toThrow('A deduction snapshot cannot move from reconciled to confirmed');
  });

  it('only superseded is terminal, and it is reachable from every other status', () => {
    expect(COLUMNS.filter(SNAPSHOT_LIFECYCLE.isTerminal)).toEqual(['superseded']);
    expect(SNAPSHOT_LIFECYCLE.fromStatuses('superseded')).toEqual(['locked', 'confirmed', 'reconciled']);
  });

  it('reconciliation moves forward only: what it may write comes from the earlier statuses', () => {
    expect(SNAPSHOT_LIFECYCLE.fromStatuses('confirmed')).toEqual(['locked']);
    expect(SNAPSHOT_LIFECYCLE.fromStatuses('reconciled')).toEqual(['locked', 'confirmed']);
  });
});
