import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/platform/db/connection.ts';
import { createMigrator } from '../../../src/platform/db/migrator.ts';
import { adminUrl, databaseUrl, testDatabaseName } from '../../support/database-admin.ts';

// A database of its own, migrated to just before re-run requests, holding re-runs the old code wrote.
const name = testDatabaseName('dtest');
const BEFORE = '20261122060000_payment_updates_in_place';
const MIGRATION = '20261123200000_rerun_requests_join_the_open_rerun';
let db: Kysely<any>;

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
const snapshot = randomUUID();
const completed = randomUUID();
const olderOpen = randomUUID();
const newerOpen = randomUUID();

beforeAll(async () => {
  await admin(`create database ${name}`);
  db = createDatabase(databaseUrl(name), 2);
  const { error } = await createMigrator(db).migrateTo(BEFORE);
  if (error) throw error;
  const provider = randomUUID();
  const employer = randomUUID();
  await sql`
    with
      p as (insert into payroll_providers (id, name) values (${provider}, 'Provider') returning id),
      e as (insert into employers (id, payroll_provider_id, external_id, name) select ${employer}, p.id, 'E1', 'Employer' from p returning id),
      pr as (insert into payrolls (id, employer_id, payroll_provider_id, external_id, name) select ${payroll}, e.id, ${provider}, 'PR1', 'Payroll' from e returning id)
    insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
    select pr.id, '2026-11-27', '2026-11-20', '2026-11', '2026-11-18' from pr
  `.execute(db);
  await sql`
    insert into deduction_snapshots (id, payroll_id, pay_date, pay_period, snapshot_version, currency, total_amount, employee_count)
    values (${snapshot}, ${payroll}, '2026-11-27', '2026-11', 1, 'GBP', 0, 0)
  `.execute(db);
  // One completed re-run, and two left open for the same pay date by concurrent requests.
  await sql`
    insert into reruns (id, payroll_id, pay_date, reason, requested_by, requested_at, previous_snapshot_id, new_snapshot_id, completed_at) values
      (${completed}, ${payroll}, '2026-11-27', 'done before', 'ops-a', '2026-11-01T10:00:00Z', ${snapshot}, ${snapshot}, '2026-11-01T10:01:00Z'),
      (${olderOpen}, ${payroll}, '2026-11-27', 'first open', 'ops-b', '2026-11-02T10:00:00Z', ${snapshot}, null, null),
      (${newerOpen}, ${payroll}, '2026-11-27', 'second open', 'ops-c', '2026-11-02T10:00:05Z', ${snapshot}, null, null)
  `.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  await admin(`drop database if exists ${name} with (force)`);
});

describe('moving re-run reasons into re-run requests', () => {
  it('keeps every reason and merges open re-runs of one pay date into the newest', async () => {
    const { error } = await createMigrator(db).migrateTo(MIGRATION);
    if (error) throw error;
    const reruns = await sql<{ id: string }>`select id from reruns order by requested_at`.execute(db);
    expect(reruns.rows.map((r) => r.id)).toEqual([completed, newerOpen]);
    const requests = await sql<{ rerun_id: string; reason: string; requested_by: string }>`
      select rerun_id, reason, requested_by from rerun_requests order by requested_at
    `.execute(db);
    expect(requests.rows).toEqual([
      { rerun_id: completed, reason: 'done before', requested_by: 'ops-a' },
      { rerun_id: newerOpen, reason: 'first open', requested_by: 'ops-b' },
      { rerun_id: newerOpen, reason: 'second open', requested_by: 'ops-c' },
    ]);
    // From now on the database allows one open re-run per pay date.
    await expect(sql`insert into reruns (payroll_id, pay_date) values (${payroll}, '2026-11-27')`.execute(db)).rejects.toMatchObject({
      code: '23505',
      constraint: 'reruns_one_open_per_pay_date',
    });
  });

  it('going down gives each re-run its first reason back', async () => {
    const { error } = await createMigrator(db).migrateTo(BEFORE);
    if (error) throw error;
    const reruns = await sql<{ id: string; reason: string; requested_by: string }>`
      select id, reason, requested_by from reruns order by requested_at
    `.execute(db);
    expect(reruns.rows).toEqual([
      { id: completed, reason: 'done before', requested_by: 'ops-a' },
      { id: newerOpen, reason: 'first open', requested_by: 'ops-b' },
    ]);
  });
});
