import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Creating a payment request now checks what its mandate's pending requests already ask on each pay
// date (the per-mandate, per-pay-date amount limit). The mandate index would read every request the
// mandate ever had; this one holds only the pending ones, so the lookup costs what is pending (a few
// rows) however long the mandate has run. Its predicate is the lock index's, so the lock's move out
// of pending writes no entry here; and it holds no column settling changes (not even as INCLUDE), so
// collections and payouts stay heap-only updates.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index payment_requests_pending_by_mandate_idx on payment_requests (mandate_id, target_pay_date) where awaiting_lock
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index payment_requests_pending_by_mandate_idx`.execute(db);
}
