import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { StatementFormat } from '../db/tables.ts';
import type { StatementEntry } from './bank-statement.ts';

/** The collection account a statement is of: the active one with these details, else the latest that had them. */
export async function findCollectionAccountByDetails(db: Executor, sortCode: string, accountNumber: string) {
  return db
    .selectFrom('collection_accounts')
    .select(['id', 'currency', 'active', 'account_holder_name'])
    .where('sort_code', '=', sortCode)
    .where('account_number', '=', accountNumber)
    .orderBy('active', 'desc')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

export async function findStatementByBankId(db: Executor, collectionAccountId: string, format: StatementFormat, statementId: string) {
  return db
    .selectFrom('bank_statements')
    .selectAll()
    .where('collection_account_id', '=', collectionAccountId)
    .where('format', '=', format)
    .where('statement_id', '=', statementId)
    .executeTakeFirst();
}

export async function findStatement(db: Executor, id: string) {
  return db.selectFrom('bank_statements').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listStatements(db: Executor, limit: number) {
  return db.selectFrom('bank_statements').selectAll().orderBy('imported_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function insertStatement(
  db: Executor,
  statement: {
    id: string;
    collectionAccountId: string;
    format: StatementFormat;
    statementId: string;
    contentSha256: Buffer;
    fileName: string | null;
    currency: string;
    credits: number;
    creditsTotal: number;
    /** Credits the account already had (same bank reference), which this statement does not store again. */
    creditsAlreadyImported: number;
    debitsIgnored: number;
    importedBy: string;
  },
) {
  return db
    .insertInto('bank_statements')
    .values({
      id: statement.id,
      collection_account_id: statement.collectionAccountId,
      format: statement.format,
      statement_id: statement.statementId,
      content_sha256: statement.contentSha256,
      file_name: statement.fileName,
      currency: statement.currency,
      credits: statement.credits,
      credits_total: statement.creditsTotal,
      credits_already_imported: statement.creditsAlreadyImported,
      debits_ignored: statement.debitsIgnored,
      imported_by: statement.importedBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Which of these bank references the account's credits already carry (an intraday notification or an earlier statement reported them). */
export async function findKnownBankReferences(db: Executor, collectionAccountId: string, bankReferences: readonly string[]): Promise<Set<string>> {
  if (bankReferences.length === 0) return new Set();
  const result = await sql<{ bank_reference: string }>`
    select bank_reference from bank_credits
    where collection_account_id = ${collectionAccountId}::uuid and bank_reference = any(${bankReferences}::text[])
  `.execute(db);
  return new Set(result.rows.map((row) => row.bank_reference));
}

/** A credit as first stored: with what the matching rules already gave it, so no update follows its insert. */
export type NewCredit = StatementEntry & { id: string; matchedAmount: number };

/**
 * The statement's new credits in one statement. A credit whose bank reference the account already has
 * violates the unique key: the caller leaves those out (findKnownBankReferences, under the cash lock).
 */
export async function insertCredits(db: Executor, statement: { id: string; collectionAccountId: string }, credits: readonly NewCredit[]): Promise<void> {
  if (credits.length === 0) return;
  const column = <T>(pick: (credit: NewCredit) => T) => credits.map(pick);
  await sql`
    insert into bank_credits (id, bank_statement_id, collection_account_id, bank_reference, amount, currency, booking_date, value_date,
                              remittance_information, debtor_name, debtor_account, matched_amount)
    select u.id, ${statement.id}::uuid, ${statement.collectionAccountId}::uuid, u.bank_reference, u.amount, u.currency, u.booking_date,
           u.value_date, u.remittance_information, u.debtor_name, u.debtor_account, u.matched_amount
    from unnest(${column((c) => c.id)}::uuid[], ${column((c) => c.bankReference)}::text[], ${column((c) => c.amount)}::bigint[],
                ${column((c) => c.currency)}::text[], ${column((c) => c.bookingDate)}::date[], ${column((c) => c.valueDate)}::date[],
                ${column((c) => c.remittanceInformation)}::text[], ${column((c) => c.debtorName)}::text[], ${column((c) => c.debtorAccount)}::text[],
                ${column((c) => c.matchedAmount)}::bigint[])
      as u(id, bank_reference, amount, currency, booking_date, value_date, remittance_information, debtor_name, debtor_account, matched_amount)
  `.execute(db);
}

export async function countStatementCredits(db: Executor, statementId: string) {
  const row = await db
    .selectFrom('bank_credits')
    .select([sql<number>`count(*)::int`.as('credits'), sql<number>`count(*) filter (where matched_amount = amount)::int`.as('matched')])
    .where('bank_statement_id', '=', statementId)
    .executeTakeFirstOrThrow();
  return row;
}
