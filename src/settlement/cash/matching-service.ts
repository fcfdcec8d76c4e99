import { describeActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import type { RemittanceStatus } from '../../platform/db/tables.ts';
import { recordEvents } from '../../platform/events/outbox.ts';
import { MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { fundedAndPaidOut, unfundDownTo } from './funding-repository.ts';
import {
  findCreditForUpdate,
  findLiveMatchForUpdate,
  insertMatches,
  listOpenRemittances,
  listRefusedPairs,
  listSettledRemittanceReferences,
  listUnmatchedCredits,
  markUnmatched,
  type NewMatch,
} from './matching-repository.ts';
import { matchCredits, pairKey } from './remittance-matching.ts';
import { insertCredits, type NewCredit } from './statement-repository.ts';
import { advisoryLockCash, rowLockRemittances, updateReceived } from './remittance-repository.ts';
import { noteOverdueRemittances, refreshRemittances, refreshWindowStart, remittanceEvents, type RemittanceEventSubject, type RemittancePolicy } from './remittance-service.ts';
import { remittanceStatus } from './remittance-status.ts';

export interface MatchingPolicy extends RemittancePolicy {
  toleranceMinor: number;
}

export interface MatchingOutcome {
  matches: number;
  /** Credits with money still unmatched after the rules ran: the exceptions queue. */
  unmatchedCredits: number;
  byRule: Record<string, number>;
}

type PayDateKey = { payrollId: string; payDate: string };
const keyOf = (key: PayDateKey) => `${key.payrollId}/${key.payDate}`;

/**
 * Adds matched money to remittances (locked, in order), sets their status, and tells their billers
 * (remittance.received) in the same transaction. Money coming in first pays back a shortfall.
 */
async function addToRemittances(trx: Executor, policy: RemittancePolicy, amounts: ReadonlyArray<PayDateKey & { amount: number }>) {
  const totals = new Map<string, PayDateKey & { amount: number }>();
  for (const entry of amounts) {
    const total = totals.get(keyOf(entry)) ?? { payrollId: entry.payrollId, payDate: entry.payDate, amount: 0 };
    total.amount += entry.amount;
    totals.set(keyOf(entry), total);
  }
  const locked = await rowLockRemittances(trx, [...totals.values()]);
  const changes: Array<{ id: string; delta: number; shortfall: number; status: RemittanceStatus }> = [];
  const received: RemittanceEventSubject[] = [];
  for (const remittance of locked) {
    const delta = totals.get(keyOf({ payrollId: remittance.payroll_id, payDate: remittance.pay_date }))!.amount;
    // Received stays within what every later sum over it can carry: a person can match any credit to a
    // remittance (it shows `over`), but not without bound.
    if (remittance.received + delta > MAX_EXACT_MINOR_UNITS) {
      throw new InvalidError(
        'match-invalid',
        `payroll ${remittance.payroll_id} pay date ${remittance.pay_date} would have received ${formatMoney(BigInt(remittance.received) + BigInt(delta), remittance.currency)}, ` +
          `more than ${formatMoney(MAX_EXACT_MINOR_UNITS, remittance.currency)}, the most one remittance may receive`,
      );
    }
    // An unmatch is refused when it would take received below what was paid out, so only new money moves a shortfall.
    const shortfall = delta > 0 ? Math.max(0, remittance.shortfall - delta) : remittance.shortfall;
    const status = remittanceStatus({ expected: remittance.expected, received: remittance.received + delta, dueDate: remittance.due_date, today: policy.today, shortfall });
    changes.push({ id: remittance.id, delta, shortfall, status });
    if (delta > 0) received.push({ id: remittance.id, payrollId: remittance.payroll_id, payDate: remittance.pay_date, status, dueDate: remittance.due_date });
  }
  await updateReceived(trx, changes);
  await recordEvents(trx, await remittanceEvents(trx, 'remittance.received', received));
}

/**
 * Runs the matching rules (remittance-matching.ts) over every open credit with money unmatched and
 * every remittance still owed, records each match with its rule, and leaves the rest in the exceptions
 * queue. A pairing a person took back (unmatched) is never made again by a rule; credits held for a
 * person or set aside are not offered. Remittances are refreshed first, so a pay date locked or
 * reported since is matched too; those still owed past their due date afterwards are noted overdue.
 * A statement's new credits (`incoming`, not stored yet) are matched with the stored ones and then
 * inserted already carrying their matched amounts: updating rows this transaction just inserted would
 * write each one twice, and make PostgreSQL check their foreign keys again. Held ones are stored as they are.
 * Call inside the cash advisory lock.
 */
export async function matchOpenCredits(trx: Executor, policy: MatchingPolicy, incoming: readonly NewCredit[] = []): Promise<MatchingOutcome> {
  await refreshRemittances(trx, policy);
  const stored = await listUnmatchedCredits(trx, { state: 'open' });
  const open = incoming.filter((credit) => credit.state === 'open');
  const credits = [
    ...stored.map((c) => ({ id: c.id, amount: c.amount - c.matched_amount, currency: c.currency, reference: c.remittance_information, bookingDate: c.booking_date })),
    ...open.map((c) => ({ id: c.id, amount: c.amount, currency: c.currency, reference: c.remittanceInformation, bookingDate: c.bookingDate })),
  ];
  const remittances = await listOpenRemittances(trx);
  const refused = await listRefusedPairs(
    trx,
    stored.map((credit) => credit.id),
  );
  const settled = await listSettledRemittanceReferences(trx, refreshWindowStart(policy.today));
  const proposed = matchCredits(
    credits,
    remittances.map((r) => ({
      payrollId: r.payroll_id,
      payDate: r.pay_date,
      employerId: r.employer_id,
      currency: r.currency,
      paymentReference: r.payment_reference,
      outstanding: r.expected - r.received,
    })),
    settled.map((r) => ({ payrollId: r.payroll_id, payDate: r.pay_date, paymentReference: r.payment_reference })),
    { toleranceMinor: policy.toleranceMinor, refusedPairs: new Set(refused.map((pair) => pairKey(pair.bank_credit_id, pair.payroll_id, pair.pay_date))) },
  );
  const matches: NewMatch[] = proposed.map((p) => ({
    id: timeOrderedUuid(),
    creditId: p.creditId,
    payrollId: p.payrollId,
    payDate: p.payDate,
    amount: p.amount,
    rule: p.rule,
    flagged: p.flagged,
    matchedBy: 'rules',
  }));
  const usedUp = new Map<string, number>();
  for (const match of matches) usedUp.set(match.creditId, (usedUp.get(match.creditId) ?? 0) + match.amount);
  await insertCredits(
    trx,
    incoming.map((credit) => ({ ...credit, matchedAmount: usedUp.get(credit.id) ?? 0 })),
  );
  await insertMatches(trx, matches, new Set(incoming.map((credit) => credit.id)));
  await addToRemittances(trx, policy, matches);
  await noteOverdueRemittances(trx, policy);
  const byRule: Record<string, number> = {};
  for (const match of matches) byRule[match.rule] = (byRule[match.rule] ?? 0) + 1;
  const unmatchedCredits = credits.filter((c) => c.amount - (usedUp.get(c.id) ?? 0) > 0).length;
  return { matches: matches.length, unmatchedCredits, byRule };
}

export async function runMatching(db: Database, policy: MatchingPolicy): Promise<MatchingOutcome> {
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    return matchOpenCredits(trx, policy);
  });
}

