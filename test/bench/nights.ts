/**
 * A month of nights (issue 36, part 1; a script, not a test):
 * `npx tsx test/bench/nights.ts [--nights 30] [--scale 0.1] [--database deductions_bench_nights] [--concurrency 8] [--server postgres://postgres@127.0.0.1:5432]`
 *
 * On a fresh database, generates the nightly benchmark's data for night 1 (generateNightlyData: at
 * --scale 1, 10,000 payrolls, 500,000 employees, 1,000,000 payment requests), then runs the whole
 * cycle of cycle.ts once per night, N nights in a row, each night on the next pay date (28 days on,
 * so every pay date is a Thursday) with new payment requests (two per mandate) and a new pay date per
 * payroll locking 9 days before it; earlier nights' data stays, as history. A night's phases, as in
 * cycle.ts: 1 nightly lock, 2 provider pulls, 3 confirmations, 4 reconciliation, 5 remittance (the
 * matching run, the bank's statement written untimed, its import), 6 payouts, 7 the CSV export (a
 * child process), and 8 webhooks: the outbox dispatcher (dispatchPendingEvents) until no event waits.
 * No webhook endpoint is registered, so the dispatcher marks events dispatched and creates no
 * deliveries. Each phase's floor is cycle.ts's: one INSERT ... SELECT generate_series of as many rows
 * as it wrote (or read), rolled back.
 *
 * Per night: the cycle's seconds (the phases' timed work summed), its ratio to night 1 and to the
 * sum of its floors, rows written per second, the database's size (pg_total_relation_size summed over
 * the user tables) and its 5 largest tables, autovacuum and autoanalyze runs (pg_stat_user_tables
 * deltas), checkpoints (pg_stat_bgwriter deltas: the whole server's, other databases' included), the
 * outbox (undispatched events before the webhooks phase, after it, and pending webhook deliveries),
 * the idempotency_keys rows, and the tables most read by sequential scans during the night
 * (seq_scan and seq_tup_read deltas). The data set-up between nights is not timed. The script's own
 * reads during a night (the locked snapshots by pay date, the lines payroll confirms, the remittances
 * the bank pays, the undispatched events) count among the night's scans; the rest of its counts are
 * read after the night's statistics. With --vacuum, VACUUM ANALYZE runs between nights (untimed) in
 * place of the plain ANALYZE, standing in for autovacuum where the server has it off. At the end: night
 * N against night 1, the phases that grew most, the tables whose sequential reads grew most, and the
 * money checks of cycle.ts over all nights.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
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
import { dispatchPendingEvents } from '../../src/faces/webhooks/webhook-dispatch-service.ts';
import {
  prepareConfirmations,
  submitConfirmations,
  generateNightlyData,
  type LockedSnapshot,
  megabytes,
  perSecond,
  reconcileThroughQueue,
  recreateDatabase,
  seconds,
  timed,
  floorMs,
} from './bench-support.ts';

const { values } = parseArgs({
  options: {
    nights: { type: 'string', default: '30' },
    scale: { type: 'string', default: '0.1' },
    database: { type: 'string', default: 'deductions_bench_nights' },
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432' },
    concurrency: { type: 'string', default: '8' },
    out: { type: 'string', default: '/tmp/bench-nights-reconciliation.csv' },
    statement: { type: 'string', default: '/tmp/bench-nights-camt053.xml' },
    /** VACUUM ANALYZE between nights (untimed), standing in for autovacuum on a server that has it off (as the shared one here). */
    vacuum: { type: 'boolean', default: false },
  },
});
const nights = Number(values.nights);
const scale = Number(values.scale);
const concurrency = Number(values.concurrency);
const payrolls = Math.round(10_000 * scale);
const employeesPerPayroll = 50;
const paymentsPerEmployee = 2;
const FIRST_PAY_DATE = '2026-12-10'; // a Thursday
const ACCOUNT = { sortCode: '04-00-04', accountNumber: '41234978' }; // generateNightlyData's collection account
const config = parseConfig({
  ...process.env,
  DATABASE_URL: `${values.server}/${values.database}`,
  QUEUE_PREFIX: `bench-nights-${process.pid}`,
  LOG_LEVEL: 'warn',
  DATABASE_POOL_SIZE: '12',
});

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Night n's dates: its pay date 28 days after the last night's, the lock 9 days before, the bank's day after. */
function datesOf(night: number) {
  const payDate = addDays(FIRST_PAY_DATE, 28 * (night - 1));
  const month = 8 + night; // night 1: pay period 9-2026, as generateNightlyData's
  return {
    payDate,
    runDate: addDays(payDate, -9),
    cutoffDate: addDays(payDate, -7),
    bankDay: addDays(payDate, 1),
    payPeriod: `${((month - 1) % 12) + 1}-${2026 + Math.floor((month - 1) / 12)}`,
  };
}

