/**
 * The reconciliation CSV export during the nightly lock, with and without a read replica (a script, not
 * a test): `npx tsx test/bench/export-during-lock.ts [--scale 1] [--concurrency 6]` (as root or as the
 * postgres user: it runs PostgreSQL servers of its own).
 *
 * Starts a private PostgreSQL primary and a streaming replica of it (pg_basebackup) on loopback ports,
 * both on this machine, so the shared server is never touched. On the primary: `--scale` x 10,000
 * payrolls of 50 employees with 2 payment requests each per pay date (1,000,000 per pay date at scale
 * 1), on five pay dates. The first pay date is locked, confirmed by payroll (90 % in full, every tenth
 * half) and reconciled: the pay date finance exports. The second is locked as a warm-up (it also takes
 * the shortfalls reconciliation carried to it). Then three locks of equal pay dates are timed:
 *
 *   1. the lock alone (the baseline);
 *   2. the lock while the reconciliation CSV of the first pay date is exported over and over on the primary;
 *   3. the lock while the same export runs over and over on the replica.
 *
 * Each export runs in a child process (reconcile-export.ts), as an API or CLI process of its own would.
 * The replica streams throughout (all three locks pay for the WAL sender); before each lock the replica
 * has caught up and the primary has checkpointed. Prints each lock's time and its ratio to the
 * baseline, the exports done and their times, and the replica's largest replay lag during each lock.
 * Both servers share this machine's cores: what the replica takes off the primary here is its buffers,
 * locks and I/O, not its CPU, which a replica on its own host would take off too.
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createClient } from '../../src/directory/auth/clients-service.ts';
import { parseConfig } from '../../src/platform/config/config.ts';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { replicaLag } from '../../src/platform/db/read-replica.ts';
import { runNightlyNow } from '../../src/faces/workers/nightly-runner.ts';
import { openRuntime } from '../../src/platform/runtime/runtime.ts';
import { composition } from '../../bin/composition.ts';
import { createPrivatePostgres, createStreamingReplica, type PrivatePostgres } from '../support/private-servers.ts';
import { generateNightlyData, prepareConfirmations, reconcileThroughQueue, seconds, submitConfirmations, timed } from './bench-support.ts';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '6' },
    out: { type: 'string', default: '/tmp/bench-export-during-lock.csv' },
    // Exports on the replica in the third lock and on the primary in the fourth: whether the order matters.
    'replica-first': { type: 'boolean', default: false },
  },
});
const scale = Number(values.scale);
const payrolls = Math.max(1, Math.round(10_000 * scale));
const employeesPerPayroll = 50;
const paymentsPerEmployee = 2;
const perPayDate = payrolls * employeesPerPayroll * paymentsPerEmployee;

/** The exported pay date (locked, confirmed, reconciled), then the warm-up and the three measured locks. */
const EXPORTED = { payDate: '2026-12-10', runDate: '2026-12-01' };
const LATER = [
  { payDate: '2027-01-08', cutoff: '2027-01-04', period: '10-2026', runDate: '2026-12-30', role: 'warm-up' },
  { payDate: '2027-02-10', cutoff: '2027-02-03', period: '11-2026', runDate: '2027-02-01', role: 'baseline' },
  { payDate: '2027-03-10', cutoff: '2027-03-03', period: '12-2026', runDate: '2027-03-01', role: values['replica-first'] ? 'replica' : 'primary' },
  { payDate: '2027-04-09', cutoff: '2027-04-05', period: '1-2027', runDate: '2027-04-01', role: values['replica-first'] ? 'primary' : 'replica' },
] as const;

/**
 * Like the recommended settings where they change what the lock writes (docs/operators.md): larger WAL
 * between checkpoints, lz4 full-page images. fsync stays off on both (a benchmark's servers need not
 * survive the machine); full-page writes are on, so the replica replays what a real one would.
 */
const PRIMARY_SETTINGS = [
  'full_page_writes=on',
  'shared_buffers=1GB',
  'max_wal_size=8GB',
  'min_wal_size=1GB',
  'checkpoint_timeout=15min',
  'checkpoint_completion_target=0.9',
  'wal_compression=lz4',
  'work_mem=32MB',
  'maintenance_work_mem=512MB',
  'random_page_cost=1.1',
  // Analyzed by hand between phases: no autovacuum worker lands in one measured lock and not another.
  'autovacuum=off',
  'max_connections=200',
];

