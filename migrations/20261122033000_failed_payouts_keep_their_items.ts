import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A payout the bank rejected used to lose its items: the entries went back to the unpaid pool, and
// since a ledger entry could sit in only one payout item, the failed payout's items were deleted to
// let the next payout take the entries. Finance then had a failed payout with an amount and no record
// of what it was made of. Now its items stay, marked released, and an entry may be in at most one
// payout item that has not been released: the rule that stops an entry being paid twice.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table payout_items add column released_at timestamptz`.execute(db);
  await sql`alter table payout_items drop constraint payout_items_ledger_entry_id_key`.execute(db);
  await sql`create unique index payout_items_ledger_entry_once on payout_items (ledger_entry_id) where released_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from payout_items where released_at is not null`.execute(db);
  await sql`drop index payout_items_ledger_entry_once`.execute(db);
  await sql`alter table payout_items add constraint payout_items_ledger_entry_id_key unique (ledger_entry_id)`.execute(db);
  await sql`alter table payout_items drop column released_at`.execute(db);
}
