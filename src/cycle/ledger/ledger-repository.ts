import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { LedgerEntryKind } from '../../platform/db/tables.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';

export interface NewLedgerEntry {
  billerClientId: string;
  paymentRequestId: string;
  collectionAttemptId: string;
  revision: number;
  kind: LedgerEntryKind;
  amount: number;
  currency: string;
  payDate: string;
}

/**
 * The `insert into ledger_entries` of any number of entries (time-ordered ids, see time-ordered-uuid.ts),
 * for a statement that writes them together with the attempts they post for. No ON CONFLICT: a clash on (attempt, revision, kind) means a
 * revision was computed twice, and the transaction must fail rather than leave collected amounts out
 * of step with the ledger.
 */
export function ledgerEntriesInsert(entries: readonly NewLedgerEntry[]): RawBuilder<unknown> {
  return sql`
    insert into ledger_entries (id, biller_client_id, payment_request_id, collection_attempt_id, revision, kind, amount, currency, pay_date)
    select * from unnest(
      ${entries.map(() => timeOrderedUuid())}::uuid[],
      ${entries.map((e) => e.billerClientId)}::uuid[],
      ${entries.map((e) => e.paymentRequestId)}::uuid[],
      ${entries.map((e) => e.collectionAttemptId)}::uuid[],
      ${entries.map((e) => e.revision)}::int[],
      ${entries.map((e) => e.kind)}::text[],
      ${entries.map((e) => e.amount)}::bigint[],
      ${entries.map((e) => e.currency)}::char(3)[],
      ${entries.map((e) => e.payDate)}::date[]
    )
  `;
}

/** One statement however many entries (see ledgerEntriesInsert). */
export async function insertLedgerEntries(db: Executor, entries: readonly NewLedgerEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await ledgerEntriesInsert(entries).execute(db);
}

export interface LedgerDiscrepancy {
  payment_request_id: string;
  collected_amount: number;
  ledger_amount: number;
}

/**
 * Payments whose collected_amount is not the sum of their ledger entries: always empty unless
 * something wrote one without the other. For audits and the ledger invariant tests.
 */
export async function findLedgerDiscrepancies(db: Executor, paymentRequestIds: readonly string[]): Promise<LedgerDiscrepancy[]> {
  if (paymentRequestIds.length === 0) return [];
  const result = await sql<LedgerDiscrepancy>`
    select pr.id as payment_request_id, pr.collected_amount,
           coalesce((select sum(le.amount) from ledger_entries le where le.payment_request_id = pr.id), 0)::bigint as ledger_amount
    from payment_requests pr
    where pr.id = any(${paymentRequestIds}::uuid[])
      and pr.collected_amount <> coalesce((select sum(le.amount) from ledger_entries le where le.payment_request_id = pr.id), 0)
  `.execute(db);
  return result.rows;
}

export interface BrokenLedgerLink {
  table: 'collection_attempts' | 'ledger_entries' | 'payout_items';
  id: string;
  problem: string;
}

/**
 * Rows of the payments' attempts, ledger entries and payout items whose references do not hold. Their
 * foreign keys are gone (migration 20261122030000: the writing statements guarantee them), so this is
 * the check, and a stricter one than the keys were: an attempt's copy of its payment's identity and an
 * entry's payment and biller must agree with the payment, an item must match its entry and sit in the
 * payout the entry is linked to (or, released, in a failed payout the entry has left). A payout still
 * being assembled (payout_assemblies) has no row in payouts yet and is not missing. Always empty
 * unless something wrote these tables outside reconciliation and the payout run. For audits and the
 * invariant tests.
 */
export async function findBrokenLedgerLinks(db: Executor, paymentRequestIds: readonly string[]): Promise<BrokenLedgerLink[]> {
  if (paymentRequestIds.length === 0) return [];
  const ids = [...paymentRequestIds];
  const result = await sql<BrokenLedgerLink>`
    select 'collection_attempts' as "table", a.id,
           case when pr.id is null then 'payment request missing'
                when pd.payroll_id is null then 'pay date missing'
                else 'employee, mandate, biller or currency is not its payment''s' end as problem
    from collection_attempts a
    left join payment_requests pr on pr.id = a.payment_request_id
    left join pay_dates pd on pd.payroll_id = a.payroll_id and pd.pay_date = a.pay_date
    where a.payment_request_id = any(${ids}::uuid[])
      and (pr.id is null or pd.payroll_id is null
           or (pr.employee_id, pr.mandate_id, pr.biller_client_id, pr.currency) <> (a.employee_id, a.mandate_id, a.biller_client_id, a.currency))
    union all
    select 'ledger_entries', le.id,
           case when a.id is null then 'collection attempt missing'
                when a.payment_request_id <> le.payment_request_id then 'payment request is not its attempt''s'
                when pr.id is null then 'payment request missing'
                when pr.biller_client_id <> le.biller_client_id or pr.currency <> le.currency then 'biller or currency is not its payment''s'
                when a.pay_date <> le.pay_date then 'pay date is not its attempt''s'
                else 'payout missing' end
    from ledger_entries le
    left join collection_attempts a on a.id = le.collection_attempt_id
    left join payment_requests pr on pr.id = le.payment_request_id
    left join payouts po on po.id = le.payout_id
    left join payout_assemblies pa on pa.payout_id = le.payout_id
    where le.payment_request_id = any(${ids}::uuid[])
      and (a.id is null or a.payment_request_id <> le.payment_request_id or pr.id is null
           or pr.biller_client_id <> le.biller_client_id or pr.currency <> le.currency or a.pay_date <> le.pay_date
           or (le.payout_id is not null and po.id is null and pa.payout_id is null))
    union all
    select 'payout_items', i.id,
           case when po.id is null and pa.payout_id is null then 'payout missing'
                when le.id is null then 'ledger entry missing'
                when i.released_at is null and le.payout_id is distinct from i.payout_id then 'ledger entry is not linked to its payout'
                when i.released_at is not null and (po.status is distinct from 'failed' or le.payout_id = i.payout_id) then 'released, yet its payout did not fail or still holds the entry'
                else 'payment, kind or amount is not its ledger entry''s' end
    from payout_items i
    left join payouts po on po.id = i.payout_id
    left join payout_assemblies pa on pa.payout_id = i.payout_id
    left join ledger_entries le on le.id = i.ledger_entry_id
    where i.payment_request_id = any(${ids}::uuid[])
      and ((po.id is null and pa.payout_id is null) or le.id is null
           or (i.released_at is null and le.payout_id is distinct from i.payout_id)
           or (i.released_at is not null and (po.status is distinct from 'failed' or le.payout_id is not distinct from i.payout_id))
           or le.payment_request_id <> i.payment_request_id or le.kind <> i.kind or le.amount <> i.amount)
    order by 1, 2
  `.execute(db);
  return result.rows;
}
