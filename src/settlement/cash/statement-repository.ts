import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { StatementEntryOutcome, StatementFormat } from '../../platform/db/tables.ts';
import type { StatementEntry } from './bank-statement.ts';
import type { KnownCredit, RecordedReversal } from './credit-identity.ts';

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

export async function findStatementByBankId(db: Executor, collectionAccountId: string, format: StatementFormat, statementId: string, pageNumber: number) {
  return db
    .selectFrom('bank_statements')
    .selectAll()
    .where('collection_account_id', '=', collectionAccountId)
    .where('format', '=', format)
    .where('statement_id', '=', statementId)
    .where('page_number', '=', pageNumber)
    .executeTakeFirst();
}

/** camt ElctrncSeqNb and LglSeqNb: each numbers an account's statements of one kind in order. */
export type SequenceColumn = 'electronic_sequence_number' | 'legal_sequence_number';

/** The highest sequence number below `current` among the account's statements of this format (the one before it, if none is missing). */
export async function findPreviousSequenceNumber(
  db: Executor,
  collectionAccountId: string,
  format: StatementFormat,
  column: SequenceColumn,
  current: string,
): Promise<string | null> {
  const number = sql.ref(column);
  const result = await sql<{ number: string }>`
    select ${number} as number from bank_statements
    where collection_account_id = ${collectionAccountId}::uuid and format = ${format}
      and ${number} ~ '^[0-9]{1,30}$' and ${number}::numeric < ${current}::numeric
    order by ${number}::numeric desc limit 1
  `.execute(db);
  return result.rows[0]?.number ?? null;
}

/** Whether another statement of the account and format already carries this sequence number. */
export async function sequenceNumberTaken(db: Executor, collectionAccountId: string, format: StatementFormat, column: SequenceColumn, number: string): Promise<boolean> {
  const row = await db
    .selectFrom('bank_statements')
    .select('id')
    .where('collection_account_id', '=', collectionAccountId)
    .where('format', '=', format)
    .where(column, '=', number)
    .executeTakeFirst();
  return row !== undefined;
}

/** The pages of a statement recorded so far, in page order, with their balances. */
export async function listStatementPages(db: Executor, collectionAccountId: string, format: StatementFormat, statementId: string) {
  return db
    .selectFrom('bank_statements')
    .select(['id', 'page_number', 'last_page', 'balances'])
    .where('collection_account_id', '=', collectionAccountId)
    .where('format', '=', format)
    .where('statement_id', '=', statementId)
    .orderBy('page_number')
    .execute();
}

/** The entries of some statements (pages), as booked: what a paginated statement's balances move by. */
export async function listEntriesOfStatements(db: Executor, statementIds: readonly string[]) {
  if (statementIds.length === 0) return [];
  return db
    .selectFrom('bank_statement_entries')
    .select(['direction', 'amount', 'currency'])
    .where('bank_statement_id', 'in', statementIds)
    .orderBy('bank_statement_id')
    .orderBy('entry_index')
    .execute();
}

