import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { PaymentRequestsTable } from '../db/tables.ts';

type PaymentRequestRow = Selectable<PaymentRequestsTable>;

/** One biller's money in one currency: payouts never mix either. */
export interface PayoutGroup {
  billerClientId: string;
  currency: string;
}

export interface UnpaidLedgerTotal {
  /** Signed minor units: collections minus reversals. */
  net: number;
  entries: number;
}

/**
 * Every (biller, currency) with unpaid ledger entries settled by `cutoff`, with their net; the payout
 * run then works each group in its own transaction. Reads the partial index of unpaid entries.
 */
export async function listUnpaidLedgerGroups(db: Executor, cutoff: string) {
  const rows = await db
    .selectFrom('ledger_entries')
    .select([
      'biller_client_id',
      'currency',
      sql<number>`sum(amount)::bigint`.as('net'),
      sql<number>`count(*)::bigint`.as('entries'),
    ])
    .where('payout_id', 'is', null)
    .where('pay_date', '<=', cutoff)
    .groupBy(['biller_client_id', 'currency'])
    .orderBy('biller_client_id')
    .orderBy('currency')
    .execute();
  return rows.map((row) => ({ billerClientId: row.biller_client_id, currency: row.currency, net: row.net, entries: row.entries }));
}

export async function sumUnpaidLedgerEntries(db: Executor, group: PayoutGroup, cutoff: string): Promise<UnpaidLedgerTotal> {
  const row = await db
    .selectFrom('ledger_entries')
    .select([sql<number>`coalesce(sum(amount), 0)::bigint`.as('net'), sql<number>`count(*)::bigint`.as('entries')])
    .where('biller_client_id', '=', group.billerClientId)
    .where('currency', '=', group.currency)
    .where('payout_id', 'is', null)
    .where('pay_date', '<=', cutoff)
    .executeTakeFirstOrThrow();
  return { net: row.net, entries: row.entries };
}

export async function findPayoutOfDay(db: Executor, group: PayoutGroup, payoutDate: string) {
  return db
    .selectFrom('payouts')
    .select(['id', 'reference', 'amount'])
    .where('biller_client_id', '=', group.billerClientId)
    .where('currency', '=', group.currency)
    .where('payout_date', '=', payoutDate)
    .executeTakeFirst();
}

export async function findActiveBeneficiaryAccount(db: Executor, group: PayoutGroup) {
  return db
    .selectFrom('beneficiary_accounts')
    .select(['account_number', 'sort_code', 'account_holder_name'])
    .where('biller_client_id', '=', group.billerClientId)
    .where('currency', '=', group.currency)
    .where('active', '=', true)
    .executeTakeFirst();
}

export interface NewPayout extends PayoutGroup {
  id: string;
  amount: number;
  payoutDate: string;
  reference: string;
  account: { account_number: string; sort_code: string; account_holder_name: string };
}

/**
 * Undefined when this biller and currency already have a payout that day: the unique key, not a prior
 * read, is what makes a concurrent or repeated run a no-op.
 */