// Measuring ------------------------------------------------------------------------------------------

const redis = createProducerConnection(config.REDIS_URL);
let meter: Database;

/** pg_stat_database's rows written (inserted + updated + deleted) in this database, statistics flushed first. */
async function rowsWrittenSoFar(): Promise<number> {
  await sql`select pg_stat_force_next_flush()`.execute(meter);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const row = (
    await sql<{ rows: string }>`select (tup_inserted + tup_updated + tup_deleted)::text as rows from pg_stat_database where datname = current_database()`.execute(meter)
  ).rows[0]!;
  await sql`select pg_stat_clear_snapshot()`.execute(meter);
  return Number(row.rows);
}

interface TableStats {
  bytes: number;
  seqScan: number;
  seqTupRead: number;
  idxScan: number;
  autovacuum: number;
  autoanalyze: number;
  liveRows: number;
}
interface ServerStats {
  tables: Map<string, TableStats>;
  checkpoints: number;
  checkpointsRequested: number;
  buffersCheckpoint: number;
}

async function serverStats(): Promise<ServerStats> {
  await sql`select pg_stat_force_next_flush()`.execute(meter);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const { rows } = await sql<{
    relname: string;
    bytes: string;
    seq_scan: string;
    seq_tup_read: string;
    idx_scan: string;
    autovacuum_count: string;
    autoanalyze_count: string;
    n_live_tup: string;
  }>`
    select relname, pg_total_relation_size(relid)::text as bytes, seq_scan::text, seq_tup_read::text, coalesce(idx_scan, 0)::text as idx_scan,
           autovacuum_count::text, autoanalyze_count::text, n_live_tup::text
    from pg_stat_user_tables
  `.execute(meter);
  const bgwriter = (
    await sql<{ timed: string; requested: string; buffers: string }>`
      select checkpoints_timed::text as timed, checkpoints_req::text as requested, buffers_checkpoint::text as buffers from pg_stat_bgwriter
    `.execute(meter)
  ).rows[0]!;
  await sql`select pg_stat_clear_snapshot()`.execute(meter);
  return {
    tables: new Map(
      rows.map((r) => [
        r.relname,
        {
          bytes: Number(r.bytes),
          seqScan: Number(r.seq_scan),
          seqTupRead: Number(r.seq_tup_read),
          idxScan: Number(r.idx_scan),
          autovacuum: Number(r.autovacuum_count),
          autoanalyze: Number(r.autoanalyze_count),
          liveRows: Number(r.n_live_tup),
        },
      ]),
    ),
    checkpoints: Number(bgwriter.timed) + Number(bgwriter.requested),
    checkpointsRequested: Number(bgwriter.requested),
    buffersCheckpoint: Number(bgwriter.buffers),
  };
}

async function count(query: ReturnType<typeof sql<{ n: string }>>): Promise<number> {
  return Number((await query.execute(meter)).rows[0]!.n);
}

interface PhaseFigures {
  name: string;
  ms: number;
  rowsWritten: number;
  floorRows: number;
  floorMs: number;
  /** Filled in after the night's statistics are read: what rows/s counts. */
  unit: string;
  units: number;
  note: string;
}

interface NightFigures {
  night: number;
  payDate: string;
  phases: PhaseFigures[];
  ms: number;
  floorMs: number;
  rowsWritten: number;
  before: ServerStats;
  after: ServerStats;
  undispatchedBeforeWebhooks: number;
  undispatchedAfter: number;
  pendingDeliveries: number;
  idempotencyKeys: number;
  failures: number;
  unmatchedCredits: number;
}

