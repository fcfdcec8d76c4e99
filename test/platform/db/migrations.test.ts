import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/platform/db/connection.ts';
import { migrateDownToEmpty, migrateToLatest } from '../../../src/platform/db/migrator.ts';
import { migrations } from '../../../migrations/index.ts';
import { adminUrl, databaseUrl, testDatabaseName } from '../../support/database-admin.ts';

// A database of its own, created empty (not cloned from the migrated template). Named like every
// test database, so a later run sweeps it up should this file die before afterAll.
const name = testDatabaseName('dtest');
let db: Kysely<any>;

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const KYSELY_TABLES = ['kysely_migration', 'kysely_migration_lock'];

async function ourTables(): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = 'public' and table_name not in ('kysely_migration', 'kysely_migration_lock')
    order by table_name
  `.execute(db);
  return rows.map((r) => r.table_name);
}

/** Sequences, views and composite types left behind would break the next `up` just the same. */
async function otherRelations(): Promise<string[]> {
  const { rows } = await sql<{ relname: string }>`
    select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('S', 'v', 'm', 'c')
      and c.relname not like 'kysely_migration%'
  `.execute(db);
  return rows.map((r) => r.relname);
}

async function userTypes(): Promise<string[]> {
  const { rows } = await sql<{ typname: string }>`
    select t.typname from pg_type t join pg_namespace n on n.oid = t.typnamespace
    where n.nspname = 'public' and t.typtype in ('e', 'd')
  `.execute(db);
  return rows.map((r) => r.typname);
}

beforeAll(async () => {
  await admin((client) => client.query(`create database ${name}`));
  db = createDatabase(databaseUrl(name), 2);
});

afterAll(async () => {
  await db?.destroy();
  await admin((client) => client.query(`drop database if exists ${name} with (force)`));
});

describe('migrations on a fresh database', () => {
  let tablesAfterFirstUp: string[] = [];

  it('starts empty', async () => {
    expect(await ourTables()).toEqual([]);
  });

  it('migrateToLatest creates every table and records each migration', async () => {
    const lines = await migrateToLatest(db);
    expect(lines).toEqual(Object.keys(migrations).map((m) => `Up ${m}: Success`));

    tablesAfterFirstUp = await ourTables();
    for (const table of [
      'payroll_providers',
      'clients',
      'api_keys',
      'pay_dates',
      'mandates',
      'payment_requests',
      'collection_attempts',
      'ledger_entries',
      'payouts',
      'events',
      'webhook_deliveries',
      'idempotency_keys',
    ]) {
      expect(tablesAfterFirstUp).toContain(table);
    }
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
    expect(rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
  });

  it('migrateToLatest again is a no-op', async () => {
    expect(await migrateToLatest(db)).toEqual([]);
    expect(await ourTables()).toEqual(tablesAfterFirstUp);
  });

  it('migrateDownToEmpty removes every table of ours and leaves nothing behind', async () => {
    const lines = await migrateDownToEmpty(db);
    expect(lines).toHaveLength(Object.keys(migrations).length);
    expect(lines.every((line) => line.startsWith('Down ') && line.endsWith(': Success'))).toBe(true);

    expect(await ourTables()).toEqual([]);
    expect(await otherRelations()).toEqual([]);
    expect(await userTypes()).toEqual([]);
    const { rows } = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' order by table_name
    `.execute(db);
    expect(rows.map((r) => r.table_name).every((t) => KYSELY_TABLES.includes(t))).toBe(true);
    const applied = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db);
    expect(applied.rows[0]!.n).toBe(0);
  });

  it('migrateToLatest succeeds again after going down, with the same tables', async () => {
    expect(await migrateToLatest(db)).toEqual(Object.keys(migrations).map((m) => `Up ${m}: Success`));
    expect(await ourTables()).toEqual(tablesAfterFirstUp);
  });
});

