import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A payment request can now fail at the lock without payroll ever being asked for it: its amount is
// over the service's per-request limit (stored before the limit existed, or written around the API).
// The biller sees `failed` with no attempt; status_reason says why. Nullable without a default, so
// adding it rewrites no rows.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table payment_requests add column status_reason text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table payment_requests drop column status_reason`.execute(db);
}
