import { describeActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database } from '../../platform/db/connection.ts';
import type { SetAsideCategory } from '../../platform/db/tables.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { findCreditForUpdate, setCreditState } from './matching-repository.ts';
import { advisoryLockCash } from './remittance-repository.ts';

// A person's decisions about a credit no rule placed. Setting a credit aside says it is no remittance
// (bank interest, money to return to its sender...), so the exceptions queue can be emptied without
// inventing a match; restoring it, or releasing one held for a conflict, gives it back to the rules.
// Each is audited with its reason, and no rule ever undoes one.

export const SET_ASIDE_CATEGORIES = ['not_a_remittance', 'bank_interest', 'returned_to_sender', 'duplicate', 'other'] as const satisfies readonly SetAsideCategory[];

function requiredReason(reason: string, what: string): string {
  const trimmed = reason.trim();
  if (trimmed.length === 0) throw new InvalidError('decision-invalid', `${what} needs a reason`);
  return trimmed;
}

/** The credit's unmatched money is no remittance: it leaves the queue, and no rule will match it. Its live matches stay. */
export async function setCreditAside(db: Database, actor: Actor, request: { creditId: string; category: SetAsideCategory; reason: string }) {
  if (!isUuid(request.creditId)) throw new NotFoundError(`Bank credit ${request.creditId}`);
  const reason = requiredReason(request.reason, 'setting a credit aside');
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    const credit = await findCreditForUpdate(trx, request.creditId);
    if (!credit) throw new NotFoundError(`Bank credit ${request.creditId}`);
    if (credit.state === 'reversed')
      throw new ConflictError('credit-reversed', 'the bank took this credit back: there is nothing to set aside', { members: { state: credit.state } });
    if (credit.state === 'set_aside')
      throw new ConflictError('credit-already-set-aside', `the credit is already set aside (${credit.set_aside_category})`, { members: { state: credit.state } });
    const updated = await setCreditState(trx, credit.id, { state: 'set_aside', reason, category: request.category, by: describeActor(actor) });
    await recordAction(trx, {
      actor,
      action: 'bank_credit.set_aside',
      resourceType: 'bank_credit',
      resourceId: credit.id,
      reason,
      before: { state: credit.state, state_reason: credit.state_reason },
      after: { state: 'set_aside', category: request.category, unmatched_amount: credit.amount - credit.matched_amount },
    });
    return updated;
  });
}

/** A credit set aside, or held for a conflict or as a returned payment, goes back to the rules and the queue. */
export async function restoreCredit(db: Database, actor: Actor, request: { creditId: string; reason: string }) {
  if (!isUuid(request.creditId)) throw new NotFoundError(`Bank credit ${request.creditId}`);
  const reason = requiredReason(request.reason, 'restoring a credit');
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    const credit = await findCreditForUpdate(trx, request.creditId);
    if (!credit) throw new NotFoundError(`Bank credit ${request.creditId}`);
    if (credit.state !== 'set_aside' && credit.state !== 'held') {
      throw new ConflictError('credit-not-restorable', `the credit is ${credit.state}: only a credit set aside or held can be restored`, { members: { state: credit.state } });
    }
    const updated = await setCreditState(trx, credit.id, { state: 'open', reason, category: null, by: describeActor(actor) });
    await recordAction(trx, {
      actor,
      action: 'bank_credit.restored',
      resourceType: 'bank_credit',
      resourceId: credit.id,
      reason,
      before: { state: credit.state, category: credit.set_aside_category, state_reason: credit.state_reason },
      after: { state: 'open' },
    });
    return updated;
  });
}
