import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The payout run keeps back every payment with a reversal in a pending payout or an assembly
// (paymentsWithPendingReversal): it looked reversals up by payout_id, which no index holds, so each
// run read every ledger entry ever written, several times. A month of nights at 50,000 payment
// requests a night took the payout phase from 2.0 s to 8.9 s (test/bench/nights.ts, issue 36). Only
// reversals attached to a payout are indexed: a few rows, so the night's collections (positive
// entries) write nothing more. Built in the migration's transaction: on a large ledger this holds
// writes to ledger_entries for one read of the table.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index ledger_entries_reversals_by_payout_idx on ledger_entries (payout_id) where amount < 0 and payout_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index ledger_entries_reversals_by_payout_idx`.execute(db);
}
