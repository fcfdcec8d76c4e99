/**
 * Whole pay-date cycle benchmark (a script, not a test):
 * `npx tsx test/bench/cycle.ts [--scale 1] [--database deductions_bench_cycle] [--concurrency 8] [--server postgres://postgres@127.0.0.1:5432]`
 *   `[--profile-phase N] [--profile-file /tmp/bench-cycle-phase.cpuprofile]` (a CPU profile of this process over phase N's timed work)
 *   `[--statements N]` (each phase's N costliest statements from pg_stat_statements, which the server must preload)
 *
 * On a fresh database, generates the nightly benchmark's data (10,000 payrolls, 500,000 employees,
 * 1,000,000 payment requests at --scale 1; generateNightlyData), then runs the cycle phase by phase:
 *   1. nightly lock: runNightlyNow through real BullMQ workers (in this process);
 *   2. provider pulls: getDeductionData (the service function behind GET .../deduction-data) of every
 *      locked payroll pay date, as the payroll provider, --concurrency at a time;
 *   3. confirmations: submitConfirmation per pay date (submitConfirmations; what payroll deducted, 90 % in
 *      full and 10 % half, is prepared before the timing by prepareConfirmations);
 *   4. reconciliation: one reconcile job per pay date through the workers (reconcileThroughQueue);
 *   5. remittance: a matching run (it creates the remittances from the reports), one camt.053 statement
 *      paying every remittance in full with its reference written from them (the bank's work, not
 *      timed), and its import (parse, store, match) through importStatement;
 *   6. payouts: runPayoutsOn with funding 'received';
 *   7. the reconciliation CSV export, in a child process (reconcile-export.ts) so its RSS is its own.
 * Each phase gets a runtime (pool, workers) of its own, closed before the phase's figures are read, so
 * that its backends have exited and flushed their statistics. Per phase it prints wall time, rows/s,
 * CPU seconds of PostgreSQL (every postgres process, plus the postmaster's reaped children: backends
 * that exited during the phase; split by role, sampled every 250 ms: backends, autovacuum,
 * checkpointer, the WAL and background writers), of this Node process (workers included; the export's own process for
 * phase 7) and of Redis (INFO cpu), WAL written, peak RSS (sampled every 250 ms), and the ratio to a
 * floor measured right after it: one INSERT ... SELECT generate_series of as many rows as the phase
 * wrote (inserted + updated + deleted, pg_stat_database), rolled back. Phases that write no rows
 * (pulls, export) get a floor of the rows they read out instead, whatever autovacuum wrote meanwhile. Then the money checks,
 * and a table of the phases ending with the whole cycle: their wall times summed against their floors summed.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, createReadStream, statSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { composition } from '../../bin/composition.ts';
import { cliActor } from '../../src/platform/audit/audit-service.ts';
import { createClient } from '../../src/directory/auth/clients-service.ts';
import { addWorkingDays } from '../../src/directory/calendars/working-days.ts';
import { matchingPolicyOf } from '../../src/settlement/cash/cash-service.ts';
import { runMatching } from '../../src/settlement/cash/matching-service.ts';
import { importStatement } from '../../src/settlement/cash/statement-import-service.ts';
import { inParallel } from '../../src/faces/cli/demo/api-client.ts';
import { insertBeneficiaryAccount } from '../../src/faces/cli/demo/demo-repository.ts';
import { parseConfig } from '../../src/platform/config/config.ts';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { getDeductionData } from '../../src/cycle/deduction-data/deduction-data-service.ts';
import { runPayoutsOn } from '../../src/settlement/payouts/payout-service.ts';
import { createProducerConnection } from '../../src/platform/runtime/redis-connections.ts';
import { openRuntime } from '../../src/platform/runtime/runtime.ts';
import { simulatedCamt053 } from '../../src/faces/sandbox/simulated-bank-statement.ts';
import { runNightlyNow } from '../../src/faces/workers/nightly-runner.ts';
import {
  prepareConfirmations,
  submitConfirmations,
  generateNightlyData,
  type LockedSnapshot,
  megabytes,
  perSecond,
  postgresCpuSeconds,
  PostgresCpuByRole,
  reconcileThroughQueue,
  recreateDatabase,
  seconds,
  timed,
  floorMs,
} from './bench-support.ts';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    database: { type: 'string', default: 'deductions_bench_cycle' },
    /** The PostgreSQL server: another one than the default, e.g. with the recommended settings (recommended-postgres.sh). */
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    concurrency: { type: 'string', default: '8' },
    out: { type: 'string', default: '/tmp/bench-cycle-reconciliation.csv' },
    statement: { type: 'string', default: '/tmp/bench-cycle-camt053.xml' },
    /** A phase's number (1-6): a CPU profile of this process over its timed work, written to --profile-file (for Chrome's DevTools). */
    'profile-phase': { type: 'string' },
    'profile-file': { type: 'string', default: '/tmp/bench-cycle-phase.cpuprofile' },
    /** Per phase, the N statements that took the most time (pg_stat_statements: the server must preload it). */
    statements: { type: 'string' },
  },
});
const scale = Number(values.scale);
const concurrency = Number(values.concurrency);
const shape = { payrolls: Math.round(10_000 * scale), employeesPerPayroll: 50, paymentsPerEmployee: 2, runDate: '2026-12-01', payDate: '2026-12-10' };
const PAY_DATE = shape.payDate;
/** The statement's booking date and the cash rules' today: after the pay date, before the remittances are due (3 working days). */
const BANK_DAY = '2026-12-11';
const ACCOUNT = { sortCode: '04-00-04', accountNumber: '41234978' }; // generateNightlyData's collection account
const config = parseConfig({
  ...process.env,
  DATABASE_URL: `${values.server}/${values.database}`,
  QUEUE_PREFIX: `bench-cycle-${process.pid}`,
  LOG_LEVEL: 'warn',
  DATABASE_POOL_SIZE: '12',
});