async function phase(
  phases: PhaseFigures[],
  name: string,
  body: (time: <R>(work: () => Promise<R>) => Promise<R>) => Promise<{ unit: string; units?: number; readRows?: number; ms?: number; note?: string }>,
): Promise<PhaseFigures> {
  const before = await rowsWrittenSoFar();
  let ms = 0;
  const out = await body(async (work) => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      ms += performance.now() - started;
    }
  });
  const rowsWritten = (await rowsWrittenSoFar()) - before;
  const floorRows = out.readRows ?? (rowsWritten > 0 ? rowsWritten : (out.units ?? 1));
  const f: PhaseFigures = {
    name,
    ms: out.ms ?? ms,
    rowsWritten,
    floorRows,
    floorMs: await floorMs(meter, Math.max(floorRows, 1)),
    unit: out.unit,
    units: out.units ?? 0,
    note: out.note ?? '',
  };
  phases.push(f);
  return f;
}

// One night ------------------------------------------------------------------------------------------

type Caller = Parameters<typeof getDeductionData>[1];

/** Night n's pay dates and payment requests (night 1's come with generateNightlyData); not timed: the API's work of the month. */
async function addNightData(night: number): Promise<void> {
  const { payDate, runDate, cutoffDate, payPeriod } = datesOf(night);
  await sql`
    insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
    select id, ${payDate}::date, ${cutoffDate}::date, ${payPeriod}, ${runDate}::date from payrolls
  `.execute(meter);
  await sql`
    insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, due_date, target_pay_date)
    select m.biller_client_id, m.id, m.payroll_id, m.employee_id, 'GBP', 1000 + (n * 137 + ${night} * 31 + length(m.id::text)) % 9000, ${payDate}::date, ${payDate}::date
    from mandates m cross join generate_series(1, ${paymentsPerEmployee}) n
  `.execute(meter);
}

