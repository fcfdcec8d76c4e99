import type { z } from 'zod';
import type { paymentInformationSchema } from '../../directory/payroll-providers/reference-schemas.ts';
import { toMajorUnits } from '../../platform/money/major-units.ts';

/** One `requested_payments` item of the interface: a payment with its reference, amount (major units) and account. */
type RequestedPaymentItem = { payment_information: z.infer<typeof paymentInformationSchema> };

/** A payment a snapshot asks the employer to make (a `requested_payments` row): minor units beside the currency. */
export interface SnapshotRequestedPayment {
  payment_reference: string;
  payment_amount: number;
  currency: string;
  account_number: string;
  sort_code: string;
  account_holder_name: string;
}

/**
 * A snapshot's requested payment as the interface writes it, for the data response and the
 * employee push alike, so the two show one reference, one account and amounts in the same units:
 * the wire's amounts are numbers in major units (75 is GBP 75.00).
 */
export function requestedPaymentItem(payment: SnapshotRequestedPayment, amountMinor: number = payment.payment_amount): RequestedPaymentItem {
  return {
    payment_information: {
      payment_reference: payment.payment_reference,
      payment_amount: toMajorUnits(amountMinor, payment.currency),
      payment_account: {
        account_number: payment.account_number,
        sort_code: payment.sort_code,
        account_holder_name: payment.account_holder_name,
      },
    },
  };
}

/**
 * An employee's part of the payments a snapshot asks for, as their push carries it. The employer
 * pays a pay date's deductions in one transfer to the collection account, under the remittance
 * reference (the data response's `requested_payments`); an employee's deduction travels in it. So
 * the push names that same payment (reference and account), for the employee's own amount: the
 * `requested_deduction_amount` the data response gives them. Added up over every employee of the
 * snapshot, the parts are the data response's payment. An employee the snapshot deducts nothing
 * from (a stop) has no part of it: [].
 *
 * The lock writes at most one requested payment per snapshot; with several, which one carries an
 * employee would be a guess, so it refuses rather than send a provider a made-up split.
 */
export function employeeRequestedPayments(line: { requested_amount: number; currency: string } | null, payments: readonly SnapshotRequestedPayment[]): RequestedPaymentItem[] {
  if (line === null || line.requested_amount === 0 || payments.length === 0) return [];
  if (payments.length > 1) {
    throw new Error(`a snapshot asks for ${payments.length} payments (${payments.map((p) => p.payment_reference).join(', ')}); an employee's part of each is not defined`);
  }
  const [payment] = payments as [SnapshotRequestedPayment];
  if (payment.currency !== line.currency) {
    throw new Error(`the deduction is in ${line.currency} but payment ${payment.payment_reference} is in ${payment.currency}`);
  }
  return [requestedPaymentItem(payment, line.requested_amount)];
}
