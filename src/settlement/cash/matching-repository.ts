import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { Selectable } from 'kysely';
import type { BankCreditState, MatchRule, RemittanceMatchesTable, SetAsideCategory } from '../../platform/db/tables.ts';

/**
 * Credits with money not yet matched, with what remains of each: open ones are what the rules try
 * again; open and held ones (a person must look at a held credit first) are the exceptions queue.
 */
export async function listUnmatchedCredits(db: Executor, options: { state?: 'open'; limit?: number } = {}) {
  const { limit } = options;
  let query = db
    .selectFrom('bank_credits')
    .selectAll()
    .where(sql<boolean>`matched_amount < amount`)
    .where('state', 'in', options.state === 'open' ? ['open'] : ['open', 'held'])
    .orderBy('booking_date')
    .orderBy('id');
  if (limit !== undefined) query = query.limit(limit);
  return query.execute();
}

/** Remittances still owed money: what the rules may match credits to. */
export async function listOpenRemittances(db: Executor) {
  return db
    .selectFrom('remittances')
    .select(['id', 'payroll_id', 'pay_date', 'employer_id', 'currency', 'payment_reference', 'expected', 'received'])
    .where(sql<boolean>`received < expected`)
    .execute();
}

/** The remittances a person took each of these credits away from: no rule may pair them again. */
export async function listRefusedPairs(db: Executor, creditIds: readonly string[]) {
  if (creditIds.length === 0) return [];
  const result = await sql<{ bank_credit_id: string; payroll_id: string; pay_date: string }>`
    select distinct bank_credit_id, payroll_id, to_char(pay_date, 'YYYY-MM-DD') as pay_date
    from remittance_matches where unmatched_at is not null and bank_credit_id = any(${creditIds}::uuid[])
  `.execute(db);
  return result.rows;
}

/**
 * The payment references of remittances no longer owed, pay dates from `since` on (and of older pay
 * dates with a remittance still owed): a credit quoting one of them names that remittance (an
 * over-payment, a duplicate), never another it looks like.
 */
export async function listSettledRemittanceReferences(db: Executor, since: string) {
  const result = await sql<{ payroll_id: string; pay_date: string; payment_reference: string }>`
    select payroll_id, to_char(pay_date, 'YYYY-MM-DD') as pay_date, payment_reference
    from remittances
    -- Older ones too where a remittance of the same pay date is still owed: a reference cut short names
    -- its pay date whole, so only those could be mistaken for the settled one.
    where received >= expected
      and (pay_date >= ${since}::date or pay_date in (select open.pay_date from remittances open
                                                where open.status in ('expected', 'short', 'late') and open.received < open.expected and open.pay_date < ${since}::date))
  `.execute(db);
  return result.rows;
}

export async function findCreditForUpdate(db: Executor, creditId: string) {
  return db.selectFrom('bank_credits').selectAll().where('id', '=', creditId).forUpdate().executeTakeFirst();
}

export async function findCredit(db: Executor, creditId: string) {
  return db.selectFrom('bank_credits').selectAll().where('id', '=', creditId).executeTakeFirst();
}

export interface NewMatch {
  id: string;
  creditId: string;
  payrollId: string;
  payDate: string;
  amount: number;
  rule: MatchRule;
  flagged: boolean;
  matchedBy: string;
}

/**
 * The matches, and each stored credit's matched amount raised by its share, in one statement; returns
 * the matches as stored. Credits in `storedMatched` were inserted with their matched amount already
 * (a statement's new credits): raising it again would count their matches twice.
 */
export async function insertMatches(
  db: Executor,
  matches: readonly NewMatch[],
  storedMatched: ReadonlySet<string> = new Set(),
): Promise<Array<Selectable<RemittanceMatchesTable>>> {
  if (matches.length === 0) return [];
  const column = <T>(pick: (match: NewMatch) => T) => matches.map(pick);
  const result = await sql<Selectable<RemittanceMatchesTable>>`
    with input as (
      select * from unnest(${column((m) => m.id)}::uuid[], ${column((m) => m.creditId)}::uuid[], ${column((m) => m.payrollId)}::uuid[],
                           ${column((m) => m.payDate)}::date[], ${column((m) => m.amount)}::bigint[], ${column((m) => m.rule)}::text[],
                           ${column((m) => m.flagged)}::boolean[], ${column((m) => m.matchedBy)}::text[],
                           ${column((m) => !storedMatched.has(m.creditId))}::boolean[])
        as u(id, bank_credit_id, payroll_id, pay_date, amount, rule, flagged, matched_by, raises_credit)
    ),
    inserted as (
      insert into remittance_matches (id, bank_credit_id, payroll_id, pay_date, amount, rule, flagged, matched_by)
      select id, bank_credit_id, payroll_id, pay_date, amount, rule, flagged, matched_by from input
      returning *
    ),
    per_credit as (select bank_credit_id, sum(amount)::bigint as amount from input where raises_credit group by bank_credit_id),
    credited as (
      update bank_credits c set matched_amount = c.matched_amount + p.amount
      from per_credit p where c.id = p.bank_credit_id
    )
    select * from inserted order by id
  `.execute(db);
  return result.rows;
}

export async function findLiveMatchForUpdate(db: Executor, matchId: string) {
  return db.selectFrom('remittance_matches').selectAll().where('id', '=', matchId).where('unmatched_at', 'is', null).forUpdate().executeTakeFirst();
}

/** Stamps the match as taken back and lowers its credit's matched amount; returns the match as stored. */
export async function markUnmatched(db: Executor, match: { id: string; creditId: string; amount: number }, by: string, reason: string) {
  const unmatched = await db
    .updateTable('remittance_matches')
    .set({ unmatched_at: sql<Date>`now()`, unmatched_by: by, unmatch_reason: reason })
    .where('id', '=', match.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await db
    .updateTable('bank_credits')
    .set({ matched_amount: sql<number>`matched_amount - ${match.amount}` })
    .where('id', '=', match.creditId)
    .execute();
  return unmatched;
}

export async function listMatchesOfCredit(db: Executor, creditId: string) {
  return db.selectFrom('remittance_matches').selectAll().where('bank_credit_id', '=', creditId).orderBy('matched_at').orderBy('id').execute();
}

/** A credit's live matches, row-locked: what a reversal takes back. */
export async function listLiveMatchesOfCreditForUpdate(db: Executor, creditId: string) {
  return db
    .selectFrom('remittance_matches')
    .select(['id', 'payroll_id', 'pay_date', 'amount'])
    .where('bank_credit_id', '=', creditId)
    .where('unmatched_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** A credit's state as a person or the bank decided it, with who, when and why. */
export async function setCreditState(
  db: Executor,
  creditId: string,
  change: { state: BankCreditState; reason: string | null; category: SetAsideCategory | null; by: string },
) {
  return db
    .updateTable('bank_credits')
    .set({ state: change.state, state_reason: change.reason, set_aside_category: change.category, state_changed_at: sql<Date>`now()`, state_changed_by: change.by })
    .where('id', '=', creditId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
