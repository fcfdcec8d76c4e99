import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { insertPaymentUpdatedEvents } from '../../collections/payments/payment-event-repository.ts';
import { PAYMENT_REQUEST_LIFECYCLE } from '../../collections/payments/payment-transitions.ts';
import { fromStatusesSql } from '../../platform/db/status-transitions-sql.ts';
import { timeOrderedUuidSql } from '../../platform/db/time-ordered-uuid-sql.ts';
import { PAYOUT_LIFECYCLE } from './payout-transitions.ts';

/**
 * Payments one of whose reversals rides in a payout the bank has not answered yet (or one still being
 * assembled): their newer entries wait for that answer. If the payout failed, its reversal would go
 * back to the unpaid pool while a re-collection paid meanwhile stayed paid, and the biller would be
 * paid more than was collected. Pending payouts and assemblies are few, so the set is small.
 */
const paymentsWithPendingReversal = sql<string>`(
  select r.payment_request_id from ledger_entries r
  where r.amount < 0 and r.payout_id is not null
    and (r.payout_id in (select p.id from payouts p where p.status = 'pending')
         or r.payout_id in (select a.payout_id from payout_assemblies a))
)`;

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
 * Every (biller, currency) with unpaid ledger entries settled by `cutoff` and funded (src/settlement/cash), with their net; the payout
 * run then works each group in its own transaction. Reads the partial index of unpaid entries.
 * The daily run takes live billers only (a sandbox biller's money is simulated, and its payout with
 * it: see src/faces/sandbox); the sandbox's payout asks for its one biller.
 */
export async function listUnpaidLedgerGroups(db: Executor, cutoff: string, billers: { billerClientId: string } | 'live' = 'live') {
  let query = db.selectFrom('ledger_entries');
  query =
    billers === 'live'
      ? query.where('biller_client_id', 'not in', (eb) => eb.selectFrom('clients').select('id').where('sandbox', '=', true))
      : query.where('biller_client_id', '=', billers.billerClientId);
  const rows = await query
    .select([
      'biller_client_id',
      'currency',
      // Exact whatever one biller's total: a group past 2^53 fails on its own (sumUnpaidLedgerEntries), not the listing of every group.
      sql<bigint>`sum(amount)`.as('net'),
      sql<number>`count(*)::bigint`.as('entries'),
    ])
    .where('payout_id', 'is', null)
    .where('funded_at', 'is not', null)
    .where('pay_date', '<=', cutoff)
    .where(sql<boolean>`payment_request_id not in ${paymentsWithPendingReversal}`)
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
    .where('funded_at', 'is not', null)
    .where('pay_date', '<=', cutoff)
    .where(sql<boolean>`payment_request_id not in ${paymentsWithPendingReversal}`)
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

export type PaidOutDirection = 'pay' | 'release';

/**
 * The CTEs that add (pay) or take back (release) each payment's net of `net` (a CTE of `id, amount`, one
 * row per payment request) to its paid_out_amount, move the status in the same write (collected ->
 * paid_out once the whole amount is paid out, paid_out -> collected once it is not any more), and make
 * every payment whose money changed a new version with its payment_request.updated event, whether or
 * not the status moved (a partly collected payment's paid_out_amount is news to the biller too).
 * Leaves `updated` (the payments, with `moved`) for the statement's select.
 */
function paidOutPaymentsSql(net: string, direction: PaidOutDirection): RawBuilder<unknown> {
  const delta = direction === 'pay' ? sql`c.amount` : sql`-c.amount`;
  const to = direction === 'pay' ? 'paid_out' : 'collected';
  // Paying moves whatever the lifecycle lets become paid_out (collected); releasing moves back only
  // what is paid_out, not every status that may become collected.
  const from = fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, to, direction === 'pay' ? undefined : ['paid_out']);
  const moves =
    direction === 'pay' ? sql`p.status in (${from}) and p.paid_out_amount + n.amount = p.amount` : sql`p.status in (${from}) and p.paid_out_amount - n.amount < p.amount`;
  return sql`
    change as (
      select n.id, n.amount, (${moves}) as moved
      from ${sql.table(net)} n join payment_requests p on p.id = n.id
    ),
    updated as (
      update payment_requests pr
      set paid_out_amount = pr.paid_out_amount + ${delta},
          status = case when c.moved then ${to} else pr.status end,
          version = pr.version + 1,
          updated_at = now()
      from change c
      where pr.id = c.id and (c.amount <> 0 or c.moved)
      returning pr.*, c.moved
    ),
    events as (${insertPaymentUpdatedEvents('updated')})`;
}

/** What one chunk of an assembly attached, and how many of its payments it moved to paid_out. */
export interface PaidOutChunk extends UnpaidLedgerTotal {
  paymentsPaidOut: number;
}

/** The payout being assembled, as a chunk needs it. */
export interface AssemblyToPay extends PayoutGroup {
  payoutId: string;
  settledThrough: string;
}