export interface Allocation {
  payrollId: string;
  payDate: string;
  amount: number;
}

/**
 * A person's decision: this credit (or part of it) pays these payroll pay dates. Splitting a credit is
 * several allocations. The credit's unmatched money must cover them, and each remittance must be in
 * the credit's currency; a remittance may be paid more than it expects (it shows `over`).
 */
export async function matchCreditManually(
  db: Database,
  actor: Actor,
  policy: RemittancePolicy,
  request: { creditId: string; allocations: Allocation[]; reason: string | null },
) {
  if (!isUuid(request.creditId)) throw new NotFoundError(`Bank credit ${request.creditId}`);
  if (request.allocations.length === 0) throw new InvalidError('match-invalid', 'a match needs at least one payroll pay date and amount');
  for (const allocation of request.allocations) {
    if (!Number.isSafeInteger(allocation.amount) || allocation.amount <= 0) throw new InvalidError('match-invalid', 'each allocation needs a whole amount of more than zero');
  }
  const keys = new Set(request.allocations.map(keyOf));
  if (keys.size !== request.allocations.length) throw new InvalidError('match-invalid', 'each payroll pay date may appear once in a match');
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    const credit = await findCreditForUpdate(trx, request.creditId);
    if (!credit) throw new NotFoundError(`Bank credit ${request.creditId}`);
    if (credit.state !== 'open' && credit.state !== 'held') {
      throw new ConflictError(
        'credit-not-open',
        `the credit is ${credit.state === 'set_aside' ? 'set aside' : 'reversed'}: ${credit.state === 'set_aside' ? 'restore it first' : 'the bank took it back'}`,
        { members: { state: credit.state } },
      );
    }
    const total = request.allocations.reduce((sum, allocation) => sum + allocation.amount, 0);
    const remaining = credit.amount - credit.matched_amount;
    if (total > remaining) {
      throw new ConflictError(
        'credit-over-allocated',
        `the credit has ${formatMoney(remaining, credit.currency)} unmatched; the allocations add up to ${formatMoney(total, credit.currency)}`,
        {
          members: { unmatched_amount: remaining },
        },
      );
    }
    await refreshRemittances(trx, policy);
    const remittances = await rowLockRemittances(trx, request.allocations);
    for (const allocation of request.allocations) {
      const remittance = remittances.find((r) => r.payroll_id === allocation.payrollId && r.pay_date === allocation.payDate);
      if (!remittance) throw new NotFoundError(`Remittance of payroll ${allocation.payrollId} pay date ${allocation.payDate}`);
      if (remittance.currency !== credit.currency) throw new InvalidError('match-invalid', `the remittance is in ${remittance.currency}, the credit in ${credit.currency}`);
    }
    const by = describeActor(actor);
    const matches: NewMatch[] = request.allocations.map((a) => ({
      id: timeOrderedUuid(),
      creditId: credit.id,
      payrollId: a.payrollId,
      payDate: a.payDate,
      amount: a.amount,
      rule: 'manual',
      flagged: false,
      matchedBy: by,
    }));
    const stored = await insertMatches(trx, matches);
    await addToRemittances(trx, policy, matches);
    await recordAction(trx, {
      actor,
      action: 'bank_credit.matched',
      resourceType: 'bank_credit',
      resourceId: credit.id,
      reason: request.reason,
      after: { matches: matches.map(({ id, payrollId, payDate, amount }) => ({ id, payroll_id: payrollId, pay_date: payDate, amount })) },
    });
    return stored;
  });
}

