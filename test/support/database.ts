import { sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { adminUrl, databaseUrl, runIdOf, testDatabaseName } from './database-admin.ts';

export interface TestDatabase {
  name: string;
  url: string;
  db: Database;
  drop(): Promise<void>;
}

/** A private copy of the migrated template for one test file. */
export async function createTestDatabase(poolSize = 5): Promise<TestDatabase> {
  const name = testDatabaseName('dtest', runIdOf(inject('templateDatabase')));
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.query(`create database ${name} template ${inject('templateDatabase')}`);
        break;
      } catch (error) {
        // Two files cloning at the same instant can briefly see each other on the template.
        if (attempt >= 10 || !String(error).includes('being accessed by other users')) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await admin.end();
  }
  const url = databaseUrl(name);
  const db = createDatabase(url, poolSize);
  return {
    name,
    url,
    db,
    async drop() {
      await db.destroy();
      // Off the test file's critical path (a drop takes 250–625 ms): the next file starts meanwhile,
      // and the run's teardown drops whatever a file's end cut short.
      void dropInBackground(name);
    },
  };
}

async function dropInBackground(name: string): Promise<void> {
  const cleanup = new pg.Client({ connectionString: adminUrl() });
  try {
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${name} with (force)`);
  } catch {
    // Left to the run's teardown.
  } finally {
    await cleanup.end().catch(() => {});
  }
}

/**
 * Until at least `count` sessions of this database wait for a lock another transaction holds; `what`
 * names them when they never do. Up to 20 s by the clock: on a loaded machine (the whole suite on two
 * cores) the requests that are to wait can take seconds to get there. A failure says what every
 * session of the database was doing, since "never came" alone cannot be told from a lost request.
 */
export async function untilSessionsWaitForDatabaseLocks(db: Database, count: number, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'
    `.execute(db);
    if (rows[0]!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const { rows: sessions } = await sql<{ session: string }>`
    select concat_ws(' ', state, wait_event_type, wait_event, left(regexp_replace(query, '\s+', ' ', 'g'), 80)) as session
      from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()
  `.execute(db);
  throw new Error(`${what} never came to wait for a lock (${count} wanted); the database's sessions: ${sessions.map((s) => s.session).join(' | ')}`);
}
