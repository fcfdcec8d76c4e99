import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The tables the nightly cycle rewrites in bulk (a lock, a reconciliation or a payout run updates a
// large share of their rows at once) get autovacuum and analyze after 2 % and 1 % of their rows
// change instead of PostgreSQL's 20 % and 10 %: at a million payment requests the default waits for
// 200,000 dead rows, and the next night's plans are made on last night's statistics.

const nightlyTables = ['payment_requests', 'collection_attempts', 'ledger_entries', 'events', 'webhook_deliveries', 'deduction_lines', 'deduction_line_payments', 'pay_dates'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of nightlyTables) {
    await sql`alter table ${sql.table(table)} set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.01)`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of nightlyTables) {
    await sql`alter table ${sql.table(table)} reset (autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor)`.execute(db);
  }
}
