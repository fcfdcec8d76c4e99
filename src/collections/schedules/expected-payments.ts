import type { PaymentRow } from '../payments/payment-resource.ts';
import { instalmentStillCollecting } from './schedule-outcome.ts';

/** What expectedPayments reads of each instalment (a payment request row). */
export type InstalmentForExpectation = Pick<PaymentRow, 'id' | 'instalment_number' | 'status' | 'amount' | 'collected_amount' | 'target_pay_date' | 'currency'>;

/**
 * What a schedule still expects to collect: one entry per instalment that may still collect (pending
 * or instructed, INSTALMENT_STATUSES_STILL_COLLECTING), in instalment order, on its target pay date,
 * for what is still owed of it (a shortfall carried from an earlier pay date keeps what that one
 * collected). Instalments that were answered or cancelled expect nothing more, so the list is empty
 * once none can collect: always for a completed schedule and for one settled by scheduleOutcome. An
 * errored or cancelled schedule may still list instalments payroll was already asked for (they run
 * their course) or, errored on a failure, those still to come: that money is still on its way.
 */
export function expectedPayments(instalments: readonly InstalmentForExpectation[]) {
  return instalments
    .filter((instalment) => instalmentStillCollecting(instalment.status))
    .sort((a, b) => (a.instalment_number ?? 0) - (b.instalment_number ?? 0))
    .map((instalment) => ({
      instalment_number: instalment.instalment_number!,
      payment_id: instalment.id,
      pay_date: instalment.target_pay_date,
      amount: instalment.amount - instalment.collected_amount,
      currency: instalment.currency,
    }));
}
