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
      credits_already_imported: 0,
      debits_ignored: statement.debitsIgnored,
      imported_by: statement.importedBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Every credit of the statement in one statement; a credit the bank already reported (the same
 * bank reference on the account, from an intraday notification) is skipped. Returns how many were new.
 */
export async function insertCredits(
  db: Executor,
  statement: { id: string; collectionAccountId: string },
  credits: ReadonlyArray<StatementEntry & { id: string }>,
): Promise<number> {
  if (credits.length === 0) return 0;
  const column = <T>(pick: (credit: StatementEntry & { id: string }) => T) => credits.map(pick);
  const result = await sql<{ inserted: number }>`
    with inserted as (
      insert into bank_credits (id, bank_statement_id, collection_account_id, bank_reference, amount, currency, booking_date, value_date,
                                remittance_information, debtor_name, debtor_account)
      select u.id, ${statement.id}::uuid, ${statement.collectionAccountId}::uuid, u.bank_reference, u.amount, u.currency, u.booking_date,
             u.value_date, u.remittance_information, u.debtor_name, u.debtor_account
      from unnest(${column((c) => c.id)}::uuid[], ${column((c) => c.bankReference)}::text[], ${column((c) => c.amount)}::bigint[],
                  ${column((c) => c.currency)}::text[], ${column((c) => c.bookingDate)}::date[], ${column((c) => c.valueDate)}::date[],
                  ${column((c) => c.remittanceInformation)}::text[], ${column((c) => c.debtorName)}::text[], ${column((c) => c.debtorAccount)}::text[])
        as u(id, bank_reference, amount, currency, booking_date, value_date, remittance_information, debtor_name, debtor_account)
      on conflict (collection_account_id, bank_reference) do nothing
      returning 1
    )
    select count(*)::int as inserted from inserted
  `.execute(db);
  return result.rows[0]!.inserted;
}

export async function setCreditsAlreadyImported(db: Executor, statementId: string, count: number) {
  await db.updateTable('bank_statements').set({ credits_already_imported: count }).where('id', '=', statementId).execute();
}

export async function countStatementCredits(db: Executor, statementId: string) {
  const row = await db
    .selectFrom('bank_credits')
    .select([sql<number>`count(*)::int`.as('credits'), sql<number>`count(*) filter (where matched_amount = amount)::int`.as('matched')])
    .where('bank_statement_id', '=', statementId)
    .executeTakeFirstOrThrow();
  return row;
}