async function runNight(night: number, caller: Caller): Promise<NightFigures> {
  const { payDate, runDate, bankDay } = datesOf(night);
  const phases: PhaseFigures[] = [];
  const before = await serverStats();
  let failures = 0;
  let unmatchedCredits = 0;

  await phase(phases, '1 nightly lock', async (time) => {
    const runtime = await openRuntime(config, 'bench');
    const workers = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: concurrency });
    const summary = await time(() => runNightlyNow(runtime, runDate, { workers, pollMs: 250 }));
    await workers.close();
    await runtime.close();
    failures += summary.failures.length;
    return {
      unit: 'payment requests',
      units: payrolls * employeesPerPayroll * paymentsPerEmployee,
      note: `${summary.payrollsLocked} of ${summary.pairs} pay dates locked, ${summary.failures.length} failures`,
    };
  });
  await sql`analyze`.execute(meter);

  const snapshots = (
    await sql<LockedSnapshot>`select id, payroll_id, pay_period from deduction_snapshots where pay_date = ${payDate} and status <> 'superseded' order by payroll_id`.execute(
      meter,
    )
  ).rows;

  await phase(phases, '2 provider pulls', async (time) => {
    const db = createDatabase(config.DATABASE_URL, concurrency);
    let lines = 0;
    await time(() =>
      inParallel(snapshots, concurrency, async (s) => {
        const data = await getDeductionData(db, caller, { payrollId: s.payroll_id, payDate }, config.SERVICE_TIME_ZONE);
        lines += data.deduction_data_response.deduction_data.length;
      }),
    );
    await db.destroy();
    return { unit: 'employee lines', units: lines, readRows: lines };
  });

  await phase(phases, '3 confirmations', async (time) => {
    const db = createDatabase(config.DATABASE_URL, concurrency);
    const prepared = await prepareConfirmations(db, snapshots);
    await time(() => submitConfirmations(db, caller, prepared, concurrency));
    await db.destroy();
    return { unit: 'employee records', units: prepared.reduce((n, p) => n + p.submission.deductions.length, 0) };
  });

  await phase(phases, '4 reconciliation', async (time) => {
    const runtime = await openRuntime(config, 'bench');
    const workers = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: concurrency });
    const counts = await time(() =>
      reconcileThroughQueue(
        config,
        snapshots.map((s) => s.payroll_id),
        payDate,
      ),
    );
    await workers.close();
    await runtime.close();
    await removeQueueKeys();
    failures += counts.failed ?? 0;
    return { unit: 'pay dates', units: snapshots.length, note: `${counts.failed ?? 0} failed jobs` };
  });
  await sql`analyze`.execute(meter);

  const policy = await matchingPolicyOf(meter, config, bankDay);
  await phase(phases, '5 remittance', async (time) => {
    const db = createDatabase(config.DATABASE_URL, 2);
    await time(() => runMatching(db, policy));
    const owed = (
      await sql<{ payment_reference: string; owed: string }>`
        select payment_reference, (expected - received)::text as owed from remittances where pay_date = ${payDate} and expected > received order by payment_reference
      `.execute(db)
    ).rows;
    const entries = owed.map((r, i) => ({
      bankReference: `BNK${String(night).padStart(3, '0')}${String(i + 1).padStart(9, '0')}`,
      direction: 'credit' as const,
      amount: Number(r.owed),
      bookingDate: bankDay,
      reference: r.payment_reference,
      debtorName: 'Employer Ltd',
    }));
    writeFileSync(
      values.statement!,
      simulatedCamt053({ statementId: `BENCH-NIGHTS-${night}-${Date.now()}`, account: ACCOUNT, currency: 'GBP', createdAt: new Date(`${bankDay}T18:00:00Z`), entries }),
    );
    const imported = await time(() =>
      importStatement(db, { source: createReadStream(values.statement!), fileName: `bench-nights-${night}.xml`, actor: cliActor('bench'), maxBytes: 1 << 30, policy }),
    );
    await db.destroy();
    unmatchedCredits += imported.matching!.unmatchedCredits;
    return { unit: 'credits', units: entries.length, note: `${(statSync(values.statement!).size / 1_048_576).toFixed(1)} MB camt.053` };
  });

  const payoutDate = addWorkingDays(payDate, config.SETTLEMENT_DELAY_WORKING_DAYS + 1, new Set());
  await phase(phases, '6 payouts', async (time) => {
    const db = createDatabase(config.DATABASE_URL, config.PAYOUT_CONCURRENCY);
    const summary = await time(() =>
      runPayoutsOn(db, { funding: 'received', today: payoutDate, settlementDelayWorkingDays: config.SETTLEMENT_DELAY_WORKING_DAYS, concurrency: config.PAYOUT_CONCURRENCY }),
    );
    await db.destroy();
    return { unit: 'payout groups', units: summary.groups.length, note: summary.groups.map((g) => g.outcome).join(', ') };
  });

  await phase(phases, '7 CSV export', async () => {
    const exportScript = fileURLToPath(new URL('./reconcile-export.ts', import.meta.url));
    const child = execFileSync(
      process.execPath,
      ['--import', 'tsx', exportScript, '--server', values.server!, '--database', values.database!, '--pay-date', payDate, '--out', values.out!],
      { encoding: 'utf8' },
    );
    const exported = JSON.parse(child.trim().split('\n').at(-1)!) as { ms: number };
    const rows =
      readFileSync(values.out!, 'utf8')
        .split('\n')
        .filter((line) => line.length > 0).length - 1;
    return { unit: 'CSV rows', units: rows, readRows: rows, ms: exported.ms };
  });

  // The outbox before the dispatcher: every event the night wrote waits (the scheduled dispatcher would have run every 2 s).
  const undispatchedBeforeWebhooks = await count(sql<{ n: string }>`select count(*)::text as n from events where dispatched_at is null`);
  await phase(phases, '8 webhooks', async (time) => {
    const db = createDatabase(config.DATABASE_URL, 2);
    let events = 0;
    await time(async () => {
      for (;;) {
        const summary = await dispatchPendingEvents(db, async () => {});
        events += summary.events;
        if (summary.events === 0) break;
      }
    });
    await db.destroy();
    return { unit: 'events dispatched', units: events, readRows: events };
  });

  const after = await serverStats();
  const ms = phases.reduce((total, p) => total + p.ms, 0);
  return {
    night,
    payDate,
    phases,
    ms,
    floorMs: phases.reduce((total, p) => total + p.floorMs, 0),
    rowsWritten: phases.reduce((total, p) => total + p.rowsWritten, 0),
    before,
    after,
    undispatchedBeforeWebhooks,
    undispatchedAfter: await count(sql<{ n: string }>`select count(*)::text as n from events where dispatched_at is null`),
    pendingDeliveries: await count(sql<{ n: string }>`select count(*)::text as n from webhook_deliveries where status = 'pending'`),
    idempotencyKeys: await count(sql<{ n: string }>`select count(*)::text as n from idempotency_keys`),
    failures,
    unmatchedCredits,
  };
}

function deltas(n: NightFigures, pick: (t: TableStats) => number): Array<[string, number]> {
  return [...n.after.tables]
    .map(([name, t]): [string, number] => [name, pick(t) - pick(n.before.tables.get(name) ?? t)])
    .filter(([, d]) => d > 0)
    .sort(([, a], [, b]) => b - a);
}