/**
 * Takes a match back: the credit's money is unmatched again and the remittance loses it. Refused when
 * the remittance would then hold less than has already been paid out of it (paid out never exceeds
 * received); entries funded but not yet paid lose their funding down to what remains.
 */
export async function unmatch(db: Database, actor: Actor, policy: RemittancePolicy, request: { matchId: string; reason: string }) {
  if (!isUuid(request.matchId)) throw new NotFoundError(`Match ${request.matchId}`);
  const reason = request.reason.trim();
  if (reason.length === 0) throw new InvalidError('unmatch-invalid', 'unmatching needs a reason');
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    const match = await findLiveMatchForUpdate(trx, request.matchId);
    if (!match) throw new NotFoundError(`Live match ${request.matchId}`);
    const [remittance] = await rowLockRemittances(trx, [{ payrollId: match.payroll_id, payDate: match.pay_date }]);
    const remaining = remittance!.received - match.amount;
    const { paid_out: paidOut } = await fundedAndPaidOut(trx, match.payroll_id, match.pay_date);
    if (paidOut > remaining) {
      throw new ConflictError(
        'unmatch-would-unfund-payouts',
        `payroll ${match.payroll_id} pay date ${match.pay_date} has paid out ${formatMoney(paidOut, remittance!.currency)}; without this match it would have received only ${formatMoney(remaining, remittance!.currency)}`,
        { members: { paid_out: paidOut, received_without_match: remaining } },
      );
    }
    const unmatched = await markUnmatched(trx, { id: match.id, creditId: match.bank_credit_id, amount: match.amount }, describeActor(actor), reason);
    await addToRemittances(trx, policy, [{ payrollId: match.payroll_id, payDate: match.pay_date, amount: -match.amount }]);
    const unfunded = await unfundDownTo(trx, match.payroll_id, match.pay_date, remaining);
    await recordAction(trx, {
      actor,
      action: 'remittance_match.unmatched',
      resourceType: 'remittance_match',
      resourceId: match.id,
      reason,
      before: { bank_credit_id: match.bank_credit_id, payroll_id: match.payroll_id, pay_date: match.pay_date, amount: match.amount, rule: match.rule },
      after: { received: remaining, entries_unfunded: unfunded },
    });
    return { match: unmatched, currency: remittance!.currency, received: remaining, entriesUnfunded: unfunded };
  });
}
