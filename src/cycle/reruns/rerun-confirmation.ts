import type { SnapshotStatus } from '../../platform/db/tables.ts';

// Whether re-running a pay date must be confirmed. A re-run writes a new snapshot version and
// instruction file; before payroll has been reconciled that is a correction. Once the pay date is
// reconciled (every employee's deduction is known and allocated) or paid out (collections have gone
// to billers), it changes what payroll is asked for after the money has moved, and is done only
// when someone says so: the command line's prompt or --force, the API's `force: true`, the
// console's confirmation.

/** Where a payroll pay date is in its cycle, as a re-run sees it. */
export const PAY_DATE_STATES = ['open', 'locked', 'confirmed', 'reconciled', 'paid_out'] as const;
export type PayDateState = (typeof PAY_DATE_STATES)[number];

/**
 * A pay date's state from its facts: no current snapshot is open (never locked); money of it in a
 * payout (pending or paid; a failed payout's entries went back to the pool) is paid out, whatever
 * its snapshot says; otherwise its current snapshot's status.
 */
export function payDateStateOf(facts: { currentSnapshotStatus: Exclude<SnapshotStatus, 'superseded'> | null; paidOut: boolean }): PayDateState {
  if (facts.currentSnapshotStatus === null) return 'open';
  if (facts.paidOut) return 'paid_out';
  return facts.currentSnapshotStatus;
}

/** The rule: a reconciled or paid-out pay date is re-run only once confirmed. An open one has nothing to re-run (refused elsewhere). */
export function rerunNeedsConfirmation(state: PayDateState): boolean {
  switch (state) {
    case 'reconciled':
    case 'paid_out':
      return true;
    case 'open':
    case 'locked':
    case 'confirmed':
      return false;
  }
}

const WHAT_HAPPENED: Record<'reconciled' | 'paid_out', string> = {
  reconciled: 'is reconciled: every deduction payroll reported has been allocated',
  paid_out: 'is paid out: its collections have gone to billers',
};

/** Why a re-run waits for confirmation, said to the person who asked (every edge adds how to confirm). */
export function rerunConfirmationQuestion(payrollId: string, payDate: string, state: 'reconciled' | 'paid_out'): string {
  return `payroll ${payrollId} pay date ${payDate} ${WHAT_HAPPENED[state]}; a re-run would change what payroll is asked for after the money has moved, so it needs confirming`;
}
