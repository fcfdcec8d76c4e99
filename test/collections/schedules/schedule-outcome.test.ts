import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import type { MandateStatus, PaymentStatus, ScheduleStatus } from '../../../src/platform/db/tables.ts';
import { MANDATE_STATUSES } from '../../../src/collections/mandates/mandate-transitions.ts';
import { MANDATE_STATUSES_ENDING_COLLECTION } from '../../../src/collections/mandates/mandate-limitations.ts';
import { PAYMENT_STATUSES } from '../../../src/collections/payments/payment-transitions.ts';
import { SCHEDULE_LIFECYCLE } from '../../../src/collections/schedules/schedule-transitions.ts';
import { SCHEDULE_STATUS_REASONS, SCHEDULE_STATUSES } from '../../../src/collections/schedules/schedule-resource.ts';
import {
  ENDED_MANDATE_STATUSES,
  SCHEDULE_STATUS_OF_REASON,
  scheduleOutcome,
  scheduleOutcomeOfBillerCancel,
  scheduleOutcomeOfRefusal,
  type ScheduleOutcome,
} from '../../../src/collections/schedules/schedule-outcome.ts';

const active = (instalments: PaymentStatus[], mandateStatus: MandateStatus = 'active') => scheduleOutcome({ status: 'active', mandateStatus, instalments });

describe('scheduleOutcome', () => {
  // An active schedule on an active mandate: each status alone, and the combinations that decide.
  const TABLE: Array<[PaymentStatus[], ScheduleOutcome | null]> = [
    [[], null],
    [['pending'], null],
    [['instructed'], null],
    [['collected'], { status: 'completed', reason: 'all_instalments_collected' }],
    [['paid_out'], { status: 'completed', reason: 'all_instalments_collected' }],
    [['partially_collected'], { status: 'errored', reason: 'instalments_not_collected_in_full' }],
    [['failed'], { status: 'errored', reason: 'instalment_failed' }],
    [['cancelled'], { status: 'cancelled', reason: 'instalments_cancelled' }],
    [['collected', 'paid_out', 'collected'], { status: 'completed', reason: 'all_instalments_collected' }],
    [['collected', 'pending'], null],
    [['paid_out', 'instructed'], null],
    [['partially_collected', 'pending'], null],
    [['cancelled', 'instructed'], null],
    [['collected', 'partially_collected'], { status: 'errored', reason: 'instalments_not_collected_in_full' }],
    [['cancelled', 'partially_collected'], { status: 'errored', reason: 'instalments_not_collected_in_full' }],
    [['collected', 'cancelled'], { status: 'cancelled', reason: 'instalments_cancelled' }],
    [['cancelled', 'cancelled'], { status: 'cancelled', reason: 'instalments_cancelled' }],
    [['collected', 'paid_out', 'failed'], { status: 'errored', reason: 'instalment_failed' }],
    [['pending', 'failed', 'instructed'], { status: 'errored', reason: 'instalment_failed' }],
    [['cancelled', 'failed'], { status: 'errored', reason: 'instalment_failed' }],
    [['partially_collected', 'failed'], { status: 'errored', reason: 'instalment_failed' }],
  ];
  it.each(TABLE)('active with instalments %j -> %j', (instalments, outcome) => {
    expect(active(instalments)).toEqual(outcome);
  });

  it('names the mandate when the instalments left were cancelled and the mandate has ended', () => {
    expect(active(['cancelled', 'cancelled'], 'revoked')).toEqual({ status: 'cancelled', reason: 'mandate_revoked' });
    expect(active(['collected', 'cancelled'], 'revoked')).toEqual({ status: 'cancelled', reason: 'mandate_revoked' });
    expect(active(['cancelled'], 'expired')).toEqual({ status: 'cancelled', reason: 'mandate_ended' });
    expect(active(['cancelled'], 'failed')).toEqual({ status: 'cancelled', reason: 'mandate_ended' });
    expect(active(['cancelled'], 'suspended')).toEqual({ status: 'cancelled', reason: 'instalments_cancelled' });
    // A partial collection, a failure or an open instalment decides before the mandate does.
    expect(active(['cancelled', 'partially_collected'], 'revoked')).toEqual({ status: 'errored', reason: 'instalments_not_collected_in_full' });
    expect(active(['cancelled', 'failed'], 'revoked')).toEqual({ status: 'errored', reason: 'instalment_failed' });
    expect(active(['cancelled', 'instructed'], 'revoked')).toBeNull();
  });

  it.each(SCHEDULE_STATUSES.filter((s) => s !== 'active'))('a %s schedule never moves', (status) => {
    for (const instalments of [['failed'], ['collected'], ['paid_out', 'collected'], ['cancelled'], ['partially_collected'], ['pending'], []] as PaymentStatus[][]) {
      expect(scheduleOutcome({ status, mandateStatus: 'revoked', instalments })).toBeNull();
    }
  });

  // Every multiset of up to four instalment statuses, in every schedule status, on every mandate status.
  const multisets: PaymentStatus[][] = [[]];
  for (let size = 1; size <= 4; size++) {
    const grow = (from: number, prefix: PaymentStatus[]): void => {
      if (prefix.length === size) {
        multisets.push(prefix);
        return;
      }
      for (let i = from; i < PAYMENT_STATUSES.length; i++) grow(i, [...prefix, PAYMENT_STATUSES[i]!]);
    };
    grow(0, []);
  }

  /** The rule in words, written out again without the function's structure. */
  function expected(status: ScheduleStatus, mandateStatus: MandateStatus, instalments: PaymentStatus[]): ScheduleOutcome | null {
    const count = (s: PaymentStatus) => instalments.filter((i) => i === s).length;
    const open = count('pending') + count('instructed');
    const full = count('collected') + count('paid_out');
    if (status !== 'active' || instalments.length === 0) return null;
    if (count('failed') > 0) return { status: 'errored', reason: 'instalment_failed' };
    if (open > 0) return null;
    if (full === instalments.length) return { status: 'completed', reason: 'all_instalments_collected' };
    if (count('partially_collected') > 0) return { status: 'errored', reason: 'instalments_not_collected_in_full' };
    const reason = mandateStatus === 'revoked' ? 'mandate_revoked' : ['cancelled', 'expired', 'failed'].includes(mandateStatus) ? 'mandate_ended' : 'instalments_cancelled';
    return { status: 'cancelled', reason };
  }

  it('exhaustively (every schedule status, mandate status and multiset of up to four instalments) agrees with the rule in words', () => {
    expect(multisets).toHaveLength(1 + 7 + 28 + 84 + 210);
    let settled = 0;
    for (const status of SCHEDULE_STATUSES) {
      for (const mandateStatus of MANDATE_STATUSES) {
        for (const instalments of multisets) {
          const outcome = scheduleOutcome({ status, mandateStatus, instalments });
          expect(outcome, `${status} ${mandateStatus} ${instalments.join(',')}`).toEqual(expected(status, mandateStatus, instalments));
          if (outcome) settled++;
        }
      }
    }
    expect(settled).toBeGreaterThan(0);
  });

  it('every schedule settles: an active schedule with instalments settles exactly when none may still collect, or one failed', () => {
    for (const mandateStatus of MANDATE_STATUSES) {
      for (const instalments of multisets.filter((m) => m.length > 0)) {
        const open = instalments.some((s) => s === 'pending' || s === 'instructed');
        const outcome = scheduleOutcome({ status: 'active', mandateStatus, instalments });
        expect(outcome !== null, `${mandateStatus} ${instalments.join(',')}`).toBe(!open || instalments.includes('failed'));
      }
    }
  });

  it('every outcome is a move the schedule lifecycle allows, with the status its reason goes with', () => {
    for (const mandateStatus of MANDATE_STATUSES) {
      for (const instalments of multisets) {
        const outcome = scheduleOutcome({ status: 'active', mandateStatus, instalments });
        if (!outcome) continue;
        expect(SCHEDULE_LIFECYCLE.can('active', outcome.status)).toBe(true);
        expect(SCHEDULE_STATUS_OF_REASON[outcome.reason]).toBe(outcome.status);
      }
    }
  });

  it('property: the order of the instalments does not matter', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PAYMENT_STATUSES), { maxLength: 12 }),
        fc.constantFrom(...SCHEDULE_STATUSES),
        fc.constantFrom(...MANDATE_STATUSES),
        (instalments, status, mandateStatus) => {
          const outcome = scheduleOutcome({ status, mandateStatus, instalments });
          expect(scheduleOutcome({ status, mandateStatus, instalments: [...instalments].reverse() })).toEqual(outcome);
          expect(scheduleOutcome({ status, mandateStatus, instalments: [...instalments].sort() })).toEqual(outcome);
        },
      ),
    );
  });
});

