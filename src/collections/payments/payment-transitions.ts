import type { PaymentStatus } from '../../platform/db/tables.ts';
import { defineStatusTransitions, InvalidStatusTransitionError } from '../../platform/shared/status-transitions.ts';

// The payment request lifecycle as data, so routes, the lock, reconciliation and
// payouts all ask one table instead of each re-deciding which moves are legal: in TypeScript, and in the
// statements that move requests in bulk, whose status guards come from it (status-transitions-sql.ts).
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

export const PAYMENT_STATUSES = ['pending', 'instructed', 'collected', 'paid_out', 'cancelled', 'failed', 'partially_collected'] as const satisfies readonly PaymentStatus[];

/** The stored status (src/platform/db/tables.ts), with the lifecycle that moves it; the list above names exactly its values. */
export type { PaymentStatus };

export class InvalidTransitionError extends InvalidStatusTransitionError {
  override readonly name = 'InvalidTransitionError';

  constructor(from: string, to: string) {
    super('A payment request', from, to);
  }
}

export const PAYMENT_REQUEST_LIFECYCLE = defineStatusTransitions<PaymentStatus>({
  resource: 'A payment request',
  statuses: PAYMENT_STATUSES,
  transitions: {
    pending: ['instructed', 'cancelled', 'collected', 'partially_collected', 'failed'],
    instructed: ['pending', 'collected', 'partially_collected', 'failed'],
    collected: ['paid_out', 'pending', 'partially_collected', 'failed'],
    partially_collected: ['collected', 'pending', 'failed'],
    failed: ['collected', 'partially_collected', 'pending'],
    paid_out: ['collected', 'partially_collected', 'pending', 'failed'],
    cancelled: [],
  },
  invalid: (from, to) => new InvalidTransitionError(from, to),
});

export const PAYMENT_TRANSITIONS = PAYMENT_REQUEST_LIFECYCLE.transitions;

/** False for unknown statuses too, since statuses read from storage are only typed, not checked. */
export const canTransition = PAYMENT_REQUEST_LIFECYCLE.can;
export const assertTransition = PAYMENT_REQUEST_LIFECYCLE.assert;
export const isTerminalPaymentStatus = PAYMENT_REQUEST_LIFECYCLE.isTerminal;

/** What cancelling moves, one request or every one of a schedule or mandate: pending, per the table. */
export const CANCELLABLE_PAYMENT_STATUSES = PAYMENT_REQUEST_LIFECYCLE.fromStatuses('cancelled');
