/**
 * Scale-out benchmark (a script, not a test):
 * `npx tsx test/bench/scale-out.ts [--scale 1] [--processes 1,2,4] [--concurrency 8] [--database deductions_bench_scale]`
 *
 * The nightly lock and the reconciliation with the workers in 1, 2 and 4 processes on this one machine,
 * standing in for as many machines: each process is bench-worker.ts (the service's workers, as
 * `deductions work` starts them), given PAY_DATE_CONCURRENCY = concurrency / processes so the pay-date
 * jobs in flight stay the same and only the split across processes changes. The data is the cycle
 * benchmark's (generateNightlyData: 10,000 payrolls, 500,000 employees, 1,000,000 payment requests at
 * --scale 1), generated once and copied for every run from a template database, so each run starts
 * from the same rows. Per run and phase: wall time, CPU seconds of PostgreSQL (every postgres process,
 * see postgresCpuSeconds) and of the worker processes (/proc), and fingerprints of what the phase
 * wrote, keyed by what does not depend on timing (payment ids, employee ids, amounts, statuses; never
 * generated ids or timestamps). Payroll's confirmations between the two phases are made by this
 * process, the same for every run, and not timed. Exits 1 if any run's fingerprints differ from the
 * first run's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { sql } from 'kysely';
import pg from 'pg';
import { createClient } from '../../src/directory/auth/clients-service.ts';
import { parseConfig, type Config } from '../../src/platform/config/config.ts';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { readRunProgress } from '../../src/cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary, triggerNightlyRun } from '../../src/cycle/nightly/nightly-service.ts';
import { queueNames } from '../../src/platform/queue/job-catalogue.ts';
import { connected, createProducerConnection, producerConnection } from '../../src/platform/runtime/redis-connections.ts';
import {
  prepareConfirmations,
  submitConfirmations,
  generateNightlyData,
  type LockedSnapshot,
  perSecond,
  postgresCpuSeconds,
  reconcileThroughQueue,
  recreateDatabase,
  seconds,
  timed,
} from './bench-support.ts';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    processes: { type: 'string', default: '1,2,4' },
    concurrency: { type: 'string', default: '8' },
    database: { type: 'string', default: 'deductions_bench_scale' },
  },
});
const scale = Number(values.scale);
const concurrency = Number(values.concurrency);
const processCounts = values.processes!.split(',').map(Number);
for (const n of processCounts) if (!(n >= 1 && concurrency % n === 0)) throw new Error(`--concurrency ${concurrency} does not split over ${n} processes`);
const shape = { payrolls: Math.round(10_000 * scale), employeesPerPayroll: 50, paymentsPerEmployee: 2, runDate: '2026-12-01', payDate: '2026-12-10' };
const database = values.database!;
const pristine = `${database}_pristine`;
const baseUrl = 'postgres://postgres@127.0.0.1:5432';
const configOf = (prefix: string, perProcess: number): Config =>
  parseConfig({
    ...process.env,
    DATABASE_URL: `${baseUrl}/${database}`,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    PAY_DATE_CONCURRENCY: String(perProcess),
    DATABASE_POOL_SIZE: String(perProcess + 4),
  });

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${baseUrl}/postgres` });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

// Worker processes ------------------------------------------------------------------------------------

const TICKS = 100; // USER_HZ

function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

async function startWorkerProcesses(config: Config, count: number): Promise<ChildProcess[]> {
  const script = fileURLToPath(new URL('./bench-worker.ts', import.meta.url));
  const env = {
    ...process.env,
    DATABASE_URL: config.DATABASE_URL,
    REDIS_URL: config.REDIS_URL,
    QUEUE_PREFIX: config.QUEUE_PREFIX,
    LOG_LEVEL: 'warn',
    PAY_DATE_CONCURRENCY: String(config.PAY_DATE_CONCURRENCY),
    DATABASE_POOL_SIZE: String(config.DATABASE_POOL_SIZE),
  };
  return Promise.all(
    Array.from({ length: count }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
      return new Promise<ChildProcess>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`worker process exited with ${code} before it was ready`)));
        child.stdout!.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) resolve(child);
        });
      });
    }),
  );
}

async function stopWorkerProcesses(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.removeAllListeners('exit');
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

// Fingerprints ----------------------------------------------------------------------------------------

/**
 * Per table, the row count and an order-free 64-bit hash sum of each row's timing-independent content.
 * Two runs that wrote the same money, statuses and lines have the same fingerprints.
 */