describe('the other ways a schedule leaves active', () => {
  it('the lock errors an active schedule whose instalment it refuses, and nothing else', () => {
    expect(scheduleOutcomeOfRefusal('active')).toEqual({ status: 'errored', reason: 'instalment_refused' });
    for (const status of SCHEDULE_STATUSES.filter((s) => s !== 'active')) expect(scheduleOutcomeOfRefusal(status)).toBeNull();
  });

  it("the biller's cancel is cancelled_by_biller, a move allowed from active and errored", () => {
    const outcome = scheduleOutcomeOfBillerCancel();
    expect(outcome).toEqual({ status: 'cancelled', reason: 'cancelled_by_biller' });
    expect(SCHEDULE_LIFECYCLE.fromStatuses(outcome.status)).toEqual(['active', 'errored']);
  });
});

describe('the reasons', () => {
  it('the resource names exactly the reasons the rules give, each with one status', () => {
    expect([...SCHEDULE_STATUS_REASONS].sort()).toEqual(Object.keys(SCHEDULE_STATUS_OF_REASON).sort());
    expect(new Set(Object.values(SCHEDULE_STATUS_OF_REASON))).toEqual(new Set(['completed', 'errored', 'cancelled']));
  });

  it('a mandate has ended exactly when the mandate lifecycle says it stops collecting for good', () => {
    expect([...ENDED_MANDATE_STATUSES].sort()).toEqual([...MANDATE_STATUSES_ENDING_COLLECTION].sort());
  });
});
