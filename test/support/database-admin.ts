import type pg from 'pg';

export const TEMPLATE_DATABASE = 'deductions_test_template';

const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');

export function databaseUrl(name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export function adminUrl(): string {
  return databaseUrl('postgres');
}

export async function dropDatabasesLike(admin: pg.Client, pattern: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname like $1', [pattern]);
  for (const { datname } of rows) await admin.query(`drop database if exists "${datname}" with (force)`);
}