async function fingerprints(db: Database): Promise<Record<string, string>> {
  const rows = (
    await sql<{ name: string; print: string }>`
      select 'deduction_lines' as name, count(*) || ' rows, ' || sum(hashtextextended(concat_ws('|', s.payroll_id, s.pay_date, l.employee_id, l.requested_amount), 0)::numeric) as print
        from deduction_lines l join deduction_snapshots s on s.id = l.snapshot_id where s.status <> 'superseded'
      union all
      select 'deduction_line_payments', count(*) || ' rows, ' || sum(hashtextextended(concat_ws('|', s.payroll_id, p.payment_request_id, p.requested_amount), 0)::numeric)
        from deduction_line_payments p join deduction_snapshots s on s.id = p.snapshot_id where s.status <> 'superseded'
      union all
      select 'snapshots', count(*) || ' rows, ' || sum(hashtextextended(concat_ws('|', payroll_id, pay_date, status, snapshot_version), 0)::numeric)
        from deduction_snapshots
      union all
      select 'payment_requests', count(*) || ' rows, ' || sum(hashtextextended(concat_ws('|', id, status, collected_amount, paid_out_amount, target_pay_date, attempts, version), 0)::numeric)
        from payment_requests
      union all
      select 'collection_attempts', count(*) || ' rows, ' || coalesce(sum(hashtextextended(concat_ws('|', payment_request_id, pay_date, attempt_number, requested_amount, collected_amount, shortfall_amount, outcome, carried_to_pay_date, revision), 0)::numeric), 0)
        from collection_attempts
      union all
      select 'ledger_entries', count(*) || ' rows, ' || coalesce(sum(hashtextextended(concat_ws('|', payment_request_id, pay_date, kind, amount, revision), 0)::numeric), 0)
        from ledger_entries
      union all
      select 'reconciliation_exceptions', count(*) || ' rows, ' || coalesce(sum(hashtextextended(concat_ws('|', payroll_id, pay_date, employee_id, kind, amount, superseded_at is null), 0)::numeric), 0)
        from reconciliation_exceptions
      union all
      select 'events', count(*) || ' rows, ' || coalesce(sum(hashtextextended(concat_ws('|', type, resource_id, payload #>> '{data,status}', payload #>> '{data,collected_amount}', payload #>> '{data,version}'), 0)::numeric), 0)
        from events
    `.execute(db)
  ).rows;
  return Object.fromEntries(rows.map((row) => [row.name, row.print]));
}

// The runs --------------------------------------------------------------------------------------------

interface RunFigures {
  processes: number;
  perProcess: number;
  lock: { ms: number; postgres: number; workers: number; units: number };
  reconciliation: { ms: number; postgres: number; workers: number; units: number };
  prints: Record<string, string>;
}

async function measured<T>(children: readonly ChildProcess[], work: () => Promise<T>) {
  const cpu = () => ({ postgres: postgresCpuSeconds(), workers: children.reduce((sum, child) => sum + cpuSecondsOf(child.pid!), 0) });
  const before = cpu();
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  const after = cpu();
  return { result, ms, postgres: after.postgres - before.postgres, workers: after.workers - before.workers };
}

