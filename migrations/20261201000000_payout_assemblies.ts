import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A payout used to be written by one transaction: at a million entries, one backend on one core for
// most of a minute while the machine's other cores idled. It is now assembled in chunks that commit on
// their own and run side by side, each attaching the entries of its share of the payment requests to
// the payout's id. Until the last chunk is in, the payout has no row in payouts (nobody pays, fails or
// downloads half a payout); this table holds what was decided when it was planned, and is the record
// that an assembly is under way, so a run that died halfway is finished by the next one. The payout's
// row (dated, referenced and addressed to the biller's account as of the run that finishes it) is
// written, and this one deleted, by the transaction that finishes it. One assembly per biller,
// currency and planned day.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table payout_assemblies (
      payout_id uuid primary key,
      biller_client_id uuid not null references clients (id),
      currency char(3) not null,
      payout_date date not null,
      settled_through date not null,
      chunks integer not null check (chunks between 1 and 64),
      created_at timestamptz not null default now(),
      unique (biller_client_id, currency, payout_date)
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table payout_assemblies`.execute(db);
}