/**
 * One chunk of a payout's assembly, in one statement: links every unpaid, settled, funded entry of the
 * group whose payment request falls in chunk `chunk` of `chunks` (payoutChunkOf: the id's last byte
 * modulo the count) to the payout, writes one signed item per entry (time-ordered ids, see
 * time-ordered-uuid.ts), and pays each of those payments its net (paidOutPaymentsSql) with its event.
 * Only entries whose payout_id this statement sets count, so a chunk that runs again attaches and pays
 * nothing it already did; the unique unreleased item per entry is the last guard.
 */
export async function payOutChunk(db: Executor, assembly: AssemblyToPay, chunk: number, chunks: number): Promise<PaidOutChunk> {
  const inChunk = chunks === 1 ? sql`true` : sql`get_byte(uuid_send(payment_request_id), 15) % ${chunks}::int = ${chunk}::int`;
  const result = await sql<{ net: number; entries: number; payments_paid_out: number }>`
    with linked as (
      update ledger_entries
      set payout_id = ${assembly.payoutId}::uuid
      where biller_client_id = ${assembly.billerClientId}::uuid
        and currency = ${assembly.currency}
        and payout_id is null
        and funded_at is not null
        and pay_date <= ${assembly.settledThrough}::date
        and payment_request_id not in ${paymentsWithPendingReversal}
        and ${inChunk}
      returning id, payment_request_id, kind, amount
    ),
    items as (
      insert into payout_items (id, payout_id, ledger_entry_id, payment_request_id, kind, amount)
      select ${timeOrderedUuidSql}, ${assembly.payoutId}::uuid, l.id, l.payment_request_id, l.kind, l.amount
      from linked l
      returning payment_request_id, amount
    ),
    net as (
      select payment_request_id as id, sum(amount)::bigint as amount from items group by payment_request_id
    ),
    ${paidOutPaymentsSql('net', 'pay')}
    select (select coalesce(sum(amount), 0)::bigint from items) as net,
           (select count(*)::bigint from items) as entries,
           (select count(*) filter (where moved)::int from updated) as payments_paid_out
  `.execute(db);
  const row = result.rows[0]!;
  return { net: row.net, entries: row.entries, paymentsPaidOut: row.payments_paid_out };
}

/**
 * Takes back (release) what a payout's unreleased items paid each payment, in one statement; see
 * paidOutPaymentsSql. Returns how many payments changed status.
 */
export async function releasePayoutFromPayments(db: Executor, payoutId: string): Promise<number> {
  const result = await sql<{ moved: number }>`
    with net as (
      select payment_request_id as id, sum(amount)::bigint as amount
      from payout_items where payout_id = ${payoutId}::uuid and released_at is null
      group by payment_request_id
    ),
    ${paidOutPaymentsSql('net', 'release')}
    select count(*) filter (where moved)::int as moved from updated
  `.execute(db);
  return result.rows[0]!.moved;
}

