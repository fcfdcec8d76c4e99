import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A console account is no longer locked after failed sign-ins (anyone who knew an email could keep its
// owner out): failures hold back the addresses and browsers they come from, counted in Redis. The
// account's own failure count and lock go.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table console_users drop column failed_sign_ins, drop column locked_until;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table console_users add column failed_sign_ins integer not null default 0, add column locked_until timestamptz;
  `.execute(db);
}