describe('schema constraints bite', () => {
  const ids = {
    provider: randomUUID(),
    biller: randomUUID(),
    employer: randomUUID(),
    payroll: randomUUID(),
    employee: randomUUID(),
    consumer: randomUUID(),
    mandate: randomUUID(),
    payment: randomUUID(),
    attempt: randomUUID(),
  };
  const payDate = '2026-11-27';

  beforeAll(async () => {
    // Runs after the migration describe above: the schema is at latest again.
    await sql`
      with
        p as (insert into payroll_providers (id, name) values (${ids.provider}, 'Provider') returning id),
        c as (insert into clients (id, name, role, secret_hash) values (${ids.biller}, 'Biller', 'biller', 'h') returning id),
        e as (insert into employers (id, payroll_provider_id, external_id, name)
              select ${ids.employer}, p.id, 'E1', 'Employer' from p returning id),
        pr as (insert into payrolls (id, employer_id, payroll_provider_id, external_id, name)
               select ${ids.payroll}, e.id, ${ids.provider}, 'PR1', 'Payroll' from e returning id),
        pd as (insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
               select pr.id, ${payDate}, '2026-11-20', '2026-11', '2026-11-18' from pr returning payroll_id),
        em as (insert into employees (id, payroll_provider_id, given_name, family_name)
               select ${ids.employee}, p.id, 'Ada', 'Lovelace' from p returning id)
      select 1
    `.execute(db);
    await sql`
      insert into employments (employee_id, employer_id, payroll_id, payroll_reference)
      values (${ids.employee}, ${ids.employer}, ${ids.payroll}, 'REF1')
    `.execute(db);
    await sql`
      insert into consumers (id, biller_client_id, given_name, family_name)
      values (${ids.consumer}, ${ids.biller}, 'Ada', 'Lovelace')
    `.execute(db);
    await sql`
      insert into mandates (id, biller_client_id, consumer_id, employee_id, payroll_id, authorisation_source)
      values (${ids.mandate}, ${ids.biller}, ${ids.consumer}, ${ids.employee}, ${ids.payroll}, '{}'::jsonb)
    `.execute(db);
    await sql`
      insert into payment_requests (id, biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, target_pay_date)
      values (${ids.payment}, ${ids.biller}, ${ids.mandate}, ${ids.payroll}, ${ids.employee}, 'GBP', 1000, ${payDate})
    `.execute(db);
    await sql`
      insert into collection_attempts (id, payment_request_id, employee_id, mandate_id, biller_client_id, currency, payroll_id, pay_date, attempt_number, requested_amount)
      values (${ids.attempt}, ${ids.payment}, ${ids.employee}, ${ids.mandate}, ${ids.biller}, 'GBP', ${ids.payroll}, ${payDate}, 1, 1000)
    `.execute(db);
  });

  function insertLedgerEntry(kind: string, amount: number, revision = 0) {
    return sql`
      insert into ledger_entries (biller_client_id, payment_request_id, collection_attempt_id, revision, kind, amount, currency, pay_date)
      values (${ids.biller}, ${ids.payment}, ${ids.attempt}, ${revision}, ${kind}, ${amount}, 'GBP', ${payDate})
    `.execute(db);
  }

  it('ledger: a collected payment must be positive and a reversal negative', async () => {
    await expect(insertLedgerEntry('payment_collected', -500)).rejects.toMatchObject({ code: '23514', table: 'ledger_entries' });
    await expect(insertLedgerEntry('collection_reversed', 500)).rejects.toMatchObject({ code: '23514', table: 'ledger_entries' });
    await expect(insertLedgerEntry('payment_collected', 0)).rejects.toMatchObject({ code: '23514', table: 'ledger_entries' });
    await expect(insertLedgerEntry('refund', 500)).rejects.toMatchObject({ code: '23514', table: 'ledger_entries' });
  });

  it('ledger: one entry per (collection attempt, revision, kind)', async () => {
    await insertLedgerEntry('payment_collected', 1000, 0);
    await expect(insertLedgerEntry('payment_collected', 1000, 0)).rejects.toMatchObject({
      code: '23505',
      constraint: 'ledger_entries_collection_attempt_id_revision_kind_key',
    });
    // A different kind or a later revision of the same attempt is a different posting.
    await insertLedgerEntry('collection_reversed', -1000, 0);
    await insertLedgerEntry('payment_collected', 400, 1);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from ledger_entries where collection_attempt_id = ${ids.attempt}
    `.execute(db);
    expect(rows[0]!.n).toBe(3);
  });

  it('collection attempts: one per payment request and pay date', async () => {
    await expect(
      sql`
        insert into collection_attempts (payment_request_id, employee_id, mandate_id, biller_client_id, currency, payroll_id, pay_date, attempt_number, requested_amount)
        values (${ids.payment}, ${ids.employee}, ${ids.mandate}, ${ids.biller}, 'GBP', ${ids.payroll}, ${payDate}, 2, 1000)
      `.execute(db),
    ).rejects.toMatchObject({ code: '23505', constraint: 'collection_attempts_payment_request_id_pay_date_key' });
  });

  it('payment requests: amount positive, collected within amount', async () => {
    await expect(
      sql`
        insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, target_pay_date)
        values (${ids.biller}, ${ids.mandate}, ${ids.payroll}, ${ids.employee}, 'GBP', -1, ${payDate})
      `.execute(db),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(sql`update payment_requests set collected_amount = 1001 where id = ${ids.payment}`.execute(db)).rejects.toMatchObject({
      code: '23514',
    });
  });

  it('pay dates: pay_period has the NNNN-NN form and dates are ordered', async () => {
    const insertPayDate = (payDateValue: string, period: string, cutoff: string, lock: string) =>
      sql`
        insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
        values (${ids.payroll}, ${payDateValue}, ${cutoff}, ${period}, ${lock})
      `.execute(db);
    await expect(insertPayDate('2026-12-24', 'December', '2026-12-17', '2026-12-15')).rejects.toMatchObject({
      code: '23514',
      constraint: 'pay_dates_pay_period_check',
    });
    await expect(insertPayDate('2026-12-24', '2026-12', '2026-12-28', '2026-12-15')).rejects.toMatchObject({ code: '23514' });
    await expect(insertPayDate('2026-12-24', '2026-12', '2026-12-17', '2026-12-18')).rejects.toMatchObject({ code: '23514' });
    // The same pay period twice for one payroll.
    await expect(insertPayDate('2026-12-24', '2026-11', '2026-12-17', '2026-12-15')).rejects.toMatchObject({
      code: '23505',
      constraint: 'pay_dates_payroll_id_pay_period_key',
    });
    await insertPayDate('2026-12-24', '2026-12', '2026-12-17', '2026-12-15');
  });

  it('idempotency keys: one row per (client, key); status limited to in_flight/completed', async () => {
    const key = randomUUID();
    const insertKey = (status = 'in_flight') =>
      sql`
        insert into idempotency_keys (client_id, idempotency_key, fingerprint, status, expires_at)
        values (${ids.biller}, ${key}, 'f', ${status}, now() + interval '30 days')
      `.execute(db);
    await insertKey();
    await expect(insertKey()).rejects.toMatchObject({ code: '23505', constraint: 'idempotency_keys_pkey' });
    await expect(
      sql`
        insert into idempotency_keys (client_id, idempotency_key, fingerprint, status, expires_at)
        values (${ids.biller}, ${randomUUID()}, 'f', 'done', now())
      `.execute(db),
    ).rejects.toMatchObject({ code: '23514' });
    // Keys are UUIDs in the database too.
    await expect(
      sql`
        insert into idempotency_keys (client_id, idempotency_key, fingerprint, expires_at)
        values (${ids.biller}, 'not-a-uuid', 'f', now())
      `.execute(db),
    ).rejects.toMatchObject({ code: '22P02' });
  });

  it('sort codes must be NN-NN-NN', async () => {
    await expect(
      sql`
        insert into payouts (biller_client_id, currency, amount, payout_date, reference, account_number, sort_code, account_holder_name)
        values (${ids.biller}, 'GBP', 100, '2026-11-30', 'REF-X', '12345678', '123456', 'Biller')
      `.execute(db),
    ).rejects.toMatchObject({ code: '23514', constraint: 'payouts_sort_code_check' });
  });

  it('clients: a payroll-provider client must name its provider', async () => {
    await expect(sql`insert into clients (name, role, secret_hash) values ('P', 'payroll_provider', 'h')`.execute(db)).rejects.toMatchObject({
      code: '23514',
      table: 'clients',
    });
  });
});
