import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Reconciliation and payouts rewrite every payment request they settle (status, amounts, version).
// PostgreSQL can do that in place, a heap-only tuple update with no new index entries, only when no
// indexed column changes value and the page has room. The lock index's predicate read `status`, so
// every status change wrote a new entry into all five indexes: at a million payments that was most of
// a pay date's write cost. The predicate now reads a stored column that only changes when a request
// enters or leaves `pending`, and pages are half filled so a payroll's settled requests fit beside
// their old versions; pruning reclaims the old versions once the transaction is over.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table payment_requests add column awaiting_lock boolean generated always as (status = 'pending') stored;
    drop index payment_requests_lock_idx;
    create index payment_requests_lock_idx on payment_requests (payroll_id, target_pay_date) where awaiting_lock;
    alter table payment_requests set (fillfactor = 50);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table payment_requests reset (fillfactor);
    drop index payment_requests_lock_idx;
    create index payment_requests_lock_idx on payment_requests (payroll_id, target_pay_date) where status = 'pending';
    alter table payment_requests drop column awaiting_lock;
  `.execute(db);
}