// Measuring ------------------------------------------------------------------------------------------

const redis = createProducerConnection(config.REDIS_URL);
async function redisCpuSeconds(): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number((info.match(new RegExp(`${name}:([\\d.]+)`)) ?? [])[1] ?? 0);
  return field('used_cpu_sys') + field('used_cpu_user');
}

let peakRss = 0;
const postgresByRole = new PostgresCpuByRole();
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 250);

interface Mark {
  postgres: number;
  node: number;
  redis: number;
  wal: string;
  rows: number;
}

/** The measuring connection: a pool of one that stays open, reading positions and statistics only. */
let meter: Database;
async function mark(): Promise<Mark> {
  // Statistics of backends that have exited are flushed; this connection's own (the floors) are forced out.
  await sql`select pg_stat_force_next_flush()`.execute(meter);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const row = (
    await sql<{ wal: string; rows: string }>`
      select pg_current_wal_lsn()::text as wal,
             (select (tup_inserted + tup_updated + tup_deleted)::text from pg_stat_database where datname = current_database()) as rows
    `.execute(meter)
  ).rows[0]!;
  await sql`select pg_stat_clear_snapshot()`.execute(meter);
  const usage = process.cpuUsage();
  return { postgres: postgresCpuSeconds(), node: (usage.user + usage.system) / 1e6, redis: await redisCpuSeconds(), wal: row.wal, rows: Number(row.rows) };
}

async function walBytes(from: string, to: string): Promise<number> {
  return Number((await sql<{ bytes: string }>`select pg_wal_lsn_diff(${to}::pg_lsn, ${from}::pg_lsn)::text as bytes`.execute(meter)).rows[0]!.bytes);
}

/** What --statements prints after a phase: its costliest statements, read before the floor runs. */
async function topStatements(limit: number): Promise<string> {
  const { rows } = await sql<{ calls: string; total_ms: string; mean_ms: string; rows: string; hit: string; read: string; written: string; query: string }>`
    select calls::text, round(total_exec_time)::text as total_ms, round(mean_exec_time::numeric, 3)::text as mean_ms, rows::text,
           shared_blks_hit::text as hit, shared_blks_read::text as read, shared_blks_written::text as written,
           left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 110) as query
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
    order by total_exec_time desc limit ${limit}
  `.execute(meter);
  return rows
    .map(
      (r) =>
        `      ${r.total_ms.padStart(7)} ms ${r.calls.padStart(7)} calls ${r.mean_ms.padStart(9)} ms/call ${r.rows.padStart(8)} rows hit ${r.hit} read ${r.read} written ${r.written}: ${r.query}\n`,
    )
    .join('');
}

