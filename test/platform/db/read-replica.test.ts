import { createServer, type AddressInfo, type Socket } from 'node:net';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../../src/platform/db/migrator.ts';
import { readSource } from '../../../src/platform/db/read-replica.ts';
import { signedInAs, type ConsoleBrowser } from '../../support/console.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createCollectionAccount, createOperator } from '../../support/factories.ts';
import { createPrivatePostgres, createStreamingReplica, freePort, type PrivatePostgres } from '../../support/private-servers.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, reconciledPayDate } from '../../support/cash.ts';
import { expectRemittances } from '../../../src/settlement/cash/remittance-service.ts';

// Reports off a read replica, against real processes: a private primary and a streaming replica of
// it (pg_basebackup) on loopback ports. The replica's data is made distinguishable by pausing its
// replay and renaming the employer on the primary: what a read shows says where it was read.

let primary: PrivatePostgres | undefined;
let replica: PrivatePostgres | undefined;
let primaryDb: Database;
let replicaDb: Database;
/** The app with DATABASE_READ_URL on the replica, bound far above any lag this test makes. */
let onReplica: TestApp;
/** The same primary, no DATABASE_READ_URL: everything reads the primary. */
let onPrimary: TestApp;
let world: Awaited<ReturnType<typeof reconciledPayDate>>;
/** An operator's headers per app: each app signs its own tokens. */
const operator = new Map<TestApp, Record<string, string>>();
let viewer: ConsoleBrowser;
let viewerOnPrimary: ConsoleBrowser;
const ORIGINAL = 'Replicated Employer Ltd';
const RENAMED = 'Renamed While Replay Paused Ltd';

/** Until the replica has replayed everything the primary has written so far. */
async function replayed(): Promise<void> {
  const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primaryDb);
  await until(async () => {
    const { rows: behind } = await sql<{ done: boolean }>`select pg_last_wal_replay_lsn() >= ${rows[0]!.lsn}::pg_lsn as done`.execute(replicaDb);
    return behind[0]!.done;
  }, 'the replica to replay the primary');
}

/** Until the replica has received (not replayed) everything the primary has written so far. */
async function received(): Promise<void> {
  const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primaryDb);
  await until(async () => {
    const { rows: behind } = await sql<{ done: boolean }>`select pg_last_wal_receive_lsn() >= ${rows[0]!.lsn}::pg_lsn as done`.execute(replicaDb);
    return behind[0]!.done;
  }, 'the replica to receive the WAL');
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const employersIn = (csv: string) => new Set((parse(csv, { columns: true }) as Array<{ employer: string }>).map((row) => row.employer));
const reconciliationCsv = (t: TestApp) =>
  t.app.inject({ method: 'GET', url: `/reports/reconciliation?pay_date=${PD1}&payroll_id=${world.payroll.id}`, headers: operator.get(t)! });

beforeAll(async () => {
  try {
    primary = await createPrivatePostgres();
    await primary.start();
    primaryDb = createDatabase(primary.url, 2);
    await migrateToLatest(primaryDb);
    // The base backup after the migrations: the replica starts with the schema, not by replaying it.
    replica = await createStreamingReplica(primary);
    await replica.start();
    replicaDb = createDatabase(replica.url, 2);

    onReplica = await startTestApp({ databaseUrl: primary.url, readDatabaseUrl: replica.url, env: { DATABASE_READ_MAX_LAG_SECONDS: '3600' } });
    onPrimary = await startTestApp({ databaseUrl: primary.url });
    await createCollectionAccount(primaryDb);
    // Locked, reported (one short) and reconciled, with its remittance: every report has rows.
    world = await reconciledPayDate(primaryDb, { amounts: [12_550, 8_000], deducted: [12_550, 3_000] });
    await primaryDb.updateTable('employers').set({ name: ORIGINAL }).where('id', '=', world.employer.id).execute();
    // Its remittance, as the lock's follow-up makes it in the service: the three-way report has a row.
    await primaryDb.transaction().execute((trx) => expectRemittances(trx, cashPolicy('2026-10-31'), [{ payrollId: world.payroll.id, payDate: PD1 }]));
    const credentials = await createOperator(primaryDb);
    for (const t of [onReplica, onPrimary]) operator.set(t, await authHeaders(t.app, credentials));
    ({ browser: viewer } = await signedInAs(onReplica.app, primaryDb, 'viewer'));
    ({ browser: viewerOnPrimary } = await signedInAs(onPrimary.app, primaryDb, 'viewer'));
    await replayed();

    // From here the replica stays where it is: the rename reaches its WAL, not its tables.
    await sql`select pg_wal_replay_pause()`.execute(replicaDb);
    await primaryDb.updateTable('employers').set({ name: RENAMED }).where('id', '=', world.employer.id).execute();
    await received();
    // Replay stops before the first record it has not applied once that record is there: the rename's.
    await until(async () => (await sql<{ state: string }>`select pg_get_wal_replay_pause_state() as state`.execute(replicaDb)).rows[0]!.state === 'paused', 'replay to pause');
  } catch (error) {
    // A failed start still reaches afterAll, which stops whatever did start.
    console.error(error);
    throw error;
  }
}, 120_000);

afterAll(async () => {
  await onReplica?.close().catch(() => {});
  await onPrimary?.close().catch(() => {});
  await replicaDb?.destroy().catch(() => {});
  await primaryDb?.destroy().catch(() => {});
  await replica?.destroy();
  await primary?.destroy();
}, 60_000);

