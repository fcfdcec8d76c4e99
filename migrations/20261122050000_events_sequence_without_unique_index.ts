import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// events.sequence is generated always as identity, so only its sequence assigns it, and nothing looks
// an event up by it: the dispatcher reads it through the undispatched index. Its unique index cost one
// more index entry for each of the million events a nightly lock writes.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table events drop constraint events_sequence_key`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table events add constraint events_sequence_key unique (sequence)`.execute(db);
}
