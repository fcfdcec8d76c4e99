import { randomBytes } from 'node:crypto';
import type pg from 'pg';

const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
/** Leftovers of a crashed run older than this are dropped by the next run. */
const STALE_AFTER_SECONDS = 2 * 3600;

export function databaseUrl(name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export function adminUrl(): string {
  return databaseUrl('postgres');
}

/** Test database names carry their creation time, so concurrent runs never drop each other's. */
export function testDatabaseName(kind: 'dtpl' | 'dtest'): string {
  return `${kind}_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
}

export async function dropStaleTestDatabases(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    "select datname from pg_database where datname ~ '^(dtpl|dtest)_[0-9]+_[0-9a-f]+$'",
  );
  const now = Date.now() / 1000;
  for (const { datname } of rows) {
    if (now - Number(datname.split('_')[1]) > STALE_AFTER_SECONDS) {
      await admin.query(`drop database if exists "${datname}" with (force)`);
    }
  }
}