export async function findStatement(db: Executor, id: string) {
  return db.selectFrom('bank_statements').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listStatements(db: Executor, limit: number) {
  return db.selectFrom('bank_statements').selectAll().orderBy('imported_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export interface NewStatement {
  id: string;
  collectionAccountId: string;
  format: StatementFormat;
  statementId: string;
  pageNumber: number;
  lastPage: boolean;
  electronicSequenceNumber: string | null;
  legalSequenceNumber: string | null;
  contentSha256: Buffer;
  parsedSha256: Buffer;
  fileName: string | null;
  currency: string;
  credits: number;
  creditsTotal: number;
  /** Credits the account already had, which this statement does not store again. */
  creditsAlreadyImported: number;
  debitsIgnored: number;
  balances: ReadonlyArray<{ type: string; amount: number; currency: string; date: string | null }>;
  integrityFindings: ReadonlyArray<{ code: string; detail: string }>;
  entryOutcomes: Readonly<Record<string, number>>;
  importedBy: string;
}

export async function insertStatement(db: Executor, statement: NewStatement) {
  return db
    .insertInto('bank_statements')
    .values({
      id: statement.id,
      collection_account_id: statement.collectionAccountId,
      format: statement.format,
      statement_id: statement.statementId,
      page_number: statement.pageNumber,
      last_page: statement.lastPage,
      electronic_sequence_number: statement.electronicSequenceNumber,
      legal_sequence_number: statement.legalSequenceNumber,
      content_sha256: statement.contentSha256,
      parsed_sha256: statement.parsedSha256,
      file_name: statement.fileName,
      currency: statement.currency,
      credits: statement.credits,
      credits_total: statement.creditsTotal,
      credits_already_imported: statement.creditsAlreadyImported,
      debits_ignored: statement.debitsIgnored,
      balances: JSON.stringify(statement.balances),
      integrity_findings: JSON.stringify(statement.integrityFindings),
      entry_outcomes: JSON.stringify(statement.entryOutcomes),
      imported_by: statement.importedBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** What the import made of each entry and the statement's counts, written once every entry is decided. */
export async function completeStatement(
  db: Executor,
  statementId: string,
  figures: { creditsAlreadyImported: number; integrityFindings: ReadonlyArray<{ code: string; detail: string }>; entryOutcomes: Readonly<Record<string, number>> },
) {
  return db
    .updateTable('bank_statements')
    .set({
      credits_already_imported: figures.creditsAlreadyImported,
      integrity_findings: JSON.stringify(figures.integrityFindings),
      entry_outcomes: JSON.stringify(figures.entryOutcomes),
    })
    .where('id', '=', statementId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

const knownCreditColumns = sql`
  id, amount, to_char(booking_date, 'YYYY-MM-DD') as booking_date, account_servicer_reference, entry_reference, transaction_references,
  remittance_information, batch_amount, batch_part, batch_parts, booked_statement_id is null as notified_only, state = 'reversed' as reversed`;

interface KnownCreditRow {
  id: string;
  amount: number;
  booking_date: string;
  account_servicer_reference: string | null;
  entry_reference: string | null;
  transaction_references: string[];
  remittance_information: string | null;
  batch_amount: number | null;
  batch_part: number | null;
  batch_parts: number | null;
  notified_only: boolean;
  reversed: boolean;
}

/** A credit as credit-identity.ts compares it. */
function toKnownCredit(row: KnownCreditRow): KnownCredit {
  return {
    id: row.id,
    amount: row.amount,
    bookingDate: row.booking_date,
    accountServicerReference: row.account_servicer_reference,
    entryReference: row.entry_reference,
    transactionReferences: row.transaction_references,
    remittanceInformation: row.remittance_information,
    batch: row.batch_amount === null ? null : { amount: row.batch_amount, part: row.batch_part!, parts: row.batch_parts! },
    notifiedOnly: row.notified_only,
    reversed: row.reversed,
  };
}

/** The account's credits booked on these dates, whatever their state: what an incoming entry may already be. */
export async function listCreditsBookedOn(db: Executor, collectionAccountId: string, bookingDates: readonly string[]): Promise<KnownCredit[]> {
  if (bookingDates.length === 0) return [];
  const result = await sql<KnownCreditRow>`
    select ${knownCreditColumns} from bank_credits
    where collection_account_id = ${collectionAccountId}::uuid and booking_date = any(${bookingDates}::date[])
    order by booking_date, id
  `.execute(db);
  return result.rows.map(toKnownCredit);
}

/** The account's credits not reversed, of these amounts, booked from `since` to `until`: what a reversal may take back. */
export async function listReversibleCredits(db: Executor, collectionAccountId: string, amounts: readonly number[], since: string, until: string): Promise<KnownCredit[]> {
  if (amounts.length === 0) return [];
  const result = await sql<KnownCreditRow>`
    select ${knownCreditColumns} from bank_credits
    where collection_account_id = ${collectionAccountId}::uuid and booking_date between ${since}::date and ${until}::date
      and amount = any(${amounts}::bigint[]) and state <> 'reversed'
    order by booking_date, id
  `.execute(db);
  return result.rows.map(toKnownCredit);
}

/** A booked statement confirms credits only a notification had reported. */
export async function markCreditsBooked(db: Executor, creditIds: readonly string[], statementId: string): Promise<void> {
  if (creditIds.length === 0) return;
  await sql`update bank_credits set booked_statement_id = ${statementId}::uuid where id = any(${creditIds}::uuid[]) and booked_statement_id is null`.execute(db);
}

export interface NewStatementEntry {
  id: string;
  statementId: string;
  index: number;
  direction: 'credit' | 'debit';
  amount: number;
  currency: string;
  bookingDate: string | null;
  bankReference: string;
  accountServicerReference: string | null;
  entryReference: string | null;
  outcome: StatementEntryOutcome;
  creditId: string | null;
  detail: string | null;
}

export async function insertStatementEntries(db: Executor, entries: readonly NewStatementEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const column = <T>(pick: (entry: NewStatementEntry) => T) => entries.map(pick);
  await sql`
    insert into bank_statement_entries (id, bank_statement_id, entry_index, direction, amount, currency, booking_date, bank_reference,
                                        account_servicer_reference, entry_reference, outcome, bank_credit_id, detail)
    select * from unnest(${column((e) => e.id)}::uuid[], ${column((e) => e.statementId)}::uuid[], ${column((e) => e.index)}::int[],
                         ${column((e) => e.direction)}::text[], ${column((e) => e.amount)}::bigint[], ${column((e) => e.currency)}::text[],
                         ${column((e) => e.bookingDate)}::date[], ${column((e) => e.bankReference)}::text[],
                         ${column((e) => e.accountServicerReference)}::text[], ${column((e) => e.entryReference)}::text[], ${column((e) => e.outcome)}::text[],
                         ${column((e) => e.creditId)}::uuid[], ${column((e) => e.detail)}::text[])
  `.execute(db);
}

/** The account's reversals already recorded on these days for these amounts (placed or waiting), with their statement's format. */
export async function listRecordedReversals(
  db: Executor,
  collectionAccountId: string,
  bookingDates: readonly string[],
  amounts: readonly number[],
): Promise<RecordedReversal[]> {
  if (bookingDates.length === 0) return [];
  const result = await sql<{
    id: string;
    bank_credit_id: string | null;
    format: StatementFormat;
    booking_date: string;
    amount: number;
    account_servicer_reference: string | null;
    entry_reference: string | null;
  }>`
    select e.id, e.bank_credit_id, s.format, to_char(e.booking_date, 'YYYY-MM-DD') as booking_date, e.amount, e.account_servicer_reference, e.entry_reference
    from bank_statement_entries e join bank_statements s on s.id = e.bank_statement_id
    where e.outcome in ('reversal', 'unresolved_reversal') and e.booking_date = any(${bookingDates}::date[]) and e.amount = any(${amounts}::bigint[])
      and s.collection_account_id = ${collectionAccountId}::uuid
    order by e.booking_date, e.id
  `.execute(db);
  return result.rows.map((row) => ({
    id: row.id,
    creditId: row.bank_credit_id,
    format: row.format,
    bookingDate: row.booking_date,
    amount: row.amount,
    accountServicerReference: row.account_servicer_reference,
    entryReference: row.entry_reference,
  }));
}

/** Reversals no rule placed and no person has placed yet, with their statement. */
function unresolvedReversals(db: Executor) {
  return db
    .selectFrom('bank_statement_entries as e')
    .innerJoin('bank_statements as s', 's.id', 'e.bank_statement_id')
    .selectAll('e')
    .where('e.outcome', '=', 'unresolved_reversal')
    .where('e.resolved_at', 'is', null);
}

/** A reversal no rule could place, with its statement's account, locked. */
export async function findUnresolvedReversalForUpdate(db: Executor, entryId: string) {
  return unresolvedReversals(db).select('s.collection_account_id').where('e.id', '=', entryId).forUpdate('e').executeTakeFirst();
}

/**
 * A reversal a person placed: now a reversal of the credit named, stamped with who placed it and when,
 * and its statement's outcome counts moved with it.
 */
export async function markReversalResolved(db: Executor, entryId: string, creditId: string, by: string): Promise<void> {
  await sql`
    with placed as (
      update bank_statement_entries set outcome = 'reversal', bank_credit_id = ${creditId}::uuid, resolved_at = now(), resolved_by = ${by}
      where id = ${entryId}::uuid and outcome = 'unresolved_reversal'
      returning bank_statement_id
    )
    update bank_statements s
    set entry_outcomes = jsonb_strip_nulls(s.entry_outcomes || jsonb_build_object(
          'unresolved_reversal', nullif(coalesce((s.entry_outcomes ->> 'unresolved_reversal')::int, 0) - 1, 0),
          'reversal', coalesce((s.entry_outcomes ->> 'reversal')::int, 0) + 1))
    from placed where s.id = placed.bank_statement_id
  `.execute(db);
}

/** Reversals waiting for a person to say which credit the bank took back, oldest first. */
export async function listUnresolvedReversals(db: Executor, limit: number) {
  return unresolvedReversals(db).select(['s.collection_account_id', 's.statement_id', 's.format']).orderBy('e.booking_date').orderBy('e.id').limit(limit).execute();
}

export async function listStatementEntries(db: Executor, statementId: string) {
  return db.selectFrom('bank_statement_entries').selectAll().where('bank_statement_id', '=', statementId).orderBy('entry_index').execute();
}

/** A credit as first stored: with what the matching rules already gave it, so no update follows its insert. */
export type NewCredit = StatementEntry & {
  id: string;
  statementId: string;
  collectionAccountId: string;
  /** Booked by a camt.053 or CSV statement (its id), or only notified by a camt.054 (null). */
  bookedStatementId: string | null;
  state: 'open' | 'held';
  stateReason: string | null;
  matchedAmount: number;
};

/** The statements' new credits in one statement. */
export async function insertCredits(db: Executor, credits: readonly NewCredit[]): Promise<void> {
  if (credits.length === 0) return;
  const column = <T>(pick: (credit: NewCredit) => T) => credits.map(pick);
  // Arrays of arrays do not pass through unnest as rows: the transaction references travel as one JSON array per credit.
  await sql`
    insert into bank_credits (id, bank_statement_id, collection_account_id, bank_reference, amount, currency, booking_date, value_date,
                              remittance_information, debtor_name, debtor_account, matched_amount, account_servicer_reference, entry_reference,
                              transaction_references, batch_amount, batch_part, batch_parts, booked_statement_id, state, state_reason,
                              state_changed_at, state_changed_by)
    select u.id, u.statement_id, u.collection_account_id, u.bank_reference, u.amount, u.currency, u.booking_date,
           u.value_date, u.remittance_information, u.debtor_name, u.debtor_account, u.matched_amount, u.account_servicer_reference, u.entry_reference,
           array(select jsonb_array_elements_text(u.transaction_references)), u.batch_amount, u.batch_part, u.batch_parts, u.booked_statement_id,
           u.state, u.state_reason, case when u.state = 'held' then now() end, case when u.state = 'held' then 'statement import' end
    from unnest(${column((c) => c.id)}::uuid[], ${column((c) => c.statementId)}::uuid[], ${column((c) => c.collectionAccountId)}::uuid[],
                ${column((c) => c.bankReference)}::text[], ${column((c) => c.amount)}::bigint[],
                ${column((c) => c.currency)}::text[], ${column((c) => c.bookingDate)}::date[], ${column((c) => c.valueDate)}::date[],
                ${column((c) => c.remittanceInformation)}::text[], ${column((c) => c.debtorName)}::text[], ${column((c) => c.debtorAccount)}::text[],
                ${column((c) => c.matchedAmount)}::bigint[], ${column((c) => c.accountServicerReference)}::text[], ${column((c) => c.entryReference)}::text[],
                ${column((c) => JSON.stringify(c.transactionReferences))}::jsonb[], ${column((c) => c.batch?.amount ?? null)}::bigint[],
                ${column((c) => c.batch?.part ?? null)}::int[], ${column((c) => c.batch?.parts ?? null)}::int[], ${column((c) => c.bookedStatementId)}::uuid[],
                ${column((c) => c.state)}::text[], ${column((c) => c.stateReason)}::text[])
      as u(id, statement_id, collection_account_id, bank_reference, amount, currency, booking_date, value_date, remittance_information, debtor_name,
           debtor_account, matched_amount, account_servicer_reference, entry_reference, transaction_references, batch_amount, batch_part, batch_parts,
           booked_statement_id, state, state_reason)
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
