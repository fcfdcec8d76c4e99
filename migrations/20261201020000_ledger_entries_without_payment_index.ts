import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// ledger_entries_payment_idx (payment_request_id) is read by no statement of the service: reconciliation
// finds a payment's entries through its collection attempts, the payout run through the unpaid indexes,
// funding and the reports through the attempts. Only the ledger audits look entries up by payment, and
// they read the table once. Yet reconciliation wrote an entry into it for every ledger entry it posted,
// and the payout run another for every entry it attached (a new row version): two million index
// entries a night for nothing.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index ledger_entries_payment_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index ledger_entries_payment_idx on ledger_entries (payment_request_id)`.execute(db);
}
