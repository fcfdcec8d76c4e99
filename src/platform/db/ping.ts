import { sql, type Kysely } from 'kysely';

/** The cheapest statement that proves PostgreSQL answers: readiness and the dependency monitor use it. */
export async function pingDatabase(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}
