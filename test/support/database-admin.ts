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

/**
 * Test database names carry their creation time, so concurrent runs never drop each other's, and a
 * test file's its run's id (the template's hex), so the run drops what its files left behind.
 */
export function testDatabaseName(kind: 'dtpl' | 'dtest', runId = ''): string {
  return `${kind}_${Math.floor(Date.now() / 1000)}_${runId}${randomBytes(4).toString('hex')}`;
}

/** The run's id in its template's name: `dtpl_<time>_<id>`. */
export function runIdOf(templateName: string): string {
  return templateName.split('_')[2]!;
}

/** Drops every test database of one run that is still there (those whose files' own drop did not finish). */
export async function dropRunDatabases(admin: pg.Client, runId: string): Promise<number> {
  const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname ~ $1', [`^dtest_[0-9]+_${runId}[0-9a-f]{8}$`]);
  for (const { datname } of rows) await admin.query(`drop database if exists "${datname}" with (force)`);
  return rows.length;
}

export async function dropStaleTestDatabases(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>("select datname from pg_database where datname ~ '^(dtpl|dtest)_[0-9]+_[0-9a-f]+$'");
  const now = Date.now() / 1000;
  for (const { datname } of rows) {
    if (now - Number(datname.split('_')[1]) > STALE_AFTER_SECONDS) {
      await admin.query(`drop database if exists "${datname}" with (force)`);
    }
  }
}