const total = (stats: ServerStats, pick: (t: TableStats) => number) => [...stats.tables.values()].reduce((sum, t) => sum + pick(t), 0);

function printNight(n: NightFigures, first: NightFigures | undefined): void {
  const sizes = [...n.after.tables].sort(([, a], [, b]) => b.bytes - a.bytes);
  const autovacuums = deltas(n, (t) => t.autovacuum);
  const autoanalyzes = deltas(n, (t) => t.autoanalyze);
  const seqReads = deltas(n, (t) => t.seqTupRead).slice(0, 4);
  const seqScans = new Map(deltas(n, (t) => t.seqScan));
  process.stdout.write(
    `night ${String(n.night).padStart(2)} (${n.payDate}): ${seconds(n.ms).padStart(7)} s, ${(n.ms / (first ?? n).ms || 1).toFixed(2)}x night 1, ` +
      `${(n.ms / n.floorMs).toFixed(1)}x floors (${seconds(n.floorMs)} s); ${perSecond(n.rowsWritten, n.ms)} rows/s (${n.rowsWritten} rows); ` +
      `size ${megabytes(total(n.after, (t) => t.bytes) / 1024)} [${sizes
        .slice(0, 5)
        .map(([name, t]) => `${name} ${megabytes(t.bytes / 1024)}`)
        .join(', ')}]; ` +
      `autovacuum ${autovacuums.reduce((s, [, d]) => s + d, 0)} (${autovacuums.map(([name, d]) => `${name} ${d}`).join(', ')}), autoanalyze ${autoanalyzes.reduce((s, [, d]) => s + d, 0)}; ` +
      `checkpoints ${n.after.checkpoints - n.before.checkpoints} (${n.after.checkpointsRequested - n.before.checkpointsRequested} requested, ${n.after.buffersCheckpoint - n.before.buffersCheckpoint} buffers; whole server); ` +
      `outbox ${n.undispatchedBeforeWebhooks} undispatched before webhooks, ${n.undispatchedAfter} after, ${n.pendingDeliveries} deliveries pending; idempotency_keys ${n.idempotencyKeys}; ` +
      `seq reads ${seqReads.map(([name, d]) => `${name} ${d} rows in ${seqScans.get(name) ?? 0} scans`).join(', ')}\n` +
      `    ${n.phases.map((p) => `${p.name} ${seconds(p.ms)} s (${perSecond(p.units, p.ms)} ${p.unit}/s, ${(p.ms / p.floorMs).toFixed(1)}x floor${p.note ? `; ${p.note}` : ''})`).join('; ')}\n`,
  );
}