async function addLaterPayDates(db: Database): Promise<void> {
  for (const later of LATER) {
    await sql`
      insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
      select id, ${later.payDate}::date, ${later.cutoff}::date, ${later.period}, ${later.runDate}::date from payrolls
    `.execute(db);
    await sql`
      insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, due_date, target_pay_date)
      select m.biller_client_id, m.id, m.payroll_id, m.employee_id, 'GBP', 1000 + (n * 137 + length(m.id::text)) % 9000, ${later.payDate}::date, ${later.payDate}::date
      from mandates m cross join generate_series(1, ${paymentsPerEmployee}) n
    `.execute(db);
  }
  await sql`analyze`.execute(db);
}

/** Until the replica has replayed all the primary has written so far. */
async function replicaCaughtUp(primary: Database, replica: Database): Promise<void> {
  const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primary);
  for (;;) {
    const { rows: done } = await sql<{ ok: boolean }>`select pg_last_wal_replay_lsn() >= ${rows[0]!.lsn}::pg_lsn as ok`.execute(replica);
    if (done[0]!.ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface ExportRun {
  ms: number;
  failed?: string;
}

/** reconcile-export.ts in a child process, once. */
function exportOnce(server: PrivatePostgres): Promise<ExportRun> {
  const script = fileURLToPath(new URL('./reconcile-export.ts', import.meta.url));
  const serverUrl = server.url.replace(/\/postgres$/, '');
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script, '--server', serverUrl, '--database', 'postgres', '--pay-date', EXPORTED.payDate, '--out', values.out!],
      { encoding: 'utf8', maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) return resolve({ ms: performance.now() - started, failed: (stderr || String(error)).trim().split('\n').slice(-3).join(' ') });
        resolve({ ms: (JSON.parse(stdout.trim().split('\n').at(-1)!) as { ms: number }).ms });
      },
    );
  });
}

/** Exports one after the other until `stop()` is called; the one running then is finished and counted. */
function exportsUntilStopped(server: PrivatePostgres | undefined) {
  const runs: ExportRun[] = [];
  let stopped = false;
  const loop = (async () => {
    while (server && !stopped) runs.push(await exportOnce(server));
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return runs;
    },
  };
}

/** The replica's largest replay lag, sampled every 500 ms, until stopped. */
function lagWatch(replica: Database) {
  let max = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const lag = await replicaLag(replica).catch(() => null);
      if (lag !== null && Number.isFinite(lag)) max = Math.max(max, lag);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return max;
    },
  };
}

