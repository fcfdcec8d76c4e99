import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import type { PaymentStatus } from '../../../src/platform/db/tables.ts';
import { PAYMENT_STATUSES } from '../../../src/collections/payments/payment-transitions.ts';
import { expectedPayments, type InstalmentForExpectation } from '../../../src/collections/schedules/expected-payments.ts';
import { scheduleOutcome } from '../../../src/collections/schedules/schedule-outcome.ts';
import { expectedPaymentSchema } from '../../../src/collections/schedules/schedule-resource.ts';

function instalment(instalmentNumber: number, status: PaymentStatus, amount = 1_000, collected = 0): InstalmentForExpectation {
  return {
    id: `00000000-0000-7000-8000-${String(instalmentNumber).padStart(12, '0')}`,
    instalment_number: instalmentNumber,
    status,
    amount,
    collected_amount: collected,
    target_pay_date: `2027-0${instalmentNumber}-28`,
    currency: 'GBP',
  };
}

describe('expectedPayments', () => {
  it('lists the instalments that may still collect, in instalment order, with what is still owed of each', () => {
    const instalments = [
      instalment(3, 'pending', 1_000),
      instalment(1, 'collected', 1_000, 1_000),
      // A shortfall carried from an earlier pay date: 250 of it was collected there.
      instalment(2, 'pending', 1_000, 250),
      instalment(4, 'instructed', 2_000),
      instalment(5, 'cancelled'),
    ];
    const expected = expectedPayments(instalments);
    expect(expected).toEqual([
      { instalment_number: 2, payment_id: instalments[2]!.id, pay_date: '2027-02-28', amount: 750, currency: 'GBP' },
      { instalment_number: 3, payment_id: instalments[0]!.id, pay_date: '2027-03-28', amount: 1_000, currency: 'GBP' },
      { instalment_number: 4, payment_id: instalments[3]!.id, pay_date: '2027-04-28', amount: 2_000, currency: 'GBP' },
    ]);
    for (const entry of expected) expect(expectedPaymentSchema.parse(entry)).toEqual(entry);
    // The input keeps its order.
    expect(instalments.map((i) => i.instalment_number)).toEqual([3, 1, 2, 4, 5]);
  });

  it.each(PAYMENT_STATUSES)('an instalment %s is expected exactly when it is pending or instructed', (status) => {
    expect(expectedPayments([instalment(1, status)])).toHaveLength(status === 'pending' || status === 'instructed' ? 1 : 0);
  });

  it('property: a schedule the rule settles (but on a failure) expects nothing more', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PAYMENT_STATUSES), { minLength: 1, maxLength: 8 }), (statuses) => {
        const outcome = scheduleOutcome({ status: 'active', mandateStatus: 'active', instalments: statuses });
        const expected = expectedPayments(statuses.map((status, i) => instalment(i + 1, status)));
        if (outcome && outcome.reason !== 'instalment_failed') expect(expected).toEqual([]);
        if (!outcome) expect(expected.length).toBeGreaterThan(0);
      }),
    );
  });
});