// The month ------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const load = loadavg();
  process.stdout.write(
    `A month of nights: ${nights} nights at scale ${scale}: ${payrolls} payrolls, ${payrolls * employeesPerPayroll} employees, ` +
      `${payrolls * employeesPerPayroll * paymentsPerEmployee} new payment requests a night; concurrency ${concurrency}; ` +
      `${values.vacuum ? 'VACUUM ANALYZE between nights; ' : ''}load average at start ${load.map((l) => l.toFixed(2)).join(' ')}; ${new Date().toISOString()}\n`,
  );
  await recreateDatabase(config.DATABASE_URL);
  meter = createDatabase(config.DATABASE_URL, 1);
  await timed('migrate', () => migrateToLatest(meter), 16);
  const first = datesOf(1);
  await timed('generate data', () => generateNightlyData(meter, { payrolls, employeesPerPayroll, paymentsPerEmployee, runDate: first.runDate, payDate: first.payDate }), 16);
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
  await sql`analyze`.execute(meter);

  const results: NightFigures[] = [];
  for (let night = 1; night <= nights; night += 1) {
    if (night > 1) {
      await addNightData(night);
      // As generateNightlyData does for night 1: autovacuum would have analyzed the month's new rows before the lock.
      await (values.vacuum ? sql`vacuum analyze` : sql`analyze`).execute(meter);
    }
    const n = await runNight(night, caller);
    results.push(n);
    printNight(n, results[0]);
  }

  const [one, last] = [results[0]!, results.at(-1)!];
  process.stdout.write(
    `\nnight ${last.night} / night 1: ${(last.ms / one.ms).toFixed(2)}x (${seconds(last.ms)} s against ${seconds(one.ms)} s; target 1.15x); ` +
      `floors ${seconds(last.floorMs)} s against ${seconds(one.floorMs)} s; database ${megabytes(total(last.after, (t) => t.bytes) / 1024)}\n`,
  );
  process.stdout.write(`\nPhases, night 1 against night ${last.night}, most grown first:\n`);
  for (const p of one.phases.map((p1) => ({ p1, pN: last.phases.find((p) => p.name === p1.name)! })).sort((a, b) => b.pN.ms - b.p1.ms - (a.pN.ms - a.p1.ms))) {
    process.stdout.write(
      `  ${p.p1.name.padEnd(18)} ${seconds(p.p1.ms).padStart(7)} s -> ${seconds(p.pN.ms).padStart(7)} s (${(p.pN.ms / p.p1.ms).toFixed(2)}x; ${(p.p1.ms / p.p1.floorMs).toFixed(1)}x -> ${(p.pN.ms / p.pN.floorMs).toFixed(1)}x floor)\n`,
    );
  }
  process.stdout.write(`\nSequential reads per table, night 1 against night ${last.night} (rows read by seq scans in the night, scans):\n`);
  const readsOne = new Map(deltas(one, (t) => t.seqTupRead));
  const scansOne = new Map(deltas(one, (t) => t.seqScan));
  const scansLast = new Map(deltas(last, (t) => t.seqScan));
  for (const [name, rows] of deltas(last, (t) => t.seqTupRead).slice(0, 12)) {
    process.stdout.write(
      `  ${name.padEnd(32)} ${String(readsOne.get(name) ?? 0).padStart(10)} rows (${scansOne.get(name) ?? 0} scans) -> ${String(rows).padStart(10)} rows (${scansLast.get(name) ?? 0} scans); live rows ${last.after.tables.get(name)!.liveRows}\n`,
    );
  }
  process.stdout.write(`\nTables by size after night ${last.night} (after night 1):\n`);
  for (const [name, t] of [...last.after.tables].sort(([, a], [, b]) => b.bytes - a.bytes).slice(0, 12)) {
    process.stdout.write(
      `  ${name.padEnd(32)} ${megabytes(t.bytes / 1024).padStart(8)} (${megabytes((one.after.tables.get(name)?.bytes ?? 0) / 1024)}), ${t.liveRows} live rows\n`,
    );
  }

  const money = (
    await sql<{ requested: string; deducted: string; received: string; paid: string; unpaid_entries: number }>`
      select (select sum(amount)::text from payment_requests) as requested,
             (select sum(coalesce(deducted, 0))::text from remittances) as deducted,
             (select sum(received)::text from remittances) as received,
             (select sum(pi.amount)::text from payout_items pi join payouts po on po.id = pi.payout_id and po.status <> 'failed' where pi.released_at is null) as paid,
             (select count(*)::int from ledger_entries where payout_id is null) as unpaid_entries
    `.execute(meter)
  ).rows[0]!;
  const [requested, deducted, received, paid] = [money.requested, money.deducted, money.received, money.paid].map(Number) as [number, number, number, number];
  const failures = results.reduce((s, n) => s + n.failures, 0);
  const unmatched = results.reduce((s, n) => s + n.unmatchedCredits, 0);
  const checks: Array<[string, boolean]> = [
    [`total requested ${requested} >= deducted ${deducted} >= received ${received} >= paid out ${paid}`, requested >= deducted && deducted >= received && received >= paid],
    [`everything received was paid out: ${money.unpaid_entries} ledger entries unpaid, paid ${paid} = received ${received}`, money.unpaid_entries === 0 && paid === received],
    [`no failed jobs (${failures}), every remittance credit matched (${unmatched} unmatched)`, failures === 0 && unmatched === 0],
  ];
  process.stdout.write(`\nMoney checks over all nights\n${checks.map(([text, ok]) => `  ${ok ? 'ok  ' : 'FAIL'} ${text}`).join('\n')}\n`);
  process.stdout.write(
    `\nload average at start ${load.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${new Date().toISOString()}\n`,
  );
  await meter.destroy();
  if (checks.some(([, ok]) => !ok)) {
    process.stderr.write('Benchmark run was incorrect: see the money checks\n');
    process.exitCode = 1;
  }
}

/** Each night's jobs stay in Redis under this run's prefix; the reconcile jobs' ids repeat from night to night. */
async function removeQueueKeys(): Promise<void> {
  for (let cursor = '0'; ;) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.QUEUE_PREFIX}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    if ((cursor = next) === '0') break;
  }
}

try {
  await main();
} finally {
  await removeQueueKeys().catch(() => {});
  await redis.quit();
}
