import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import { insertPaymentUpdatedEvents } from '../payments/payment-event-repository.ts';
import { PAYMENT_REQUEST_LIFECYCLE } from '../payments/payment-transitions.ts';
import { fromStatusesSql } from '../db/status-transitions-sql.ts';
import { timeOrderedUuidSql } from '../db/time-ordered-uuid-sql.ts';
import { PAYOUT_LIFECYCLE } from './payout-transitions.ts';

/**
 * Payments one of whose reversals rides in a payout the bank has not answered yet: their newer entries
 * wait for that answer. If the payout failed, its reversal would go back to the unpaid pool while a
 * re-collection paid meanwhile stayed paid, and the biller would be paid more than was collected.
 * Pending payouts are few, so the set is small.
 */
const paymentsWithPendingReversal = sql<string>`(
  select r.payment_request_id from ledger_entries r join payouts p on p.id = r.payout_id
  where p.status = 'pending' and r.amount < 0
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
 * Every (biller, currency) with unpaid ledger entries settled by `cutoff` and funded (src/cash), with their net; the payout
 * run then works each group in its own transaction. Reads the partial index of unpaid entries.
 * The daily run takes live billers only (a sandbox biller's money is simulated, and its payout with
 * it: see src/sandbox); the sandbox's payout asks for its one biller.
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
      sql<number>`sum(amount)::bigint`.as('net'),
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
 * per entry (time-ordered ids, see time-ordered-uuid.ts), in one statement. Returns what was attached
 * so the caller can check it against the payout.
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
        and funded_at is not null
        and pay_date <= ${cutoff}::date
        and payment_request_id not in ${paymentsWithPendingReversal}
      returning id, payment_request_id, kind, amount
    ),
    items as (
      insert into payout_items (id, payout_id, ledger_entry_id, payment_request_id, kind, amount)
      select ${timeOrderedUuidSql}, ${payoutId}::uuid, l.id, l.payment_request_id, l.kind, l.amount
      from linked l
      returning amount
    )
    select coalesce(sum(amount), 0)::bigint as net, count(*)::bigint as entries from items
  `.execute(db);
  return result.rows[0]!;
}

export type PaidOutDirection = 'pay' | 'release';

/**
 * One statement for the whole payout, however many payments it holds: adds (pay) or takes back
 * (release) each payment's net of the payout's items, moves the status in the same write (collected ->
 * paid_out once the whole amount is paid out, paid_out -> collected once it is not any more), and
 * makes every payment whose money changed a new version with its payment_request.updated event, whether
 * or not the status moved (a partly collected payment's paid_out_amount is news to the biller too).
 * Returns how many payments changed status.
 */
export async function applyPayoutToPayments(db: Executor, payoutId: string, direction: PaidOutDirection): Promise<number> {
  const delta = direction === 'pay' ? sql`c.amount` : sql`-c.amount`;
  const to = direction === 'pay' ? 'paid_out' : 'collected';
  // Paying moves whatever the lifecycle lets become paid_out (collected); releasing moves back only
  // what is paid_out, not every status that may become collected.
  const from = fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, to, direction === 'pay' ? undefined : ['paid_out']);
  const moves =
    direction === 'pay'
      ? sql`p.status in (${from}) and p.paid_out_amount + n.amount = p.amount`
      : sql`p.status in (${from}) and p.paid_out_amount - n.amount < p.amount`;
  const result = await sql<{ moved: number }>`
    with net as (
      select payment_request_id as id, sum(amount)::bigint as amount
      from payout_items where payout_id = ${payoutId}::uuid
      group by payment_request_id
    ),
    change as (
      select n.id, n.amount, (${moves}) as moved
      from net n join payment_requests p on p.id = n.id
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
    events as (${insertPaymentUpdatedEvents('updated')})
    select count(*) filter (where moved)::int as moved from updated
  `.execute(db);
  return result.rows[0]!.moved;
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
  await db.updateTable('payout_items').set({ released_at: sql`now()` }).where('payout_id', '=', payoutId).where('released_at', 'is', null).execute();
  return Number(released.numUpdatedRows);
}

/** The bank payment file's rows: every payout made on a date, with the biller's name; never a sandbox biller's. */
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
    .where('clients.sandbox', '=', false)
    .orderBy('clients.name')
    .orderBy('payouts.currency')
    .orderBy('payouts.id')
    .execute();
}
