import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/platform/db/connection.ts';
import { createMigrator } from '../../../src/platform/db/migrator.ts';
import { adminUrl, databaseUrl, testDatabaseName } from '../../support/database-admin.ts';

// A database of its own, migrated to just before pay dates kept their first lock time, holding pay
// dates the old code locked and re-ran (locked_at the re-run's).
const name = testDatabaseName('dtest');
const MIGRATION = '20261218000000_pay_date_first_lock';
let db: Kysely<any>;
let before: string;

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const payroll = randomUUID();
const FIRST_LOCK = '2026-11-18T02:00:00.000Z';
const RERUN = '2026-11-25T14:30:00.000Z';
const LOCKED_WITHOUT_SNAPSHOT = '2026-12-16T02:00:00.000Z';

beforeAll(async () => {
  await admin(`create database ${name}`);
  db = createDatabase(databaseUrl(name), 2);
  // The migration before this one, whatever it is (the list grows after it).
  const migrations = (await createMigrator(db).getMigrations()).map((migration) => migration.name);
  before = migrations[migrations.indexOf(MIGRATION) - 1]!;
  const { error } = await createMigrator(db).migrateTo(before);
  if (error) throw error;
  const provider = randomUUID();
  const employer = randomUUID();
  await sql`
    with
      p as (insert into payroll_providers (id, name) values (${provider}, 'Provider') returning id),
      e as (insert into employers (id, payroll_provider_id, external_id, name) select ${employer}, p.id, 'E1', 'Employer' from p returning id),
      pr as (insert into payrolls (id, employer_id, payroll_provider_id, external_id, name) select ${payroll}, e.id, ${provider}, 'PR1', 'Payroll' from e returning id)
    insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date, locked_at)
    select pr.id, d.pay_date::date, d.cutoff::date, d.period, d.lock_date::date, d.locked_at::timestamptz from pr,
      (values ('2026-11-27', '2026-11-20', '8-2026', '2026-11-18', ${RERUN}),
              ('2026-12-24', '2026-12-17', '9-2026', '2026-12-16', ${LOCKED_WITHOUT_SNAPSHOT}),
              ('2027-01-29', '2027-01-22', '10-2026', '2027-01-20', null)) as d(pay_date, cutoff, period, lock_date, locked_at)
  `.execute(db);
  // The lock's snapshot and the re-run's, each stamped with its own lock's time.
  await sql`
    insert into deduction_snapshots (payroll_id, pay_date, pay_period, snapshot_version, status, currency, total_amount, employee_count, locked_at) values
      (${payroll}, '2026-11-27', '8-2026', 1, 'superseded', 'GBP', 0, 0, ${FIRST_LOCK}),
      (${payroll}, '2026-11-27', '8-2026', 2, 'locked', 'GBP', 0, 0, ${RERUN})
  `.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  await admin(`drop database if exists ${name} with (force)`);
});

const firstLocks = async () =>
  (
    await sql<{ pay_date: string; locked_at: Date | null; first_locked_at: Date | null }>`
      select pay_date::text, locked_at, first_locked_at from pay_dates where payroll_id = ${payroll} order by pay_date
    `.execute(db)
  ).rows.map((row) => [row.pay_date, row.locked_at?.toISOString() ?? null, row.first_locked_at?.toISOString() ?? null]);

describe('keeping a pay date’s first lock time', () => {
  it('gives each locked pay date the time of its first snapshot (or of its lock when it has none), and none to an unlocked one', async () => {
    const { error } = await createMigrator(db).migrateTo(MIGRATION);
    if (error) throw error;
    expect(await firstLocks()).toEqual([
      ['2026-11-27', RERUN, FIRST_LOCK],
      ['2026-12-24', LOCKED_WITHOUT_SNAPSHOT, LOCKED_WITHOUT_SNAPSHOT],
      ['2027-01-29', null, null],
    ]);
    // A first lock after the last is refused.
    await expect(sql`update pay_dates set first_locked_at = locked_at + interval '1 second' where pay_date = '2026-11-27'`.execute(db)).rejects.toMatchObject({
      code: '23514',
      constraint: 'pay_dates_first_lock_not_after_last',
    });
  });

  it('going down drops it and leaves the latest lock time as it was', async () => {
    const { error } = await createMigrator(db).migrateTo(before);
    if (error) throw error;
    const columns = await sql<{
      column_name: string;
    }>`select column_name from information_schema.columns where table_name = 'pay_dates' and column_name = 'first_locked_at'`.execute(db);
    expect(columns.rows).toEqual([]);
    const locked = await sql<{ locked_at: Date }>`select locked_at from pay_dates where payroll_id = ${payroll} and pay_date = '2026-11-27'`.execute(db);
    expect(locked.rows[0]!.locked_at.toISOString()).toBe(RERUN);
  });
});
