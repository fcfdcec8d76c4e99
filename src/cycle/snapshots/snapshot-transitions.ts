import type { SnapshotStatus } from '../../platform/db/tables.ts';
import { defineStatusTransitions } from '../../platform/shared/status-transitions.ts';

// The deduction snapshot lifecycle as data. The lock writes a snapshot locked; payroll's
// records make it confirmed (some lines answered) and reconciliation reconciled (every line answered),
// possibly in one step. Reconciliation only moves it forward: a later push of fewer records does not
// un-answer what payroll already answered. A re-run supersedes the current snapshot, whatever it had
// reached, with a new version; superseded is terminal (the new version carries its history on).
// Self-transitions are not transitions.

export const SNAPSHOT_STATUSES = ['locked', 'confirmed', 'reconciled', 'superseded'] as const satisfies readonly SnapshotStatus[];

/** The stored status (src/platform/db/tables.ts), with the lifecycle that moves it; the list above names exactly its values. */
export type { SnapshotStatus };

export const SNAPSHOT_LIFECYCLE = defineStatusTransitions<SnapshotStatus>({
  resource: 'A deduction snapshot',
  statuses: SNAPSHOT_STATUSES,
  transitions: {
    locked: ['confirmed', 'reconciled', 'superseded'],
    confirmed: ['reconciled', 'superseded'],
    reconciled: ['superseded'],
    superseded: [],
  },
});
