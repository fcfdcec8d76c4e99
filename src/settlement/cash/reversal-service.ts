import { describeActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import type { RemittanceStatus } from '../../platform/db/tables.ts';
import { recordEvents } from '../../platform/events/outbox.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import type { StatementEntry } from './bank-statement.ts';
import { reversedCredit, type KnownCredit } from './credit-identity.ts';
import { fundedAndPaidOut, listPayDatesOfPayout, unfundDownTo } from './funding-repository.ts';
import { findCreditForUpdate, listLiveMatchesOfCreditForUpdate, markUnmatched, setCreditState } from './matching-repository.ts';
import { advisoryLockCash, rowLockRemittances, updateReceived } from './remittance-repository.ts';
import { remittanceEvents, type RemittanceEventSubject, type RemittancePolicy } from './remittance-service.ts';
import { remittanceShortfall, remittanceStatus } from './remittance-status.ts';
import { findUnresolvedReversalForUpdate, listReversibleCredits, markReversalResolved } from './statement-repository.ts';

// A bank takes a credit back (a reversal, RvslInd, or a return): the money it brought is no longer
// ours. What it funded is un-funded; what was already paid out of it to billers becomes the pay
// date's shortfall, owed back and shown (status 'shortfall', the three-way report, the console), and
// the billers whose collections the pay date carries are told (remittance.reversed). Never a silent
// loss, and never a negative payout: nothing already paid is touched.

/** How far back a reversal looks for the credit it takes back: banks return a payment within weeks. */
export const REVERSAL_WINDOW_DAYS = 120;

export interface ReversalResult {
  /** The credit taken back, or null when the reversal waits for a person (detail says why). */
  creditId: string | null;
  detail: string;
}

export interface ReversalOutcome {
  results: ReversalResult[];
  applied: number;
  unresolved: number;
  /** Minor units newly owed back across the pay dates the reversals touched. */
  shortfall: number;
}

const daysBefore = (date: string, days: number) => {
  const instant = new Date(`${date}T00:00:00Z`);
  instant.setUTCDate(instant.getUTCDate() - days);
  return instant.toISOString().slice(0, 10);
};

/**
 * The statement's reversals, in file order: each finds the credit it takes back (reversedCredit,
 * credit-identity.ts) among the account's credits, the ones this import stored included, and reverses
 * it. Call inside the cash advisory lock, after the import stored its credits.
 */
export async function applyReversals(
  trx: Executor,
  policy: RemittancePolicy,
  reversals: ReadonlyArray<{ entry: StatementEntry; statementId: string; collectionAccountId: string }>,
  actor: Actor,
): Promise<ReversalOutcome> {
  const outcome: ReversalOutcome = { results: [], applied: 0, unresolved: 0, shortfall: 0 };
  const candidatesOf = await reversibleCreditsByAccount(trx, reversals);
  const reversedNow = new Set<string>();
  for (const { entry, collectionAccountId } of reversals) {
    const since = daysBefore(entry.bookingDate, REVERSAL_WINDOW_DAYS);
    const candidates = (candidatesOf.get(collectionAccountId) ?? []).filter((credit) => credit.bookingDate >= since && !reversedNow.has(credit.id));
    const verdict = reversedCredit(entry, candidates);
    if (verdict.creditId === null) {
      outcome.results.push({ creditId: null, detail: `waits for a person: ${verdict.detail}` });
      outcome.unresolved += 1;
      continue;
    }
    reversedNow.add(verdict.creditId);
    const reason = `reversed by the bank: entry ${entry.bankReference} booked ${entry.bookingDate}${entry.returnReason ? ` (return reason ${entry.returnReason})` : ''}`;
    outcome.shortfall += await reverseCredit(trx, policy, verdict.creditId, actor, reason);
    outcome.results.push({ creditId: verdict.creditId, detail: verdict.detail });
    outcome.applied += 1;
  }
  return outcome;
}

/**
 * The credits each account's reversals could take back, one read per account for the whole import (a
 * bank returning a batch books many reversals at once): of their amounts, within the window before the
 * latest of them. Each reversal then keeps those of its own amount and window (reversedCredit).
 */
async function reversibleCreditsByAccount(
  trx: Executor,
  reversals: ReadonlyArray<{ entry: StatementEntry; collectionAccountId: string }>,
): Promise<Map<string, KnownCredit[]>> {
  const byAccount = new Map<string, StatementEntry[]>();
  for (const { entry, collectionAccountId } of reversals) byAccount.set(collectionAccountId, [...(byAccount.get(collectionAccountId) ?? []), entry]);
  const credits = new Map<string, KnownCredit[]>();
  for (const [collectionAccountId, entries] of byAccount) {
    const dates = entries.map((entry) => entry.bookingDate).sort();
    const amounts = [...new Set(entries.map((entry) => entry.amount))];
    credits.set(collectionAccountId, await listReversibleCredits(trx, collectionAccountId, amounts, daysBefore(dates[0]!, REVERSAL_WINDOW_DAYS), dates.at(-1)!));
  }
  return credits;
}

/**
 * Takes a credit back: every live match of it is unmatched (stamped, kept as history), each pay date
 * it paid loses that money, entries funded by it and not yet paid out lose their funding, and what was
 * already paid out beyond what is left becomes the pay date's shortfall. Returns the minor units newly owed back.
 */
async function reverseCredit(trx: Executor, policy: RemittancePolicy, creditId: string, actor: Actor, reason: string): Promise<number> {
  const by = describeActor(actor);
  const credit = await findCreditForUpdate(trx, creditId);
  if (!credit || credit.state === 'reversed') return 0;
  const matches = await listLiveMatchesOfCreditForUpdate(trx, creditId);
  for (const match of matches) await markUnmatched(trx, { id: match.id, creditId, amount: match.amount }, by, reason);
  const taken = new Map<string, { payrollId: string; payDate: string; amount: number }>();
  for (const match of matches) {
    const key = `${match.payroll_id}/${match.pay_date}`;
    const total = taken.get(key) ?? { payrollId: match.payroll_id, payDate: match.pay_date, amount: 0 };
    total.amount += match.amount;
    taken.set(key, total);
  }
  const locked = await rowLockRemittances(trx, [...taken.values()]);
  const changes: Array<{ id: string; delta: number; shortfall: number; status: RemittanceStatus }> = [];
  const reversed: RemittanceEventSubject[] = [];
  let newlyOwed = 0;
  for (const remittance of locked) {
    const amount = taken.get(`${remittance.payroll_id}/${remittance.pay_date}`)!.amount;
    const received = remittance.received - amount;
    const { paid_out: paidOut } = await fundedAndPaidOut(trx, remittance.payroll_id, remittance.pay_date);
    await unfundDownTo(trx, remittance.payroll_id, remittance.pay_date, received);
    const shortfall = remittanceShortfall({ paidOut, received });
    newlyOwed += Math.max(0, shortfall - remittance.shortfall);
    const status = remittanceStatus({ expected: remittance.expected, received, dueDate: remittance.due_date, today: policy.today, shortfall });
    changes.push({ id: remittance.id, delta: -amount, shortfall, status });
    reversed.push({ id: remittance.id, payrollId: remittance.payroll_id, payDate: remittance.pay_date, status, dueDate: remittance.due_date });
  }
  await updateReceived(trx, changes);
  await recordEvents(trx, await remittanceEvents(trx, 'remittance.reversed', reversed));
  await setCreditState(trx, creditId, { state: 'reversed', reason, category: null, by });
  await recordAction(trx, {
    actor,
    action: 'bank_credit.reversed',
    resourceType: 'bank_credit',
    resourceId: creditId,
    reason,
    before: { state: credit.state, matched_amount: credit.matched_amount },
    after: { remittances: changes.map(({ id, delta, shortfall, status }) => ({ id, received_change: delta, shortfall, status })) },
  });
  return newlyOwed;
}

/**
 * A person's answer to a reversal no rule could place: this credit is the one the bank took back.
 * The credit must be of the reversal's amount and not already reversed.
 */
export async function resolveReversal(db: Database, actor: Actor, policy: RemittancePolicy, request: { entryId: string; creditId: string; reason: string }) {
  if (!isUuid(request.entryId)) throw new NotFoundError(`Statement entry ${request.entryId}`);
  if (!isUuid(request.creditId)) throw new NotFoundError(`Bank credit ${request.creditId}`);
  const reason = request.reason.trim();
  if (reason.length === 0) throw new InvalidError('reversal-invalid', 'placing a reversal needs a reason');
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    const entry = await findUnresolvedReversalForUpdate(trx, request.entryId);
    if (!entry) throw new NotFoundError(`Unresolved reversal ${request.entryId}`);
    const credit = await findCreditForUpdate(trx, request.creditId);
    if (!credit) throw new NotFoundError(`Bank credit ${request.creditId}`);
    if (credit.collection_account_id !== entry.collection_account_id)
      throw new InvalidError('reversal-invalid', 'the credit is of another collection account than the reversal');
    if (credit.state === 'reversed') throw new ConflictError('credit-already-reversed', 'the bank already took this credit back');
    if (credit.amount !== entry.amount) {
      const money = (minor: number) => formatMoney(minor, credit.currency);
      throw new InvalidError('reversal-invalid', `the reversal is of ${money(entry.amount)}, the credit of ${money(credit.amount)}`);
    }
    const shortfall = await reverseCredit(trx, policy, credit.id, actor, `reversed by the bank (placed by a person): entry ${entry.bank_reference}; ${reason}`);
    await markReversalResolved(trx, entry.id, credit.id, describeActor(actor));
    await recordAction(trx, {
      actor,
      action: 'bank_reversal.placed',
      resourceType: 'bank_statement_entry',
      resourceId: entry.id,
      reason,
      after: { bank_credit_id: credit.id, shortfall },
    });
    return { entryId: entry.id, creditId: credit.id, currency: credit.currency, shortfall };
  });
}

