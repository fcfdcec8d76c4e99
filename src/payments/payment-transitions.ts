// The payment request lifecycle of DESIGN.md section 3 as data, so routes, the lock, reconciliation and
// payouts all ask one table instead of each re-deciding which moves are legal.
//
// Two kinds of move are allowed:
//  - forward: pending -> instructed (lock) -> collected (reconciled in full) -> paid_out (payout made);
//    pending -> cancelled (biller or mandate revocation, only before the lock: the employer already has
//    an instructed amount, so cancelling after it would be a lie, and the API answers 409);
//    instructed -> pending (shortfall carried) | failed | partially_collected (reconciled short).
//  - corrections: payroll may push a higher `version` for a pay date, and an operator may re-run it, so an
//    outcome of reconciliation is never final. Re-reconciling the same attempt may move a request between
//    any two outcomes: collected, partially_collected, failed and pending (carried). The ledger posts the
//    reversal and the new entry; the status just follows the latest answer.
//
// Deliberate refusals:
//  - partially_collected -> paid_out: paid_out claims the whole amount reached the biller. A partial
//    collection's payout is tracked in paid_out_amount while the status keeps telling the biller it is
//    short (they must chase the rest).
//  - collected -> instructed (and any outcome -> instructed except via pending): a request is instructed
//    only by a lock, and a lock only selects pending requests; carrying goes through pending first.
//  - anything -> cancelled except from pending: once instructed, money may already be leaving the
//    employee's pay.
//  - cancelled is the only terminal state. Late corrections for an earlier attempt of a cancelled
//    request are money-only (ledger entries), the cancellation stands.
//  - failed is NOT terminal: a later push version can show the employer did deduct after all, and that
//    money has to be collected and paid out.
//  - self-transitions are not transitions: re-reconciling to the same outcome changes no status, emits no
//    event, and callers skip the update.
//
// Moves out of paid_out exist because the ledger keeps them honest: a correction after payout (a later
// version shows less was deducted) is clawed back as a collection_reversed item in the next payout, and a
// payout the bank rejects (payout failed) returns its payments to collected so the next payout retries.
// Moves from pending to an outcome re-reconcile a carried attempt (attempts >= 1) before the next lock
// picks it up; this table cannot see attempts, the reconciliation code only makes them for such requests.

export const PAYMENT_STATUSES = [
  'pending',
  'instructed',
  'collected',
  'paid_out',
  'cancelled',
  'failed',
  'partially_collected',
] as const;

export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = Object.freeze({
  pending: Object.freeze(['instructed', 'cancelled', 'collected', 'partially_collected', 'failed'] as const),
  instructed: Object.freeze(['pending', 'collected', 'partially_collected', 'failed'] as const),
  collected: Object.freeze(['paid_out', 'pending', 'partially_collected', 'failed'] as const),
  partially_collected: Object.freeze(['collected', 'pending', 'failed'] as const),
  failed: Object.freeze(['collected', 'partially_collected', 'pending'] as const),
  paid_out: Object.freeze(['collected', 'partially_collected', 'pending', 'failed'] as const),
  cancelled: Object.freeze([] as const),
});

export class InvalidTransitionError extends Error {
  override readonly name = 'InvalidTransitionError';
  readonly from: string;
  readonly to: string;

  constructor(from: string, to: string) {
    super(`A payment request cannot move from ${from} to ${to}`);
    this.from = from;
    this.to = to;
  }
}

function isPaymentStatus(value: string): value is PaymentStatus {
  return (PAYMENT_STATUSES as readonly string[]).includes(value);
}

/** False for unknown statuses too, since statuses read from storage are only typed, not checked. */
export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  if (!isPaymentStatus(from) || !isPaymentStatus(to)) return false;
  return PAYMENT_TRANSITIONS[from].includes(to);
}

export function assertTransition(from: PaymentStatus, to: PaymentStatus): void {
  if (!canTransition(from, to)) throw new InvalidTransitionError(from, to);
}

export function isTerminalPaymentStatus(status: PaymentStatus): boolean {
  return isPaymentStatus(status) && PAYMENT_TRANSITIONS[status].length === 0;
}
