import { describe, expect, expectTypeOf, it } from 'vitest';
import type { PayoutsTable } from '../../../src/platform/db/tables.ts';
import { canSettlePayout } from '../../../src/settlement/payouts/payout-service.ts';
import { PAYOUT_LIFECYCLE, type PayoutStatus } from '../../../src/settlement/payouts/payout-transitions.ts';
import { InvalidStatusTransitionError } from '../../../src/platform/shared/status-transitions.ts';
import type { Selectable } from 'kysely';

// Rows: from. Columns: to, in this order. 1 = allowed. Written out by hand: a payout is settled once,
// from the bank's answer; independently of the table in payout-transitions.ts.
const COLUMNS = ['pending', 'paid', 'failed'] as const;
const EXPECTED: Record<PayoutStatus, readonly (0 | 1)[]> = {
  //       pend paid fail
  pending: [0, 1, 1],
  paid: [0, 0, 0],
  failed: [0, 0, 0],
};

const PAIRS = COLUMNS.flatMap((from) => COLUMNS.map((to, column) => [from, to, EXPECTED[from][column] === 1] as const));

describe('payout transitions', () => {
  it('status set matches the stored payout status type and the expected table', () => {
    expectTypeOf<PayoutStatus>().toEqualTypeOf<Selectable<PayoutsTable>['status']>();
    expect([...PAYOUT_LIFECYCLE.statuses].sort()).toEqual([...COLUMNS].sort());
    expect(Object.keys(PAYOUT_LIFECYCLE.transitions).sort()).toEqual([...COLUMNS].sort());
    expect(PAIRS).toHaveLength(9);
  });

  it.each(PAIRS)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(PAYOUT_LIFECYCLE.can(from, to)).toBe(allowed);
    if (allowed) expect(() => PAYOUT_LIFECYCLE.assert(from, to)).not.toThrow();
    else expect(() => PAYOUT_LIFECYCLE.assert(from, to)).toThrow(InvalidStatusTransitionError);
    if (to !== 'pending') expect(canSettlePayout(from, to)).toBe(allowed);
  });

  it('the error names the payout and both ends', () => {
    expect(() => PAYOUT_LIFECYCLE.assert('failed', 'paid')).toThrow('A payout cannot move from failed to paid');
  });

  it('paid and failed are terminal', () => {
    expect(COLUMNS.filter(PAYOUT_LIFECYCLE.isTerminal)).toEqual(['paid', 'failed']);
  });
});