/** The inspector's CPU profiler in this process (workers included), for --profile-phase. */
const profiler = {
  session: undefined as Session | undefined,
  async start() {
    this.session = new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.start');
  },
  async stop(file: string) {
    const { profile } = await this.session!.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    this.session!.disconnect();
    process.stdout.write(`  (CPU profile of the phase's timed work: ${file})\n`);
  },
};

interface PhaseFigures {
  name: string;
  ms: number;
  /** What rows/s counts, and how many. */
  unit: string;
  units: number;
  rowsWritten: number;
  floorRows: number;
  floorMs: number;
  postgres: number;
  node: number;
  redis: number;
  wal: number;
  peakRss: number;
  note: string;
}
const figures: PhaseFigures[] = [];

/**
 * Times `work` (the phase proper; `setup` and `teardown` around it are not timed but their CPU is
 * counted), then reads the phase's CPU, WAL and rows written, and measures its floor.
 */
async function phase<T>(
  name: string,
  body: (
    time: <R>(work: () => Promise<R>) => Promise<R>,
  ) => Promise<{ result: T; unit: string; units: number; readRows?: number; note?: string; node?: number; peakRss?: number; ms?: number }>,
): Promise<T> {
  if (values.statements !== undefined) await sql`select pg_stat_statements_reset()`.execute(meter);
  const before = await mark();
  const roleMark = postgresByRole.mark();
  peakRss = process.memoryUsage().rss;
  let ms = 0;
  const profiling = values['profile-phase'] !== undefined && name.startsWith(`${values['profile-phase']} `);
  // A phase timed in parts (remittance) writes one profile per part: name.cpuprofile, name-2.cpuprofile...
  let part = 0;
  const profileFile = () => (++part === 1 ? values['profile-file']! : values['profile-file']!.replace(/(\.cpuprofile)?$/, `-${part}$1`));
  const out = await body(async (work) => {
    if (profiling) await profiler.start();
    const started = performance.now();
    try {
      return await work();
    } finally {
      ms += performance.now() - started;
      if (profiling) await profiler.stop(profileFile());
    }
  });
  const after = await mark();
  const statements = values.statements === undefined ? '' : await topStatements(Number(values.statements));
  const byRole = postgresByRole.since(roleMark);
  const rowsWritten = after.rows - before.rows;
  // A reading phase's floor is what it reads out, whatever autovacuum or analyze wrote meanwhile.
  const floorRows = out.readRows ?? (rowsWritten > 0 ? rowsWritten : out.units);
  const floor = await floorMs(meter, Math.max(floorRows, 1));
  const wallMs = out.ms ?? ms;
  const f: PhaseFigures = {
    name,
    ms: wallMs,
    unit: out.unit,
    units: out.units,
    rowsWritten,
    floorRows,
    floorMs: floor,
    postgres: after.postgres - before.postgres,
    node: out.node ?? after.node - before.node,
    redis: after.redis - before.redis,
    wal: await walBytes(before.wal, after.wal),
    peakRss: out.peakRss ?? peakRss,
    note: out.note ?? '',
  };
  figures.push(f);
  process.stdout.write(
    `  ${name.padEnd(16)} ${seconds(wallMs).padStart(8)} s  ${perSecond(f.units, wallMs)} ${f.unit}/s; ${rowsWritten} rows written; floor ${seconds(floor)} s (${floorRows} rows), ${(wallMs / floor).toFixed(2)}x` +
      `; CPU pg ${f.postgres.toFixed(1)} s (${Object.entries(byRole)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([role, cpu]) => `${role} ${cpu.toFixed(1)}`)
        .join(
          ', ',
        )}), node ${f.node.toFixed(1)} s, redis ${f.redis.toFixed(1)} s; WAL ${megabytes(f.wal / 1024)}; peak RSS ${megabytes(f.peakRss / 1024)}${f.note ? `; ${f.note}` : ''}\n`,
  );
  process.stdout.write(statements);
  return out.result;
}

