import { describe, expect, it } from 'vitest';
import { PAY_DATE_STATES, payDateStateOf, rerunConfirmationQuestion, rerunNeedsConfirmation, type PayDateState } from '../../../src/cycle/reruns/rerun-confirmation.ts';
import { SNAPSHOT_STATUSES } from '../../../src/cycle/snapshots/snapshot-transitions.ts';

describe('rerunNeedsConfirmation', () => {
  const expected: Record<PayDateState, boolean> = {
    open: false,
    locked: false,
    confirmed: false,
    reconciled: true,
    paid_out: true,
  };

  it.each(PAY_DATE_STATES.map((state) => [state, expected[state]] as const))('a %s pay date: %s', (state, needed) => {
    expect(rerunNeedsConfirmation(state)).toBe(needed);
  });

  it('is decided for every state there is', () => {
    expect(Object.keys(expected).sort()).toEqual([...PAY_DATE_STATES].sort());
  });
});

describe('payDateStateOf', () => {
  const current = SNAPSHOT_STATUSES.filter((status) => status !== 'superseded');

  it('is open without a current snapshot, paid or not', () => {
    expect(payDateStateOf({ currentSnapshotStatus: null, paidOut: false })).toBe('open');
    expect(payDateStateOf({ currentSnapshotStatus: null, paidOut: true })).toBe('open');
  });

  it.each(current)('is its snapshot’s status (%s) until money of it is in a payout', (status) => {
    expect(payDateStateOf({ currentSnapshotStatus: status, paidOut: false })).toBe(status);
  });

  it.each(current)('is paid out once money of it is in a payout, whatever its snapshot (%s) says', (status) => {
    expect(payDateStateOf({ currentSnapshotStatus: status, paidOut: true })).toBe('paid_out');
  });

  it('gives every state a re-run can meet', () => {
    const reached = new Set([null, ...current].flatMap((status) => [false, true].map((paidOut) => payDateStateOf({ currentSnapshotStatus: status, paidOut }))));
    expect([...reached].sort()).toEqual([...PAY_DATE_STATES].sort());
  });
});

describe('rerunConfirmationQuestion', () => {
  it('names the pay date and what has happened to its money', () => {
    expect(rerunConfirmationQuestion('p-1', '2026-11-27', 'paid_out')).toBe(
      'payroll p-1 pay date 2026-11-27 is paid out: its collections have gone to billers; a re-run would change what payroll is asked for after the money has moved, so it needs confirming',
    );
    expect(rerunConfirmationQuestion('p-1', '2026-11-27', 'reconciled')).toContain('is reconciled: every deduction payroll reported has been allocated');
  });
});
