import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { BankCreditState, RemittanceStatus } from '../../platform/db/tables.ts';

/** How many remittances are in each status, for the cash overview. */
export async function countRemittancesByStatus(db: Executor): Promise<Map<RemittanceStatus, number>> {
  const rows = await db
    .selectFrom('remittances')
    .select(['status', (eb) => eb.fn.countAll<string>().as('remittances')])
    .groupBy('status')
    .execute();
  return new Map(rows.map((row) => [row.status, Number(row.remittances)]));
}

/**
 * How many credits still have money no rule or person has matched, open or held for a person: the size
 * of the exceptions queue (a credit set aside or reversed has left it).
 */
export async function countCreditsToMatch(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('bank_credits')
    .select((eb) => eb.fn.countAll<string>().as('credits'))
    .where(sql<boolean>`matched_amount < amount`)
    .where('state', 'in', ['open', 'held'])
    .executeTakeFirstOrThrow();
  return Number(row.credits);
}

/**
 * Remittances still owed money in one currency, with their employer: what a person may match a
 * credit of that currency to. Newest pay date first, as the list of remittances shows them.
 */
export async function listOwedRemittancesIn(db: Executor, currency: string, limit: number) {
  return db
    .selectFrom('remittances as r')
    .innerJoin('employers as e', 'e.id', 'r.employer_id')
    .select(['r.payroll_id', 'r.pay_date', 'r.payment_reference', 'r.expected', 'r.received', 'r.currency', 'e.name as employer_name'])
    .where('r.currency', '=', currency)
    .where(sql<boolean>`r.received < r.expected`)
    .orderBy('r.pay_date', 'desc')
    .orderBy('e.name')
    .orderBy('r.payroll_id')
    .limit(limit)
    .execute();
}

/** A match with the currency of its credit: enough to explain a refused unmatch and to go back to the credit. */
export async function findMatchWithCurrency(db: Executor, matchId: string) {
  return db
    .selectFrom('remittance_matches as m')
    .innerJoin('bank_credits as c', 'c.id', 'm.bank_credit_id')
    .select(['m.id', 'm.bank_credit_id', 'm.payroll_id', 'm.pay_date', 'm.amount', 'c.currency'])
    .where('m.id', '=', matchId)
    .executeTakeFirst();
}

/** Unresolved reversals: each waits for a person to name the credit the bank took back. */
export async function countReversalsToPlace(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('bank_statement_entries')
    .select((eb) => eb.fn.countAll<string>().as('reversals'))
    .where('outcome', '=', 'unresolved_reversal')
    .where('resolved_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.reversals);
}

/** A reversal still waiting for a person, with its statement: what the placing form names. */
export async function findReversalToPlace(db: Executor, entryId: string) {
  return db
    .selectFrom('bank_statement_entries as e')
    .innerJoin('bank_statements as s', 's.id', 'e.bank_statement_id')
    .select(['e.id', 'e.bank_reference', 'e.amount', 'e.currency', 'e.booking_date', 's.collection_account_id'])
    .where('e.id', '=', entryId)
    .where('e.outcome', '=', 'unresolved_reversal')
    .where('e.resolved_at', 'is', null)
    .executeTakeFirst();
}

export interface ReversibleCredit {
  entry_id: string;
  id: string;
  bank_reference: string;
  booking_date: string;
  remittance_information: string | null;
  debtor_name: string | null;
  state: BankCreditState;
  matched_amount: number;
}

/**
 * For each reversal, the credits it could have taken back, as the service accepts them: of its amount
 * and account, not reversed yet, booked on or before it. Newest first and at most `perReversal` each:
 * a common amount may have many, and the one reversed is usually recent.
 */
export async function listReversibleCreditsFor(db: Executor, entryIds: readonly string[], perReversal: number): Promise<ReversibleCredit[]> {
  if (entryIds.length === 0) return [];
  const result = await sql<ReversibleCredit>`
    select entry_id, id, bank_reference, booking_date, remittance_information, debtor_name, state, matched_amount from (
      select e.id as entry_id, c.id, c.bank_reference, c.booking_date, c.remittance_information,
             c.debtor_name, c.state, c.matched_amount,
             row_number() over (partition by e.id order by c.booking_date desc, c.id desc) as place
      from bank_statement_entries e
      join bank_statements s on s.id = e.bank_statement_id
      join bank_credits c on c.collection_account_id = s.collection_account_id and c.amount = e.amount and c.state <> 'reversed'
        and (e.booking_date is null or c.booking_date <= e.booking_date)
      where e.id = any(${entryIds}::uuid[])
    ) candidates
    where place <= ${perReversal}
    order by entry_id, place
  `.execute(db);
  return result.rows;
}

/** Credits a person set aside, latest first: where one is found again to restore it. */
export async function listCreditsSetAside(db: Executor, limit: number) {
  return db.selectFrom('bank_credits').selectAll().where('state', '=', 'set_aside').orderBy('state_changed_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** How a credit's state changed, oldest first, as the audit log recorded each decision (a person's, or the bank's reversal). */
export async function listCreditStateChanges(db: Executor, creditId: string) {
  return db
    .selectFrom('audit_log')
    .select(['at', 'actor_kind', 'actor', 'action', 'reason', 'after'])
    .where('resource_type', '=', 'bank_credit')
    .where('resource_id', '=', creditId)
    .where('action', 'in', ['bank_credit.set_aside', 'bank_credit.restored', 'bank_credit.reversed'])
    .orderBy('at')
    .orderBy('id')
    .execute();
}