/**
 * After a payout failed: the pay dates it paid from have paid out less. Their entries, back in the
 * unpaid pool, keep their funding only as far as what was received covers them (after a reversal there
 * may be nothing left to pay them with), and what is owed back shrinks to what is still paid out beyond
 * what was received. Call in the failing transaction. The status is recomputed for `today` (the next
 * refresh of the remittances recomputes it on the service's own day).
 */
export async function reassessPayDatesOfFailedPayout(trx: Executor, payoutId: string, today: string): Promise<void> {
  const payDates = await listPayDatesOfPayout(trx, payoutId);
  const locked = await rowLockRemittances(trx, payDates);
  const changes: Array<{ id: string; delta: number; shortfall: number; status: RemittanceStatus }> = [];
  for (const remittance of locked) {
    const { paid_out: paidOut } = await fundedAndPaidOut(trx, remittance.payroll_id, remittance.pay_date);
    await unfundDownTo(trx, remittance.payroll_id, remittance.pay_date, remittance.received);
    const shortfall = Math.min(remittance.shortfall, remittanceShortfall({ paidOut, received: remittance.received }));
    if (shortfall === remittance.shortfall) continue;
    const status = remittanceStatus({ expected: remittance.expected, received: remittance.received, dueDate: remittance.due_date, today, shortfall });
    changes.push({ id: remittance.id, delta: 0, shortfall, status });
  }
  await updateReceived(trx, changes);
}
