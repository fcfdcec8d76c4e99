import type { AttemptOutcome } from '../../platform/db/tables.ts';

// Reconciliation (docs/finance.md, *Deductions in, reconciliation, ledger and payouts*), per payment request and pay date, once payroll's deduction has been
// allocated: what the attempt's outcome is and where the payment request goes next.

/** A shortfall is carried only while fewer than this many attempts have been made. */
export const MAX_COLLECTION_ATTEMPTS = 3;

export interface CollectionOutcomeInput {
  /** The payment request's full amount. */
  amount: number;
  /** What the payment's other attempts (other pay dates) have collected. */
  collectedElsewhere: number;
  /** Asked of payroll for it on this pay date, never more than the amount still outstanding. */
  requested: number;
  /** The share of the employee's deduction allocated to it. */
  allocated: number;
  attemptNumber: number;
  allowPostDueDateDeduction: boolean;
  mandateActive: boolean;
  /** The payroll's first pay date after this one that can still take requests; null when none is. */
  nextOpenPayDate: string | null;
  /**
   * Where an earlier reconciliation of this attempt carried the shortfall. A carry is not undone
   * while the shortfall remains: the next pay date may already have instructed it.
   */
  previouslyCarriedTo: string | null;
}

export type ReconciledPaymentStatus = 'collected' | 'pending' | 'failed' | 'partially_collected';

export interface CollectionOutcome {
  outcome: AttemptOutcome;
  shortfall: number;
  carriedToPayDate: string | null;
  paymentStatus: ReconciledPaymentStatus;
  /** The pay date a payment moving back to pending waits for; null for the other statuses. */
  targetPayDate: string | null;
}

function assertMinorUnits(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer, got ${String(value)}`);
}

export function decideCollectionOutcome(input: CollectionOutcomeInput): CollectionOutcome {
  const { amount, collectedElsewhere, requested, allocated } = input;
  assertMinorUnits(amount, 'amount');
  assertMinorUnits(collectedElsewhere, 'collectedElsewhere');
  assertMinorUnits(requested, 'requested');
  assertMinorUnits(allocated, 'allocated');
  if (allocated > requested) throw new RangeError(`allocated ${allocated} exceeds requested ${requested}`);
  if (collectedElsewhere + requested > amount) {
    throw new RangeError(`requested ${requested} on top of ${collectedElsewhere} collected exceeds the amount ${amount}`);
  }

  const shortfall = requested - allocated;
  const collectedInTotal = collectedElsewhere + allocated;
  const outstanding = amount - collectedInTotal;

  if (shortfall === 0) {
    if (outstanding === 0) return { outcome: 'collected', shortfall, carriedToPayDate: null, paymentStatus: 'collected', targetPayDate: null };
    // Payroll deducted everything asked, but a mandate limitation asked for less than the whole
    // amount: the rest was never requested, so it is not a failed attempt and waits for the next
    // pay date like any pending request.
    if (input.mandateActive && input.nextOpenPayDate !== null) {
      return { outcome: 'collected', shortfall, carriedToPayDate: null, paymentStatus: 'pending', targetPayDate: input.nextOpenPayDate };
    }
    return { outcome: 'collected', shortfall, carriedToPayDate: null, paymentStatus: 'partially_collected', targetPayDate: null };
  }

  if (input.previouslyCarriedTo !== null) {
    return { outcome: 'carried', shortfall, carriedToPayDate: input.previouslyCarriedTo, paymentStatus: 'pending', targetPayDate: input.previouslyCarriedTo };
  }
  const mayCarry = input.allowPostDueDateDeduction && input.mandateActive && input.attemptNumber < MAX_COLLECTION_ATTEMPTS && input.nextOpenPayDate !== null;
  if (mayCarry) {
    return { outcome: 'carried', shortfall, carriedToPayDate: input.nextOpenPayDate, paymentStatus: 'pending', targetPayDate: input.nextOpenPayDate };
  }
  if (collectedInTotal === 0) return { outcome: 'failed', shortfall, carriedToPayDate: null, paymentStatus: 'failed', targetPayDate: null };
  return { outcome: 'partially_collected', shortfall, carriedToPayDate: null, paymentStatus: 'partially_collected', targetPayDate: null };
}
