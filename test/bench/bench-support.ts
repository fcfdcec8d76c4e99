/** Shared by the benchmark scripts: formatting, phase timing and fresh databases. */
import type { RawBuilder, Transaction } from 'kysely';
import pg from 'pg';
import { ensureDatabaseExists } from '../../src/db/admin.ts';
import type { Database } from '../../src/db/connection.ts';
import type { DB } from '../../src/db/tables.ts';

export const seconds = (ms: number) => (ms / 1000).toFixed(2);
export const perSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000)).toLocaleString('en-GB');
export const megabytes = (kb: number) => `${Math.round(kb / 1024)} MB`;

export async function timed<T>(label: string, work: () => Promise<T>, width = 34): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  process.stdout.write(`  ${label.padEnd(width)} ${seconds(ms).padStart(8)} s\n`);
  return { ms, result };
}

class RolledBack extends Error {}

/**
 * Runs `work` in one transaction that is rolled back, timing each statement it runs through `part`:
 * a write bound measures rows that must not stay. Returns each part's milliseconds by name.
 */
export async function timedPartsRolledBack(
  db: Database,
  work: (part: (name: string, statement: RawBuilder<unknown>) => Promise<void>, trx: Transaction<DB>) => Promise<void>,
): Promise<Record<string, number>> {
  const parts: Record<string, number> = {};
  await db
    .transaction()
    .execute(async (trx) => {
      await work(async (name, statement) => {
        const started = performance.now();
        await statement.execute(trx);
        parts[name] = performance.now() - started;
      }, trx);
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  return parts;
}

/**
 * A fresh database each run: migrating a kept one down and up again breaks whenever the migration
 * list it was built with has changed meanwhile (a branch, a renamed migration).
 */
export async function recreateDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: new URL('/postgres', databaseUrl).toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
  await ensureDatabaseExists(databaseUrl);
}
