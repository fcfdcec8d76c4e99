import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A client's secret can now be rotated. Access tokens carry the version of the secret they were
// issued against (claim "sv"), and a token of an older version stops working once the client's row
// says so: rotating a leaked secret also ends the tokens obtained with it.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table clients add column secret_version integer not null default 1 check (secret_version >= 1);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table clients drop column secret_version`.execute(db);
}
