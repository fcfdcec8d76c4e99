import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The payout run marks each entry it funds (funded_at), then attaches it to its payout. Both were
// updates that wrote a new entry into every index of ledger_entries: funded_at was read by the
// predicate of the index of unfunded entries, and the pages, filled by reconciliation, had no room for
// a second version. At a million entries the funding update alone took most of a payout run's first
// half. The index of entries waiting for funding now covers every unpaid entry (funding reads
// funded_at from the row: a funded entry usually leaves the index with the payout that follows its
// funding; a biller without a beneficiary account, or with a net of reversals, keeps it there until
// its payout), so no index reads funded_at, and pages written from now on are half filled: funding
// becomes a heap-only update (entries already on full pages are funded as before, until a VACUUM FULL
// or pg_repack rewrites the table). The attach still changes payout_id, which the unpaid indexes read.
// The index is rebuilt under the table's lock: upgrade outside the nightly window.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    drop index ledger_entries_unfunded_idx;
    create index ledger_entries_unpaid_by_attempt_idx on ledger_entries (collection_attempt_id) where payout_id is null;
    alter table ledger_entries set (fillfactor = 50);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table ledger_entries reset (fillfactor);
    drop index ledger_entries_unpaid_by_attempt_idx;
    create index ledger_entries_unfunded_idx on ledger_entries (collection_attempt_id) where funded_at is null and payout_id is null;
  `.execute(db);
}
