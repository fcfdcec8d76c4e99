import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import type { PaymentStatus } from '../../../src/platform/db/tables.ts';
import { PAYMENT_STATUSES } from '../../../src/collections/payments/payment-transitions.ts';
import { SCHEDULE_STATUSES } from '../../../src/collections/schedules/schedule-resource.ts';
import { scheduleOutcome } from '../../../src/collections/schedules/schedule-outcome.ts';

describe('scheduleOutcome', () => {
  // An active schedule: each status alone, and the combinations that decide.
  const TABLE: Array<[PaymentStatus[], 'errored' | 'completed' | null]> = [
    [[], null],
    [['pending'], null],
    [['instructed'], null],
    [['collected'], 'completed'],
    [['paid_out'], 'completed'],
    [['partially_collected'], null],
    [['failed'], 'errored'],
    [['cancelled'], null],
    [['collected', 'paid_out', 'collected'], 'completed'],
    [['collected', 'pending'], null],
    [['paid_out', 'instructed'], null],
    [['collected', 'partially_collected'], null],
    [['collected', 'cancelled'], null],
    [['collected', 'paid_out', 'failed'], 'errored'],
    [['pending', 'failed', 'instructed'], 'errored'],
    [['cancelled', 'failed'], 'errored'],
    [['partially_collected', 'failed'], 'errored'],
  ];
  it.each(TABLE)('active with instalments %j -> %j', (instalments, outcome) => {
    expect(scheduleOutcome('active', instalments)).toBe(outcome);
  });

  it.each(SCHEDULE_STATUSES.filter((s) => s !== 'active'))('a %s schedule never moves', (status) => {
    for (const instalments of [['failed'], ['collected'], ['paid_out', 'collected'], ['pending'], []] as PaymentStatus[][]) {
      expect(scheduleOutcome(status, instalments)).toBeNull();
    }
  });

  // Every multiset of up to three instalment statuses, in every schedule status.
  const multisets: PaymentStatus[][] = [[]];
  for (let size = 1; size <= 3; size++) {
    const grow = (from: number, prefix: PaymentStatus[]): void => {
      if (prefix.length === size) {
        multisets.push(prefix);
        return;
      }
      for (let i = from; i < PAYMENT_STATUSES.length; i++) grow(i, [...prefix, PAYMENT_STATUSES[i]!]);
    };
    grow(0, []);
  }

  it('exhaustively (every schedule status, every multiset of up to three instalments) agrees with the rule in words', () => {
    expect(multisets).toHaveLength(1 + 7 + 28 + 84);
    for (const status of SCHEDULE_STATUSES) {
      for (const instalments of multisets) {
        const settled = instalments.length > 0 && instalments.every((s) => s === 'collected' || s === 'paid_out');
        const expected = status !== 'active' ? null : instalments.includes('failed') ? 'errored' : settled ? 'completed' : null;
        expect(scheduleOutcome(status, instalments), `${status} ${instalments.join(',')}`).toBe(expected);
      }
    }
  });

  it('property: the order of the instalments does not matter', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PAYMENT_STATUSES), { maxLength: 12 }), fc.constantFrom(...SCHEDULE_STATUSES), (instalments, status) => {
        expect(scheduleOutcome(status, [...instalments].reverse())).toBe(scheduleOutcome(status, instalments));
        expect(scheduleOutcome(status, [...instalments].sort())).toBe(scheduleOutcome(status, instalments));
      }),
    );
  });
});