/** What a payout's unreleased items add up to: its amount, once assembled. */
export async function sumPayoutItems(db: Executor, payoutId: string): Promise<UnpaidLedgerTotal> {
  const row = await db
    .selectFrom('payout_items')
    .select([sql<number>`coalesce(sum(amount), 0)::bigint`.as('net'), sql<number>`count(*)::bigint`.as('entries')])
    .where('payout_id', '=', payoutId)
    .where('released_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { net: row.net, entries: row.entries };
}

export interface NewPayoutAssembly extends PayoutGroup {
  payoutId: string;
  payoutDate: string;
  settledThrough: string;
  chunks: number;
}

/**
 * Undefined when this biller and currency already have an assembly that day: the unique key, not a
 * prior read, decides which of two concurrent runs plans it (the other finishes the winner's).
 */
export async function insertPayoutAssembly(db: Executor, assembly: NewPayoutAssembly) {
  return db
    .insertInto('payout_assemblies')
    .values({
      payout_id: assembly.payoutId,
      biller_client_id: assembly.billerClientId,
      currency: assembly.currency,
      payout_date: assembly.payoutDate,
      settled_through: assembly.settledThrough,
      chunks: assembly.chunks,
    })
    .onConflict((oc) => oc.columns(['biller_client_id', 'currency', 'payout_date']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findPayoutAssemblyOfDay(db: Executor, group: PayoutGroup, payoutDate: string) {
  return db
    .selectFrom('payout_assemblies')
    .selectAll()
    .where('biller_client_id', '=', group.billerClientId)
    .where('currency', '=', group.currency)
    .where('payout_date', '=', payoutDate)
    .executeTakeFirst();
}

/**
 * Assemblies a run left unfinished (it died between chunks), oldest first: live billers' for the daily
 * run, or one biller's.
 */
export async function listPayoutAssemblies(db: Executor, billers: { billerClientId: string } | 'live') {
  let query = db.selectFrom('payout_assemblies').selectAll();
  query =
    billers === 'live'
      ? query.where('biller_client_id', 'not in', (eb) => eb.selectFrom('clients').select('id').where('sandbox', '=', true))
      : query.where('biller_client_id', '=', billers.billerClientId);
  return query.orderBy('created_at').orderBy('payout_id').execute();
}

/**
 * Whether the assembly is still open, holding it (share) until the caller's transaction ends, so the
 * transaction that finishes it waits for this one. Under repeatable read, an assembly finished after
 * the caller's snapshot fails the caller (serialization), which then finds it gone.
 */
export async function holdOpenPayoutAssembly(db: Executor, payoutId: string): Promise<boolean> {
  const row = await db.selectFrom('payout_assemblies').select('payout_id').where('payout_id', '=', payoutId).forShare().executeTakeFirst();
  return row !== undefined;
}

/** The assembly's row, row-locked: whoever holds it finishes the payout; a second finisher then finds it gone. */
export async function rowLockPayoutAssembly(db: Executor, payoutId: string) {
  return db.selectFrom('payout_assemblies').selectAll().where('payout_id', '=', payoutId).forUpdate().executeTakeFirst();
}

/** Whether a payout already has this bank reference (the payout date and ten hex digits of an id). */
export async function payoutReferenceTaken(db: Executor, reference: string): Promise<boolean> {
  const row = await db.selectFrom('payouts').select('id').where('reference', '=', reference).executeTakeFirst();
  return row !== undefined;
}

export interface AssembledPayout extends PayoutGroup {
  id: string;
  amount: number;
  payoutDate: string;
  reference: string;
  account: { account_number: string; sort_code: string; account_holder_name: string };
}

/** The assembled payout's row, with the amount its items add up to; the assembly's row goes with it. */
export async function insertAssembledPayout(db: Executor, payout: AssembledPayout) {
  const row = await db
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
    .returningAll()
    .executeTakeFirstOrThrow();
  await deletePayoutAssembly(db, payout.id);
  return row;
}

export async function deletePayoutAssembly(db: Executor, payoutId: string): Promise<void> {
  await db.deleteFrom('payout_assemblies').where('payout_id', '=', payoutId).execute();
}

/**
 * Undoes an assembly that is not to become a payout (what it attached nets to nothing payable, the
 * biller has no account any more, the day already has the group's payout): its payments' paid-out
 * amounts come back down, with their events; its entries return to the unpaid pool and its items, of a
 * payout that never existed, are deleted. Returns how many entries went back.
 */
export async function withdrawPayoutAssembly(db: Executor, payoutId: string): Promise<number> {
  await releasePayoutFromPayments(db, payoutId);
  const returned = await db.updateTable('ledger_entries').set({ payout_id: null }).where('payout_id', '=', payoutId).executeTakeFirst();
  await db.deleteFrom('payout_items').where('payout_id', '=', payoutId).execute();
  await deletePayoutAssembly(db, payoutId);
  return Number(returned.numUpdatedRows);
}

/** Operators act on any biller's payout, so no tenant filter; the row lock serialises paid/failed. */
/** Only a payout of a biller of the given mode: a sandbox biller's payouts are not live data, nor the reverse. */
export async function findPayoutForUpdate(db: Executor, payoutId: string, mode: { sandbox: boolean }) {
  return db
    .selectFrom('payouts')
    .selectAll()
    .where('id', '=', payoutId)
    .where('biller_client_id', 'in', (eb) => eb.selectFrom('clients').select('id').where('sandbox', '=', mode.sandbox))
    .forUpdate()
    .executeTakeFirst();
}

export async function setPayoutPaid(db: Executor, payoutId: string) {
  return db
    .updateTable('payouts')
    .set({ status: 'paid', paid_at: sql`now()`, version: sql`version + 1` })
    .where('id', '=', payoutId)
    .where('status', 'in', PAYOUT_LIFECYCLE.fromStatuses('paid'))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setPayoutFailed(db: Executor, payoutId: string, reason: string) {
  return db
    .updateTable('payouts')
    .set({ status: 'failed', failed_at: sql`now()`, failure_reason: reason, version: sql`version + 1` })
    .where('id', '=', payoutId)
    .where('status', 'in', PAYOUT_LIFECYCLE.fromStatuses('failed'))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Hands a failed payout's entries back to the unpaid pool. Its items stay, marked released, as the
 * record of what the failed transfer held: an entry may sit in only one unreleased item, so the next
 * payout can take it again. The failed payout keeps its amount, reference and failure reason.
 */
export async function releasePayoutEntries(db: Executor, payoutId: string): Promise<number> {
  const released = await db.updateTable('ledger_entries').set({ payout_id: null }).where('payout_id', '=', payoutId).executeTakeFirst();
  await db
    .updateTable('payout_items')
    .set({ released_at: sql`now()` })
    .where('payout_id', '=', payoutId)
    .where('released_at', 'is', null)
    .execute();
  return Number(released.numUpdatedRows);
}
