import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { RemittanceStatus } from '../db/tables.ts';

/** How many remittances are in each status, for the cash overview. */
export async function countRemittancesByStatus(db: Executor): Promise<Map<RemittanceStatus, number>> {
  const rows = await db.selectFrom('remittances').select(['status', (eb) => eb.fn.countAll<string>().as('remittances')]).groupBy('status').execute();
  return new Map(rows.map((row) => [row.status, Number(row.remittances)]));
}

/** How many credits still have money no rule or person has matched: the size of the exceptions queue. */
export async function countCreditsToMatch(db: Executor): Promise<number> {
  const row = await db.selectFrom('bank_credits').select((eb) => eb.fn.countAll<string>().as('credits')).where(sql<boolean>`matched_amount < amount`).executeTakeFirstOrThrow();
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
