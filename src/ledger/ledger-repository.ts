import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { LedgerEntryKind } from '../db/tables.ts';

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
 * One statement however many entries. No ON CONFLICT: a clash on (attempt, revision, kind) means a
 * revision was computed twice, and the transaction must fail rather than leave collected amounts
 * out of step with the ledger.
 */
export async function insertLedgerEntries(db: Executor, entries: readonly NewLedgerEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await sql`
    insert into ledger_entries (biller_client_id, payment_request_id, collection_attempt_id, revision, kind, amount, currency, pay_date)
    select * from unnest(
      ${entries.map((e) => e.billerClientId)}::uuid[],
      ${entries.map((e) => e.paymentRequestId)}::uuid[],
      ${entries.map((e) => e.collectionAttemptId)}::uuid[],
      ${entries.map((e) => e.revision)}::int[],
      ${entries.map((e) => e.kind)}::text[],
      ${entries.map((e) => e.amount)}::bigint[],
      ${entries.map((e) => e.currency)}::char(3)[],
      ${entries.map((e) => e.payDate)}::date[]
    )
  `.execute(db);
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
