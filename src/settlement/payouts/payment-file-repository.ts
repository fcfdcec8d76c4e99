import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';

// Payment files and the payouts each instructs (migrations/20261202010000_payment_files.ts). Rows are
// only ever inserted: the tables refuse UPDATE and DELETE.

/** One payout as a payment file instructs it (both renderings, CSV and pain.001). */
export interface PayoutFileRow {
  id: string;
  reference: string;
  biller: string;
  currency: string;
  amount: number;
  account_holder_name: string;
  sort_code: string;
  account_number: string;
  payout_date: string;
  status: string;
}

/**
 * Serialises the writing of one payout date's files until the transaction ends: a second writer waits,
 * then finds the payouts the first one filed already in its file. The primary key of
 * payment_file_payouts (one file per payout) stands behind it.
 */
export async function advisoryLockPaymentFilesOfDate(trx: Executor, payoutDate: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`payment-files:${payoutDate}`}, 0))`.execute(trx);
}

/**
 * The payouts a new file of the date is to instruct: every pending payout of a live biller made on the
 * date that no file holds yet (a paid or failed one is never instructed; a failed payout's money is paid
 * by a new payout, with its own reference), in the order files list them. Row-locked (FOR UPDATE) until the
 * transaction ends, so a payout cannot be marked paid or failed between being read here and filed.
 */
export async function listPayoutsToInstruct(trx: Executor, payoutDate: string): Promise<PayoutFileRow[]> {
  return trx
    .selectFrom('payouts')
    .innerJoin('clients', 'clients.id', 'payouts.biller_client_id')
    .select([
      'payouts.id',
      'payouts.reference',
      'clients.name as biller',
      'payouts.currency',
      'payouts.amount',
      'payouts.account_holder_name',
      'payouts.sort_code',
      'payouts.account_number',
      'payouts.payout_date',
      'payouts.status',
    ])
    .where('payouts.payout_date', '=', payoutDate)
    .where('payouts.status', '=', 'pending')
    .where('clients.sandbox', '=', false)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('payment_file_payouts').select('payout_id').whereRef('payment_file_payouts.payout_id', '=', 'payouts.id'))))
    .orderBy('clients.name')
    .orderBy('payouts.currency')
    .orderBy('payouts.id')
    .forUpdate(['payouts'])
    .execute();
}

/** The next number of a date's files: one more than its last (the legacy file is 0). */
export async function nextPaymentFileSequence(trx: Executor, payoutDate: string): Promise<number> {
  const row = await trx
    .selectFrom('payment_files')
    .select(sql<number>`coalesce(max(sequence), 0)::int + 1`.as('next'))
    .where('payout_date', '=', payoutDate)
    .executeTakeFirstOrThrow();
  return row.next;
}

export interface NewPaymentFile {
  id: string;
  payoutDate: string;
  sequence: number;
  messageId: string;
  requestedExecutionDate: string;
  createdAt: Date;
  createdBy: string;
  pain001: Buffer;
  pain001Sha256: string;
  csv: Buffer;
  csvSha256: string;
  payoutIds: readonly string[];
}

/** The file's row and one row per payout it instructs; a payout already in a file fails the insert (23505). */
export async function insertPaymentFile(trx: Executor, file: NewPaymentFile): Promise<void> {
  await trx
    .insertInto('payment_files')
    .values({
      id: file.id,
      payout_date: file.payoutDate,
      sequence: file.sequence,
      message_id: file.messageId,
      requested_execution_date: file.requestedExecutionDate,
      created_at: file.createdAt,
      created_by: file.createdBy,
      pain001: file.pain001,
      pain001_sha256: file.pain001Sha256,
      csv: file.csv,
      csv_sha256: file.csvSha256,
    })
    .execute();
  await trx
    .insertInto('payment_file_payouts')
    .values(file.payoutIds.map((payoutId) => ({ payout_id: payoutId, payment_file_id: file.id })))
    .execute();
}

/** What a list of files shows of each: everything but the bytes, with what it instructs. */
const summaryColumns = [
  'payment_files.id',
  'payment_files.payout_date',
  'payment_files.sequence',
  'payment_files.legacy',
  'payment_files.message_id',
  'payment_files.requested_execution_date',
  'payment_files.created_at',
  'payment_files.created_by',
  'payment_files.pain001_sha256',
  'payment_files.csv_sha256',
] as const;

export interface PaymentFileSummaryRow {
  id: string;
  payout_date: string;
  sequence: number;
  legacy: boolean;
  message_id: string | null;
  requested_execution_date: string | null;
  created_at: Date;
  created_by: string;
  pain001_sha256: string | null;
  csv_sha256: string | null;
  /** Transfers per currency: [{ currency, transfers, amount }] in currency order. */
  totals: Array<{ currency: string; transfers: number; amount: number }>;
}

/** Per file, per currency, how many payouts it instructs and their sum (minor units). */
const totalsOfFile = sql<PaymentFileSummaryRow['totals']>`coalesce((
  select json_agg(json_build_object('currency', t.currency, 'transfers', t.transfers, 'amount', t.amount) order by t.currency)
  from (
    select p.currency, count(*)::int as transfers, sum(p.amount)::bigint as amount
    from payment_file_payouts fp join payouts p on p.id = fp.payout_id
    where fp.payment_file_id = payment_files.id
    group by p.currency
  ) t
), '[]'::json)`;

/** A safe integer from JSON's bigint (sums of minor units stay within 2^53 here, as every amount does). */
function summaryOf(row: Omit<PaymentFileSummaryRow, 'totals'> & { totals: Array<{ currency: string; transfers: number; amount: number | string }> }): PaymentFileSummaryRow {
  return { ...row, totals: row.totals.map((total) => ({ ...total, amount: Number(total.amount) })) };
}

export interface PaymentFileFilters {
  payoutDate?: string | undefined;
}

/** Files newest first, one page at a time (keyset on created_at, id), optionally of one payout date. */
export async function listPaymentFiles(db: Executor, filters: PaymentFileFilters, paging: PagingQuery): Promise<PaymentFileSummaryRow[]> {
  let query = db.selectFrom('payment_files').select([...summaryColumns, totalsOfFile.as('totals')]);
  if (filters.payoutDate) query = query.where('payment_files.payout_date', '=', filters.payoutDate);
  const rows = await applyPaging(query, 'payment_files', paging).execute();
  return rows.map(summaryOf);
}

/** Every file of a payout date, in their order (the legacy file first). */
export async function listPaymentFilesOfDate(db: Executor, payoutDate: string): Promise<PaymentFileSummaryRow[]> {
  const rows = await db
    .selectFrom('payment_files')
    .select([...summaryColumns, totalsOfFile.as('totals')])
    .where('payment_files.payout_date', '=', payoutDate)
    .orderBy('payment_files.sequence')
    .execute();
  return rows.map(summaryOf);
}

export async function findPaymentFile(db: Executor, fileId: string): Promise<PaymentFileSummaryRow | undefined> {
  const row = await db
    .selectFrom('payment_files')
    .select([...summaryColumns, totalsOfFile.as('totals')])
    .where('payment_files.id', '=', fileId)
    .executeTakeFirst();
  return row ? summaryOf(row) : undefined;
}

/** A date's file by its number. */
export async function findPaymentFileOfDate(db: Executor, payoutDate: string, sequence: number): Promise<PaymentFileSummaryRow | undefined> {
  const row = await db
    .selectFrom('payment_files')
    .select([...summaryColumns, totalsOfFile.as('totals')])
    .where('payment_files.payout_date', '=', payoutDate)
    .where('payment_files.sequence', '=', sequence)
    .executeTakeFirst();
  return row ? summaryOf(row) : undefined;
}

/** The stored bytes of a file's renderings (null for the legacy file, whose bytes were not kept). */
export async function findPaymentFileContent(db: Executor, fileId: string) {
  return db
    .selectFrom('payment_files')
    .select(['id', 'payout_date', 'sequence', 'legacy', 'message_id', 'pain001', 'pain001_sha256', 'csv', 'csv_sha256'])
    .where('id', '=', fileId)
    .executeTakeFirst();
}

/** The payouts a file instructs, as its renderings list them (the biller's name as it is now). */
export async function listPaymentFilePayouts(db: Executor, fileId: string) {
  return db
    .selectFrom('payment_file_payouts')
    .innerJoin('payouts', 'payouts.id', 'payment_file_payouts.payout_id')
    .innerJoin('clients', 'clients.id', 'payouts.biller_client_id')
    .select([
      'payouts.id',
      'payouts.reference',
      'payouts.biller_client_id',
      'clients.name as biller',
      'payouts.currency',
      'payouts.amount',
      'payouts.status',
      'payouts.payout_date',
    ])
    .where('payment_file_payouts.payment_file_id', '=', fileId)
    .orderBy('clients.name')
    .orderBy('payouts.currency')
    .orderBy('payouts.id')
    .execute();
}

/** The file a payout is instructed in, if any. */
export async function findPaymentFileOfPayout(db: Executor, payoutId: string) {
  return db
    .selectFrom('payment_file_payouts')
    .innerJoin('payment_files', 'payment_files.id', 'payment_file_payouts.payment_file_id')
    .select(['payment_files.id', 'payment_files.payout_date', 'payment_files.sequence', 'payment_files.legacy', 'payment_files.message_id'])
    .where('payment_file_payouts.payout_id', '=', payoutId)
    .executeTakeFirst();
}

/** The pending payouts of live billers made on a date that no file instructs yet (how many, for the console). */
export async function countPayoutsToInstruct(db: Executor, payoutDate: string): Promise<number> {
  const row = await db
    .selectFrom('payouts')
    .innerJoin('clients', 'clients.id', 'payouts.biller_client_id')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('payouts.payout_date', '=', payoutDate)
    .where('payouts.status', '=', 'pending')
    .where('clients.sandbox', '=', false)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('payment_file_payouts').select('payout_id').whereRef('payment_file_payouts.payout_id', '=', 'payouts.id'))))
    .executeTakeFirstOrThrow();
  return row.n;
}