async function main(): Promise<void> {
  process.stdout.write(
    `Export during the lock: scale ${scale} (${payrolls} payrolls, ${perPayDate.toLocaleString('en-GB')} payment requests per pay date, 5 pay dates), ` +
      `${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at start\n`,
  );
  const servers: PrivatePostgres[] = [];
  try {
    const primary = await createPrivatePostgres({ settings: PRIMARY_SETTINGS });
    servers.push(primary);
    await primary.start();
    const setupDb = createDatabase(primary.url, 2);
    await timed('migrate', () => migrateToLatest(setupDb));
    await timed('generate data (set-based)', async () => {
      await generateNightlyData(setupDb, { payrolls, employeesPerPayroll, paymentsPerEmployee, runDate: EXPORTED.runDate, payDate: EXPORTED.payDate });
      await addLaterPayDates(setupDb);
    });
    await setupDb.destroy();

    // The replica from a base backup of the generated data; it streams from here on.
    const replica = await timed('pg_basebackup and start the replica', async () => {
      // An export on the replica holds a snapshot for seconds while the lock's pruning replays: with
      // feedback the primary keeps those rows instead of the replica cancelling the export (or delaying
      // replay for max_standby_streaming_delay). As docs/operators.md recommends.
      const server = await createStreamingReplica(primary, { settings: ['hot_standby_feedback=on', 'shared_buffers=1GB', 'max_connections=200'] });
      servers.push(server);
      await server.start();
      return server;
    });
    const replicaDb = createDatabase(replica.result.url, 1);

    const config = parseConfig({
      ...process.env,
      DATABASE_URL: primary.url,
      QUEUE_PREFIX: `bench-export-lock-${process.pid}`,
      LOG_LEVEL: 'warn',
      DATABASE_POOL_SIZE: '12',
    });
    const runtime = await openRuntime(config, 'bench');
    const { db } = runtime;
    const workers = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: Number(values.concurrency) });
    try {
      await timed(`lock ${EXPORTED.payDate} (the exported pay date)`, () => runNightlyNow(runtime, EXPORTED.runDate, { workers, pollMs: 500 }));
      await sql`analyze`.execute(db);
      const snapshots = (
        await sql<{ id: string; payroll_id: string; pay_period: string }>`
          select id, payroll_id, pay_period from deduction_snapshots where pay_date = ${EXPORTED.payDate} and status = 'locked'
        `.execute(db)
      ).rows;
      const provider = (await sql<{ id: string }>`select id from payroll_providers limit 1`.execute(db)).rows[0]!;
      const providerClient = await createClient(db, { name: 'Bench provider client', role: 'payroll_provider', payrollProviderId: provider.id });
      const caller = { clientId: providerClient.clientId, role: 'payroll_provider' as const, scopes: providerClient.scopes, payrollProviderId: provider.id };
      const prepared = await prepareConfirmations(db, snapshots);
      await timed('confirmations', () => submitConfirmations(db, caller, prepared, 8));
      await timed(`reconcile ${EXPORTED.payDate}`, () =>
        reconcileThroughQueue(
          config,
          snapshots.map((s) => s.payroll_id),
          EXPORTED.payDate,
        ),
      );
      await sql`analyze`.execute(db);
      const attempts = Number((await sql<{ n: number }>`select count(*)::int as n from collection_attempts where pay_date = ${EXPORTED.payDate}`.execute(db)).rows[0]!.n);
      await replicaCaughtUp(db, replicaDb);
      const alone = await exportOnce(primary);
      const aloneOnReplica = await exportOnce(replica.result);
      process.stdout.write(
        `  export alone, ${attempts.toLocaleString('en-GB')} rows: primary ${seconds(alone.ms)} s${alone.failed ? ` (failed: ${alone.failed})` : ''}, replica ${seconds(aloneOnReplica.ms)} s${aloneOnReplica.failed ? ` (failed: ${aloneOnReplica.failed})` : ''}\n`,
      );

      const results: Array<{ role: string; ms: number; instructed: number; exports: ExportRun[]; maxLag: number; load: string }> = [];
      for (const later of LATER) {
        await sql`analyze`.execute(db);
        await sql`checkpoint`.execute(db);
        await replicaCaughtUp(db, replicaDb);
        const exportsOn = later.role === 'primary' ? primary : later.role === 'replica' ? replica.result : undefined;
        const lag = lagWatch(replicaDb);
        const exporting = exportsUntilStopped(exportsOn);
        const lock = await timed(`lock ${later.payDate} (${later.role}${exportsOn ? `, exports on the ${later.role}` : ''})`, () =>
          runNightlyNow(runtime, later.runDate, { workers, pollMs: 250 }),
        );
        const exports = await exporting.stop();
        const maxLag = await lag.stop();
        const instructed = Number(
          (await sql<{ n: number }>`select count(*)::int as n from payment_requests where target_pay_date = ${later.payDate} and status = 'instructed'`.execute(db)).rows[0]!
            .n,
        );
        results.push({
          role: later.role,
          ms: lock.ms,
          instructed,
          exports,
          maxLag,
          load: loadavg()
            .map((l) => l.toFixed(2))
            .join(' '),
        });
        if (lock.result.failures.length > 0) process.stderr.write(`  ${lock.result.failures.length} pay dates failed in the ${later.role} lock\n`);
      }

      const baseline = results.find((r) => r.role === 'baseline')!;
      const describeExports = (runs: ExportRun[]) => {
        if (runs.length === 0) return 'no export';
        const done = runs.filter((r) => !r.failed);
        const failed = runs.filter((r) => r.failed);
        const times = done.map((r) => seconds(r.ms)).join(', ');
        return `${runs.length} exports (${done.length} whole${failed.length ? `, ${failed.length} failed: ${failed[0]!.failed}` : ''}): ${times} s`;
      };
      process.stdout.write(
        [
          '',
          `Result (scale ${scale}: ${perPayDate.toLocaleString('en-GB')} payment requests per lock, export of ${attempts.toLocaleString('en-GB')} rows; pay-date concurrency ${values.concurrency})`,
          ...results.map(
            (r) =>
              `  ${r.role.padEnd(8)} lock ${seconds(r.ms).padStart(7)} s, ${(r.ms / baseline.ms).toFixed(2)}x the baseline, ${r.instructed.toLocaleString('en-GB')} instructed; ` +
              `${describeExports(r.exports)}; replica lag at most ${r.maxLag.toFixed(1)} s; load average after ${r.load}`,
          ),
          '',
        ].join('\n'),
      );
    } finally {
      await workers.close();
      const keys = await runtime.redis.keys(`${config.QUEUE_PREFIX}:*`);
      for (let i = 0; i < keys.length; i += 500) await runtime.redis.del(...keys.slice(i, i + 500));
      await runtime.close();
      await replicaDb.destroy();
    }
  } finally {
    for (const server of servers.reverse()) await server.destroy();
  }
}

await main();