// The cycle -------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const load = loadavg();
  process.stdout.write(
    `Whole cycle benchmark: scale ${scale}, ${shape.payrolls} payrolls, ${shape.payrolls * shape.employeesPerPayroll} employees, ` +
      `${shape.payrolls * shape.employeesPerPayroll * shape.paymentsPerEmployee} payment requests; concurrency ${concurrency}; ` +
      `load average at start ${load.map((l) => l.toFixed(2)).join(' ')}; ${new Date().toISOString()}\n`,
  );
  await recreateDatabase(config.DATABASE_URL);
  meter = createDatabase(config.DATABASE_URL, 1);
  const settings = (
    await sql<{ name: string; setting: string }>`
      select name, current_setting(name) as setting from pg_settings
      where name in ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'work_mem', 'synchronous_commit') order by name
    `.execute(meter)
  ).rows;
  process.stdout.write(`PostgreSQL ${values.server}: ${settings.map((s) => `${s.name}=${s.setting}`).join(', ')}\n`);
  if (values.statements !== undefined) await sql`create extension if not exists pg_stat_statements`.execute(meter);
  await timed('migrate', () => migrateToLatest(meter), 16);
  await timed('generate data', () => generateNightlyData(meter, shape), 16);

  // Set-up no phase times: the provider's API client and the biller's beneficiary account.
  const providerId = (await sql<{ id: string }>`select id from payroll_providers limit 1`.execute(meter)).rows[0]!.id;
  const providerClient = await createClient(meter, { name: 'Bench provider client', role: 'payroll_provider', payrollProviderId: providerId });
  const caller = { clientId: providerClient.clientId, role: 'payroll_provider' as const, scopes: providerClient.scopes, payrollProviderId: providerId };
  const billerId = (await sql<{ id: string }>`select id from clients where role = 'biller' limit 1`.execute(meter)).rows[0]!.id;
  await insertBeneficiaryAccount(meter, {
    biller_client_id: billerId,
    currency: 'GBP',
    account_number: '70000019',
    sort_code: '20-00-00',
    account_holder_name: 'Bench biller',
  });
  // Autovacuum would have analyzed the freshly generated tables before any lock in service.
  await sql`analyze`.execute(meter);
  process.stdout.write('\n');

  // 1. Nightly lock.
  const lock = await phase('1 nightly lock', async (time) => {
    const runtime = await openRuntime(config, 'bench');
    const workers = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: concurrency });
    const summary = await time(() => runNightlyNow(runtime, shape.runDate, { workers, pollMs: 250 }));
    await workers.close();
    await runtime.close();
    const instructed = Number((await sql<{ n: string }>`select count(*)::text as n from payment_requests where status = 'instructed'`.execute(meter)).rows[0]!.n);
    return {
      result: summary,
      unit: 'payment requests',
      units: instructed,
      note: `${summary.payrollsLocked} of ${summary.pairs} pay dates locked, ${summary.failures.length} failures`,
    };
  });
  await sql`analyze`.execute(meter);

  const snapshots = (
    await sql<LockedSnapshot>`select id, payroll_id, pay_period from deduction_snapshots where pay_date = ${PAY_DATE} and status <> 'superseded' order by payroll_id`.execute(
      meter,
    )
  ).rows;

  // 2. Provider pulls, through the service function (not HTTP).
  await phase('2 provider pulls', async (time) => {
    const db = createDatabase(config.DATABASE_URL, concurrency);
    let lines = 0;
    await time(() =>
      inParallel(snapshots, concurrency, async (s) => {
        const data = await getDeductionData(db, caller, { payrollId: s.payroll_id, payDate: PAY_DATE }, config.SERVICE_TIME_ZONE);
        lines += data.deduction_data_response.deduction_data.length;
      }),
    );
    await db.destroy();
    return { result: null, unit: 'employee lines', units: lines, readRows: lines, note: `${snapshots.length} pay dates pulled` };
  });

  // 3. Confirmations.
  await phase('3 confirmations', async (time) => {
    const db = createDatabase(config.DATABASE_URL, concurrency);
    const prepared = await prepareConfirmations(db, snapshots);
    await time(() => submitConfirmations(db, caller, prepared, concurrency));
    await db.destroy();
    const records = Number((await sql<{ n: string }>`select count(*)::text as n from deduction_records`.execute(meter)).rows[0]!.n);
    return { result: null, unit: 'employee records', units: records };
  });

  // 4. Reconciliation.
  const reconcileCounts = await phase('4 reconciliation', async (time) => {
    const runtime = await openRuntime(config, 'bench');
    const workers = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: concurrency });
    const counts = await time(() =>
      reconcileThroughQueue(
        config,
        snapshots.map((s) => s.payroll_id),
        PAY_DATE,
      ),
    );
    await workers.close();
    const keys = await runtime.redis.keys(`${config.QUEUE_PREFIX}:*`);
    for (let i = 0; i < keys.length; i += 500) await runtime.redis.del(...keys.slice(i, i + 500));
    await runtime.close();
    const attempts = Number((await sql<{ n: string }>`select count(*)::text as n from collection_attempts`.execute(meter)).rows[0]!.n);
    return { result: counts, unit: 'collection attempts', units: attempts, note: `${counts.failed ?? 0} failed jobs` };
  });
  await sql`analyze`.execute(meter);

  // 5. Remittance: the remittances a matching run creates, one statement paying each in full, its import.
  const policy = await matchingPolicyOf(meter, config, BANK_DAY);
  const matching = await phase('5 remittance', async (time) => {
    const db = createDatabase(config.DATABASE_URL, 2);
    const parts: string[] = [];
    const step = async <R>(label: string, work: () => Promise<R>, timedInPhase = true) => {
      const started = performance.now();
      const result = timedInPhase ? await time(work) : await work();
      parts.push(`${label} ${seconds(performance.now() - started)} s${timedInPhase ? '' : " (the bank's work, not timed)"}`);
      return result;
    };
    await step('matching run (creates remittances)', () => runMatching(db, policy));
    const credits = await step(
      'statement written',
      async () => {
        const owed = (
          await sql<{ payment_reference: string; owed: string }>`
          select payment_reference, (expected - received)::text as owed from remittances where pay_date = ${PAY_DATE} and expected > received order by payment_reference
        `.execute(db)
        ).rows;
        const entries = owed.map((r, i) => ({
          bankReference: `BNK${String(i + 1).padStart(9, '0')}`,
          direction: 'credit' as const,
          amount: Number(r.owed),
          bookingDate: BANK_DAY,
          reference: r.payment_reference,
          debtorName: 'Employer Ltd',
        }));
        writeFileSync(
          values.statement!,
          simulatedCamt053({ statementId: `BENCH-CYCLE-${Date.now()}`, account: ACCOUNT, currency: 'GBP', createdAt: new Date(`${BANK_DAY}T18:00:00Z`), entries }),
        );
        return entries.length;
      },
      false,
    );
    const imported = await step('import (parse, store, match)', () =>
      importStatement(db, { source: createReadStream(values.statement!), fileName: 'bench-cycle.xml', actor: cliActor('bench'), maxBytes: 1 << 30, policy }),
    );
    await db.destroy();
    const m = imported.matching!;
    return {
      result: m,
      unit: 'credits',
      units: credits,
      note: `${(statSync(values.statement!).size / 1_048_576).toFixed(1)} MB camt.053; ${parts.join(', ')}; matches ${Object.entries(m.byRule)
        .map(([rule, n]) => `${rule} ${n}`)
        .join(', ')}, ${m.unmatchedCredits} credits unmatched`,
    };
  });

  // 6. Payouts, funded by received remittances only.
  const payoutDate = addWorkingDays(PAY_DATE, config.SETTLEMENT_DELAY_WORKING_DAYS + 1, new Set());
  const payouts = await phase('6 payouts', async (time) => {
    const db = createDatabase(config.DATABASE_URL, config.PAYOUT_CONCURRENCY);
    const summary = await time(() =>
      runPayoutsOn(db, { funding: 'received', today: payoutDate, settlementDelayWorkingDays: config.SETTLEMENT_DELAY_WORKING_DAYS, concurrency: config.PAYOUT_CONCURRENCY }),
    );
    await db.destroy();
    const items = Number((await sql<{ n: string }>`select count(*)::text as n from payout_items`.execute(meter)).rows[0]!.n);
    return {
      result: summary,
      unit: 'payout items',
      units: items,
      note: `${summary.groups.length} payout groups (${summary.groups.map((g) => g.outcome).join(', ')}), ${config.PAYOUT_CONCURRENCY} transactions at once`,
    };
  });

  // 7. The reconciliation CSV export, in a process of its own.
  await phase('7 CSV export', async () => {
    const exportScript = fileURLToPath(new URL('./reconcile-export.ts', import.meta.url));
    const child = execFileSync(
      process.execPath,
      ['--import', 'tsx', exportScript, '--server', values.server!, '--database', values.database!, '--pay-date', PAY_DATE, '--out', values.out!],
      { encoding: 'utf8' },
    );
    const exported = JSON.parse(child.trim().split('\n').at(-1)!) as { ms: number; bytes: number; maxRssKb: number; cpuMs: number };
    const rows =
      readFileSync(values.out!, 'utf8')
        .split('\n')
        .filter((line) => line.length > 0).length - 1;
    return {
      result: exported,
      unit: 'CSV rows',
      units: rows,
      readRows: rows,
      ms: exported.ms,
      node: exported.cpuMs / 1000,
      peakRss: exported.maxRssKb * 1024,
      note: `${Math.round(exported.bytes / 1_048_576)} MB file; node CPU and RSS are the export process's`,
    };
  });

  // Money checks -------------------------------------------------------------------------------------
  const money = (
    await sql<{
      employers: number;
      requested: string;
      deducted: string;
      collected: string;
      received: string;
      paid: string;
      disordered_employers: number;
    }>`
      with requested as (
        select p.employer_id, sum(pr.amount)::bigint as requested, sum(pr.collected_amount)::bigint as collected
        from payment_requests pr join payrolls p on p.id = pr.payroll_id group by 1
      ),
      remitted as (
        select employer_id, sum(coalesce(deducted, 0))::bigint as deducted, sum(received)::bigint as received from remittances group by 1
      ),
      paid as (
        select p.employer_id, sum(pi.amount)::bigint as paid
        from payout_items pi join payouts po on po.id = pi.payout_id and po.status <> 'failed'
        join payment_requests pr on pr.id = pi.payment_request_id join payrolls p on p.id = pr.payroll_id
        where pi.released_at is null group by 1
      ),
      per_employer as (
        select q.employer_id, q.requested, q.collected, coalesce(r.deducted, 0) as deducted, coalesce(r.received, 0) as received, coalesce(d.paid, 0) as paid
        from requested q left join remitted r using (employer_id) left join paid d using (employer_id)
      )
      select count(*)::int as employers, sum(requested)::text as requested, sum(deducted)::text as deducted, sum(collected)::text as collected,
             sum(received)::text as received, sum(paid)::text as paid,
             count(*) filter (where not (requested >= deducted and deducted >= received and received >= paid))::int as disordered_employers
      from per_employer
    `.execute(meter)
  ).rows[0]!;
  const integrity = (
    await sql<{ payouts: number; payouts_off: number; unfunded_items: number; unremitted_items: number; overpaid_pay_dates: number; unpaid_entries: number }>`
      select (select count(*)::int from payouts) as payouts,
             (select count(*)::int from payouts po where po.amount <> (select coalesce(sum(pi.amount), 0) from payout_items pi where pi.payout_id = po.id)) as payouts_off,
             (select count(*)::int from payout_items pi join ledger_entries le on le.id = pi.ledger_entry_id where le.funded_at is null) as unfunded_items,
             (select count(*)::int from payout_items pi join ledger_entries le on le.id = pi.ledger_entry_id
                join payment_requests pr on pr.id = pi.payment_request_id
                left join remittances r on r.payroll_id = pr.payroll_id and r.pay_date = le.pay_date
              where r.id is null or r.received < r.expected) as unremitted_items,
             (select count(*)::int from (
                select r.id from remittances r
                join payment_requests pr on pr.payroll_id = r.payroll_id
                join payout_items pi on pi.payment_request_id = pr.id and pi.released_at is null
                join ledger_entries le on le.id = pi.ledger_entry_id and le.pay_date = r.pay_date
                group by r.id, r.received having sum(pi.amount) > r.received) o) as overpaid_pay_dates,
             (select count(*)::int from ledger_entries where payout_id is null) as unpaid_entries
    `.execute(meter)
  ).rows[0]!;
  clearInterval(sampler);
  postgresByRole.stop();
  await meter.destroy();
  await removeQueueKeys();
  await redis.quit();

  const [requested, deducted, received, paid] = [money.requested, money.deducted, money.received, money.paid].map(Number) as [number, number, number, number];
  const failed = (reconcileCounts.failed ?? 0) + lock.failures.length;
  const checks: Array<[string, boolean]> = [
    [
      `total requested ${requested} >= deducted ${deducted} >= received ${received} >= paid out ${paid} (collected ${money.collected})`,
      requested >= deducted && deducted >= received && received >= paid,
    ],
    [`per employer: ${money.disordered_employers} of ${money.employers} employers out of that order`, money.disordered_employers === 0],
    [`every payout equals the sum of its items: ${integrity.payouts_off} of ${integrity.payouts} differ`, integrity.payouts_off === 0],
    [
      `nothing paid out unfunded: ${integrity.unfunded_items} items of unfunded entries, ${integrity.unremitted_items} of pay dates not remitted in full, ${integrity.overpaid_pay_dates} pay dates paid beyond what was received`,
      integrity.unfunded_items + integrity.unremitted_items + integrity.overpaid_pay_dates === 0,
    ],
    [
      `everything received was paid out: ${integrity.unpaid_entries} ledger entries unpaid, paid ${paid} = received ${received}`,
      integrity.unpaid_entries === 0 && paid === received,
    ],
    [
      `no failed jobs (${failed}), every remittance credit matched (${matching.unmatchedCredits} unmatched), payouts ${payouts.groups.map((g) => g.outcome).join(', ')}`,
      failed === 0 && matching.unmatchedCredits === 0,
    ],
  ];
  process.stdout.write(`\nMoney checks\n${checks.map(([text, ok]) => `  ${ok ? 'ok  ' : 'FAIL'} ${text}`).join('\n')}\n`);

  process.stdout.write(
    `\n| phase | wall s | rows/s | rows written | floor s (rows) | × floor | PG CPU s | Node CPU s | Redis CPU s | WAL MB | peak RSS MB |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n` +
      figures
        .map(
          (f) =>
            `| ${f.name} | ${seconds(f.ms)} | ${perSecond(f.units, f.ms)} ${f.unit} | ${f.rowsWritten.toLocaleString('en-GB')} | ${seconds(f.floorMs)} (${f.floorRows.toLocaleString('en-GB')}) | ${(f.ms / f.floorMs).toFixed(1)} | ${f.postgres.toFixed(1)} | ${f.node.toFixed(1)} | ${f.redis.toFixed(1)} | ${Math.round(f.wal / 1_048_576)} | ${Math.round(f.peakRss / 1_048_576)} |`,
        )
        .join('\n') +
      `\n${wholeCycleRow(figures)}` +
      `\n\nload average at start ${load.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
  );
  if (checks.some(([, ok]) => !ok)) {
    process.stderr.write('Benchmark run was incorrect: see the money checks\n');
    process.exitCode = 1;
  }
}

/**
 * The phases summed, beside their floors summed: the cycle's ratio to its floor says how close to the
 * write bound it runs whatever the host, where its seconds alone move with the machine.
 */
function wholeCycleRow(phases: readonly PhaseFigures[]): string {
  const sum = (pick: (f: PhaseFigures) => number) => phases.reduce((total, f) => total + pick(f), 0);
  const [ms, floorMs] = [sum((f) => f.ms), sum((f) => f.floorMs)];
  return (
    `| **whole cycle** | **${seconds(ms)}** | | ${sum((f) => f.rowsWritten).toLocaleString('en-GB')} | ${seconds(floorMs)} | ${(ms / floorMs).toFixed(1)} | ` +
    `${sum((f) => f.postgres).toFixed(1)} | ${sum((f) => f.node).toFixed(1)} | ${sum((f) => f.redis).toFixed(1)} | ${Math.round(sum((f) => f.wal) / 1_048_576)} | |`
  );
}

/** The lock's finished jobs stay in Redis under this run's prefix (the reconciliation phase removes its own). */
async function removeQueueKeys(): Promise<void> {
  for (let cursor = '0'; ;) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.QUEUE_PREFIX}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    if ((cursor = next) === '0') break;
  }
}

try {
  await main();
} catch (error) {
  // A failed run leaves no queue keys behind either; its database stays for a look.
  await removeQueueKeys().catch(() => {});
  throw error;
}