describe('reads off a streaming replica (DATABASE_READ_URL)', () => {
  it('the reconciliation CSV of the API is read on the replica, which has not replayed the rename', async () => {
    const response = await reconciliationCsv(onReplica);
    expect(response.statusCode).toBe(200);
    expect([...employersIn(response.body)]).toEqual([ORIGINAL]);
    expect(parse(response.body, { columns: true })).toHaveLength(2);
  });

  it('without DATABASE_READ_URL the same report reads the primary and sees the rename', async () => {
    const response = await reconciliationCsv(onPrimary);
    expect(response.statusCode).toBe(200);
    expect([...employersIn(response.body)]).toEqual([RENAMED]);
  });

  it('the three-way report is read on the replica too', async () => {
    const [stale, current] = await Promise.all(
      [onReplica, onPrimary].map((t) => t.app.inject({ method: 'GET', url: `/reports/three-way?pay_date=${PD1}&format=json`, headers: operator.get(t)! })),
    );
    expect(stale!.json().rows.map((row: { employer: string }) => row.employer)).toEqual([ORIGINAL]);
    expect(current!.json().rows.map((row: { employer: string }) => row.employer)).toEqual([RENAMED]);
  });

  it('a console read page reads the replica and says how far behind it is; a page actions land on reads the primary', async () => {
    const page = await viewer.get(`/console/reconciliation?pay_date=${PD1}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(ORIGINAL);
    expect(page.body).not.toContain(RENAMED);
    expect(page.body).toMatch(/Data from the read replica, (under a second|\d+ s) behind the primary\./);
    const csv = await viewer.get(`/console/reconciliation/${PD1}/summary.csv`);
    expect(csv.body).toContain(ORIGINAL);

    // The pay date's page is where a re-run and a deduction return land: the primary, its own writes seen.
    const payDate = await viewer.get(`/console/payrolls/${world.payroll.id}/pay-dates/${PD1}`);
    expect(payDate.statusCode).toBe(200);
    expect(payDate.body).toContain(RENAMED);
    expect(payDate.body).not.toContain('Data from the read replica');

    const onItsOwn = await viewerOnPrimary.get(`/console/reconciliation?pay_date=${PD1}`);
    expect(onItsOwn.body).toContain(RENAMED);
    expect(onItsOwn.body).not.toContain('data-as-of');
  });

  it('`deductions export reconciliation` reads the replica named by DATABASE_READ_URL', async () => {
    const env = { ...cliEnvOf(onPrimary.config), DATABASE_READ_URL: replica!.url, DATABASE_READ_MAX_LAG_SECONDS: '3600' };
    const args = ['export', 'reconciliation', '--pay-date', PD1, '--payroll', world.payroll.id];
    const [stale, current] = await Promise.all([runDeductions(args, env), runDeductions(args, cliEnvOf(onPrimary.config))]);
    expect(stale.stderr).toBe('');
    expect([...employersIn(stale.stdout)]).toEqual([ORIGINAL]);
    expect([...employersIn(current.stdout)]).toEqual([RENAMED]);
  }, 30_000);

  it('the lag guard reads the primary when the replica is further behind than DATABASE_READ_MAX_LAG_SECONDS', async () => {
    const within = await readSource({ db: primaryDb, readDb: replicaDb, config: { DATABASE_READ_MAX_LAG_SECONDS: 3600 } });
    expect(within.from).toBe('replica');
    expect(within.replicaLagSeconds).toBeGreaterThan(0);
    // Paused with WAL received and not replayed: behind by the age of its last replayed commit, over a bound of 0.
    const beyond = await readSource({ db: primaryDb, readDb: replicaDb, config: { DATABASE_READ_MAX_LAG_SECONDS: 0 } });
    expect(beyond).toMatchObject({ db: primaryDb, from: 'primary', fallback: 'lagging' });

    const nowhere = createDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/nowhere`, 1);
    try {
      expect(await readSource({ db: primaryDb, readDb: nowhere, config: { DATABASE_READ_MAX_LAG_SECONDS: 3600 } })).toMatchObject({
        from: 'primary',
        fallback: 'unreachable',
      });
    } finally {
      await nowhere.destroy();
    }
    // A host that takes the connection and never answers: the primary, once the replica's time is up.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const hung = createDatabase(`postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/hung`, 1);
    try {
      expect(await readSource({ db: primaryDb, readDb: hung, config: { DATABASE_READ_MAX_LAG_SECONDS: 3600 } })).toMatchObject({
        from: 'primary',
        fallback: 'unreachable',
      });
    } finally {
      silent.close();
      for (const socket of sockets) socket.destroy();
      void hung.destroy().catch(() => {});
    }
    // No replica configured: the primary, and nothing is asked.
    expect(await readSource({ db: primaryDb, config: { DATABASE_READ_MAX_LAG_SECONDS: 0 } })).toEqual({ db: primaryDb, from: 'primary', replicaLagSeconds: null });
  });

  it('once replay resumes the replica catches up: lag 0 within any bound, and the rename is seen there', async () => {
    await sql`select pg_wal_replay_resume()`.execute(replicaDb);
    await replayed();
    const caughtUp = await readSource({ db: primaryDb, readDb: replicaDb, config: { DATABASE_READ_MAX_LAG_SECONDS: 0 } });
    expect(caughtUp).toMatchObject({ db: replicaDb, from: 'replica', replicaLagSeconds: 0 });
    const response = await reconciliationCsv(onReplica);
    expect([...employersIn(response.body)]).toEqual([RENAMED]);
  });
});