export async function insertPayout(db: Executor, payout: NewPayout) {
  return db
    .insertInto('payouts')
    .values({
      id: payout.id,
      biller_client_id: payout.billerClientId,
      currency: payout.currency,
      amount: payout.amount,
      payout_date: payout.payoutDate,
      reference: payout.reference,
      account_number: payout.account.account_number,
      sort_code: payout.account.sort_code,
      account_holder_name: payout.account.account_holder_name,
    })
    .onConflict((oc) => oc.columns(['biller_client_id', 'currency', 'payout_date']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * Set-based: links every unpaid, settled entry of the group to the payout and writes one signed item
 * per entry, in one statement. Returns what was attached so the caller can check it against the payout.
 */
export async function attachUnpaidEntriesToPayout(
  db: Executor,
  payoutId: string,
  group: PayoutGroup,
  cutoff: string,
): Promise<UnpaidLedgerTotal> {
  const result = await sql<{ net: number; entries: number }>`
    with linked as (
      update ledger_entries
      set payout_id = ${payoutId}::uuid
      where biller_client_id = ${group.billerClientId}::uuid
        and currency = ${group.currency}
        and payout_id is null
        and pay_date <= ${cutoff}::date
      returning id, payment_request_id, kind, amount
    ),
    items as (
      insert into payout_items (payout_id, ledger_entry_id, payment_request_id, kind, amount)
      select ${payoutId}::uuid, id, payment_request_id, kind, amount from linked
      returning amount
    )
    select coalesce(sum(amount), 0)::bigint as net, count(*)::bigint as entries from items
  `.execute(db);
  return result.rows[0]!;
}

/**
 * Stages the payout's net per payment in a temporary table (dropped at commit), so its payments can be
 * updated a chunk at a time: one biller's payout can hold hundreds of thousands of them.
 */
export async function stagePayoutPayments(db: Executor, payoutId: string): Promise<void> {
  await sql`drop table if exists payout_payments`.execute(db);
  await sql`
    create temp table payout_payments on commit drop as
    select payment_request_id as id, sum(amount)::bigint as amount
    from payout_items where payout_id = ${payoutId}::uuid
    group by payment_request_id
  `.execute(db);
  await sql`alter table payout_payments add primary key (id)`.execute(db);
}

/** The next chunk of staged payment ids after `after` (all of them from the start when null). */
export async function nextStagedPayments(db: Executor, after: string | null, limit: number): Promise<string[]> {
  const result = await sql<{ id: string }>`
    select id from payout_payments
    where ${after === null ? sql`true` : sql`id > ${after}::uuid`}
    order by id limit ${limit}
  `.execute(db);
  return result.rows.map((row) => row.id);
}

export type PaidOutDirection = 'pay' | 'release';

/**
 * Adds (pay) or takes back (release) the staged amounts of some payments, and moves the status in the
 * same write: collected -> paid_out once the whole amount is paid out, paid_out -> collected once it is
 * not any more. Returns the payments whose status moved, as they are now.
 */
export async function applyStagedPaidOutAmounts(db: Executor, ids: readonly string[], direction: PaidOutDirection) {
  if (ids.length === 0) return [];
  const delta = direction === 'pay' ? sql`chunk.amount` : sql`-chunk.amount`;
  const to = direction === 'pay' ? 'paid_out' : 'collected';
  const moves =
    direction === 'pay'
      ? sql`p.status = 'collected' and p.paid_out_amount + c.amount = p.amount`
      : sql`p.status = 'paid_out' and p.paid_out_amount - c.amount < p.amount`;
  const result = await sql<PaymentRequestRow & { moved: boolean }>`
    with chunk as (
      select c.id, c.amount, (${moves}) as moved
      from payout_payments c join payment_requests p on p.id = c.id
      where c.id = any(${[...ids]}::uuid[])
    )
    update payment_requests pr
    set paid_out_amount = pr.paid_out_amount + ${delta},
        status = case when chunk.moved then ${to} else pr.status end,
        version = pr.version + case when chunk.moved then 1 else 0 end,
        updated_at = now()
    from chunk
    where pr.id = chunk.id and (chunk.amount <> 0 or chunk.moved)
    returning pr.*, chunk.moved
  `.execute(db);
  return result.rows.filter((row) => row.moved).map(({ moved: _moved, ...payment }) => payment);
}

/** Operators act on any biller's payout, so no tenant filter; the row lock serialises paid/failed. */
export async function findPayoutForUpdate(db: Executor, payoutId: string) {
  return db.selectFrom('payouts').selectAll().where('id', '=', payoutId).forUpdate().executeTakeFirst();
}

export async function setPayoutPaid(db: Executor, payoutId: string) {
  return db
    .updateTable('payouts')
    .set({ status: 'paid', paid_at: sql`now()`, version: sql`version + 1` })
    .where('id', '=', payoutId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setPayoutFailed(db: Executor, payoutId: string, reason: string) {
  return db
    .updateTable('payouts')
    .set({ status: 'failed', failed_at: sql`now()`, failure_reason: reason, version: sql`version + 1` })
    .where('id', '=', payoutId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Hands a failed payout's entries back to the unpaid pool. Its items go: payout_items.ledger_entry_id is
 * unique, so an entry can only sit in the payout that will actually pay it. The failed payout keeps its
 * amount, reference and failure reason.
 */
export async function releasePayoutEntries(db: Executor, payoutId: string): Promise<number> {
  const released = await db.updateTable('ledger_entries').set({ payout_id: null }).where('payout_id', '=', payoutId).executeTakeFirst();
  await db.deleteFrom('payout_items').where('payout_id', '=', payoutId).execute();
  return Number(released.numUpdatedRows);
}

/** The bank payment file's rows: every payout made on a date, with the biller's name. */
export async function listPayoutsMadeOn(db: Executor, payoutDate: string) {
  return db
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
    .orderBy('clients.name')
    .orderBy('payouts.currency')
    .orderBy('payouts.id')
    .execute();
}