async function run(processes: number, caller: Parameters<typeof submitConfirmations>[1]): Promise<RunFigures> {
  await admin(`drop database if exists "${database}" with (force)`);
  await timed(`copy the data (${processes} processes)`, () => admin(`create database "${database}" template "${pristine}"`), 34);
  const perProcess = concurrency / processes;
  const config = configOf(`bench-scale-${process.pid}-${processes}`, perProcess);
  const db = createDatabase(config.DATABASE_URL, concurrency);
  const children = await startWorkerProcesses(config, processes);
  const payDates = new Queue(queueNames.payDates, { connection: producerConnection(config.REDIS_URL), prefix: config.QUEUE_PREFIX });
  try {
    const lock = await measured(children, async () => {
      const { run } = await triggerNightlyRun(db, payDates, shape.runDate, { kind: 'manual', by: 'bench' });
      for (;;) {
        const progress = await readRunProgress(db, run.id);
        if (progress.finishedAt !== null) return loadNightlySummary(db, run.id);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    });
    if (lock.result.failures.length > 0) throw new Error(`${lock.result.failures.length} pay dates failed to lock`);
    const snapshots = (
      await sql<LockedSnapshot>`select id, payroll_id, pay_period from deduction_snapshots where pay_date = ${shape.payDate} and status <> 'superseded' order by payroll_id`.execute(
        db,
      )
    ).rows;
    await sql`analyze`.execute(db);
    await timed('confirmations (not timed)', async () => submitConfirmations(db, caller, await prepareConfirmations(db, snapshots), concurrency), 34);
    const reconciliation = await measured(children, () =>
      reconcileThroughQueue(
        config,
        snapshots.map((s) => s.payroll_id),
        shape.payDate,
      ),
    );
    if ((reconciliation.result.failed ?? 0) > 0) throw new Error(`${reconciliation.result.failed} reconcile jobs failed`);
    const lockedRequests = Number((await sql<{ n: string }>`select count(*)::text as n from deduction_line_payments`.execute(db)).rows[0]!.n);
    const attempts = Number((await sql<{ n: string }>`select count(*)::text as n from collection_attempts`.execute(db)).rows[0]!.n);
    return {
      processes,
      perProcess,
      lock: { ms: lock.ms, postgres: lock.postgres, workers: lock.workers, units: lockedRequests },
      reconciliation: { ms: reconciliation.ms, postgres: reconciliation.postgres, workers: reconciliation.workers, units: attempts },
      prints: await fingerprints(db),
    };
  } finally {
    await payDates.close();
    await stopWorkerProcesses(children);
    await db.destroy();
    await dropQueueKeys(config);
  }
}

/** The run's queues leave nothing behind in Redis (completed jobs are kept up to a limit). */
async function dropQueueKeys(config: Config): Promise<void> {
  const redis = await connected(createProducerConnection(config.REDIS_URL));
  try {
    const keys = await redis.keys(`${config.QUEUE_PREFIX}:*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  const load = loadavg();
  process.stdout.write(
    `Scale-out benchmark: scale ${scale}, ${shape.payrolls} payrolls, ${shape.payrolls * shape.employeesPerPayroll * shape.paymentsPerEmployee} payment requests; ` +
      `processes ${processCounts.join(', ')}; ${concurrency} pay-date jobs in flight in all; load average at start ${load.map((l) => l.toFixed(2)).join(' ')}; ${new Date().toISOString()}\n`,
  );
  const url = `${baseUrl}/${database}`;
  await recreateDatabase(url);
  const setup = createDatabase(url, 1);
  await timed('migrate', () => migrateToLatest(setup), 34);
  await timed('generate data', () => generateNightlyData(setup, shape), 34);
  const providerId = (await sql<{ id: string }>`select id from payroll_providers limit 1`.execute(setup)).rows[0]!.id;
  const providerClient = await createClient(setup, { name: 'Bench provider client', role: 'payroll_provider', payrollProviderId: providerId });
  const caller = { clientId: providerClient.clientId, role: 'payroll_provider' as const, scopes: providerClient.scopes, payrollProviderId: providerId };
  await sql`analyze`.execute(setup);
  await setup.destroy();
  await admin(`drop database if exists "${pristine}" with (force)`);
  await timed('keep it as a template', () => admin(`create database "${pristine}" template "${database}"`), 34);

  const runs: RunFigures[] = [];
  try {
    for (const processes of processCounts) {
      const figures = await run(processes, caller);
      runs.push(figures);
      process.stdout.write(
        `  ${processes} process(es) x ${figures.perProcess}: lock ${seconds(figures.lock.ms)} s (pg ${figures.lock.postgres.toFixed(1)} s, workers ${figures.lock.workers.toFixed(1)} s CPU), ` +
          `reconciliation ${seconds(figures.reconciliation.ms)} s (pg ${figures.reconciliation.postgres.toFixed(1)} s, workers ${figures.reconciliation.workers.toFixed(1)} s CPU)\n`,
      );
    }
  } finally {
    await admin(`drop database if exists "${pristine}" with (force)`);
  }

  const first = runs[0]!;
  process.stdout.write(
    '\n| worker processes × pay-date jobs each | lock s | payment requests/s | PG CPU s | workers CPU s | reconciliation s | attempts/s | PG CPU s | workers CPU s | lock vs 1 process | reconciliation vs 1 process |\n',
  );
  process.stdout.write('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n');
  for (const r of runs) {
    process.stdout.write(
      `| ${r.processes} × ${r.perProcess} | ${seconds(r.lock.ms)} | ${perSecond(r.lock.units, r.lock.ms)} | ${r.lock.postgres.toFixed(1)} | ${r.lock.workers.toFixed(1)} | ` +
        `${seconds(r.reconciliation.ms)} | ${perSecond(r.reconciliation.units, r.reconciliation.ms)} | ${r.reconciliation.postgres.toFixed(1)} | ${r.reconciliation.workers.toFixed(1)} | ` +
        `${(r.lock.ms / first.lock.ms).toFixed(2)} | ${(r.reconciliation.ms / first.reconciliation.ms).toFixed(2)} |\n`,
    );
  }
  process.stdout.write('\nFingerprints (rows, hash sum) of the first run:\n');
  for (const [table, print] of Object.entries(first.prints)) process.stdout.write(`  ${table.padEnd(26)} ${print}\n`);
  const differing = runs.flatMap((r) =>
    Object.keys(first.prints)
      .filter((table) => r.prints[table] !== first.prints[table])
      .map((table) => `${r.processes} processes: ${table} ${r.prints[table]}`),
  );
  if (differing.length > 0) {
    process.stdout.write(`RESULTS DIFFER from the first run:\n${differing.map((line) => `  ${line}`).join('\n')}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(
      `Every run wrote the same: all ${Object.keys(first.prints).length} fingerprints identical across ${runs.map((r) => r.processes).join(', ')} processes.\n`,
    );
  }
  process.stdout.write(
    `load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
}

await main();
