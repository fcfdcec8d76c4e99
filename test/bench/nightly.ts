/**
 * Nightly lock benchmark (a script, not a test): `npx tsx test/bench/nightly.ts [--scale 1] [--concurrency 6]`
 *
 * Generates 10,000 payrolls, 500,000 employees and 1,000,000 payment requests due at one cut-off
 * (times --scale) with set-based SQL, measures a floor in the same run (one INSERT ... SELECT of as
 * many rows as there are payment requests), then runs the whole nightly lock through real BullMQ
 * workers and queues, and prints wall time, rows/s, peak RSS and the ratio to the floor.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { parseConfig } from '../../src/platform/config/config.ts';
import { ensureDatabaseExists } from '../../src/platform/db/admin.ts';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { migrateDownToEmpty, migrateToLatest } from '../../src/platform/db/migrator.ts';
import { runNightlyNow } from '../../src/faces/workers/nightly-runner.ts';
import { insertPaymentUpdatedEvents } from '../../src/collections/payments/payment-event-repository.ts';
import { composition } from '../../bin/composition.ts';
import { openRuntime } from '../../src/platform/runtime/runtime.ts';
import { generateNightlyData, megabytes, perSecond, seconds, timed, timedPartsRolledBack } from './bench-support.ts';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '6' },
    database: { type: 'string', default: 'deductions_bench' },
    // Also time the lock's writes done all at once, to show what any per-pay-date design must exceed.
    'write-bound': { type: 'boolean', default: false },
  },
});
const scale = Number(values.scale);
const payrolls = Math.round(10_000 * scale);
const employeesPerPayroll = 50;
const paymentsPerEmployee = 2;
const employees = payrolls * employeesPerPayroll;
const payments = employees * paymentsPerEmployee;
const runDate = '2026-12-01';
const payDate = '2026-12-10';

/** How much WAL the server has written and how many checkpoints it has made: the lock's write volume. */
async function walPosition(db: Database): Promise<{ bytes: number; checkpoints: number }> {
  const result = await sql<{ bytes: string; checkpoints: number }>`
    select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as bytes,
           (checkpoints_timed + checkpoints_req)::int as checkpoints
    from pg_stat_bgwriter
  `.execute(db);
  return { bytes: Number(result.rows[0]!.bytes), checkpoints: result.rows[0]!.checkpoints };
}

/**
 * CPU time used so far by this database's server backends (the workers' pool connections, opened
 * when the lock began): a figure that other load on the machine does not inflate the way it does
 * wall time.
 */
async function backendCpuSeconds(db: Database): Promise<number> {
  const result = await sql<{ pid: number }>`
    select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()
  `.execute(db);
  let ticks = 0;
  for (const { pid } of result.rows) {
    try {
      // Fields 14 and 15 of /proc/<pid>/stat, after the parenthesised command name: utime, stime.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Not on this machine (a remote server) or the backend has gone: count nothing.
    }
  }
  return ticks / 100;
}

/**
 * The rows the whole lock writes (snapshots, lines, line links, the payment requests' state change
 * with its events, instruction files and items) written set-based for every payroll at once in one
 * transaction, then rolled back: no queue, no per-pay-date statements, no mandate rules or actions.
 * No design that locks pay date by pay date can write the same rows much faster than this; the
 * parts show which rows cost what.
 */
async function allLockWritesAtOnce(db: Database): Promise<Record<string, number>> {
  return timedPartsRolledBack(db, async (part, trx) => {
    await sql`
      create temp table included on commit drop as
      select id, payroll_id, employee_id, amount from payment_requests
      where status = 'pending' and target_pay_date <= ${payDate}::date
    `.execute(trx);
    await part(
      'snapshots and lines',
      sql`
      with snapshots as (
        insert into deduction_snapshots (id, payroll_id, pay_date, pay_period, snapshot_version, currency, total_amount, employee_count)
        select gen_random_uuid(), p.id, ${payDate}::date, '9-2026', 1, 'GBP', 0, 0 from payrolls p
        returning id, payroll_id
      ),
      per_employee as (
        select i.payroll_id, i.employee_id, e.payroll_reference, e.deduction_reference_number, sum(i.amount)::bigint as amount
        from included i join employments e on e.employee_id = i.employee_id and e.payroll_id = i.payroll_id
        group by 1, 2, 3, 4
      )
      insert into deduction_lines (snapshot_id, employee_id, payroll_reference, requested_amount, currency, payment_reference)
      select s.id, pe.employee_id, pe.payroll_reference, pe.amount, 'GBP',
             'SD' || lpad(pe.deduction_reference_number::text, greatest(8, length(pe.deduction_reference_number::text)), '0')
      from per_employee pe join snapshots s on s.payroll_id = pe.payroll_id
    `,
    );
    await part(
      'line links',
      sql`
      insert into deduction_line_payments (snapshot_id, line_id, payment_request_id, requested_amount)
      select l.snapshot_id, l.id, i.id, i.amount from included i join deduction_lines l on l.employee_id = i.employee_id
    `,
    );
    await part(
      'instruction files and items',
      sql`
      with files as (
        insert into instruction_files (snapshot_id, payroll_id, pay_date, file_version, file_name, content, sha256, item_count)
        select s.id, s.payroll_id, ${payDate}::date, 1, 'bound-' || s.id || '.csv', decode('', 'hex'), repeat('0', 64), 50
        from deduction_snapshots s
        returning id, snapshot_id
      )
      insert into instruction_items (instruction_file_id, employee_id, payroll_reference, amount, previous_amount, currency, payment_reference, pay_period, action)
      select f.id, l.employee_id, l.payroll_reference, l.requested_amount, null, 'GBP', l.payment_reference, '9-2026', 'new'
      from deduction_lines l join files f on f.snapshot_id = l.snapshot_id
    `,
    );
    await sql`create temp table instructed on commit drop as select * from payment_requests limit 0`.execute(trx);
    await part(
      'payment requests to instructed',
      sql`
      with moved as (
        update payment_requests pr set status = 'instructed', attempts = pr.attempts + 1, version = pr.version + 1, updated_at = now()
        from included i where pr.id = i.id
        returning pr.*
      )
      insert into instructed select * from moved
    `,
    );
    await part('their events', insertPaymentUpdatedEvents('instructed'));
  });
}

async function main(): Promise<void> {
  const config = parseConfig({
    ...process.env,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${values.database}`,
    QUEUE_PREFIX: `bench-${Date.now()}`,
    LOG_LEVEL: 'warn',
    DATABASE_POOL_SIZE: '12',
  });
  await ensureDatabaseExists(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL, 4);
  process.stdout.write(`Nightly lock benchmark: ${payrolls} payrolls, ${employees} employees, ${payments} payment requests\n`);
  await timed('reset schema', async () => {
    await migrateDownToEmpty(db);
    await migrateToLatest(db);
  });
  await timed('generate data (set-based)', () => generateNightlyData(db, { payrolls, employeesPerPayroll, paymentsPerEmployee, runDate, payDate }));

  const floor = await timed(`floor: INSERT ... SELECT ${payments} rows`, () =>
    sql`
      create table bench_floor (like deduction_line_payments);
      insert into bench_floor (snapshot_id, line_id, payment_request_id, requested_amount)
      select gen_random_uuid(), gen_random_uuid(), id, amount from payment_requests;
    `.execute(db),
  );
  await sql`drop table bench_floor`.execute(db);
  const bound = values['write-bound'] ? await timed('write bound: every lock write in one transaction', () => allLockWritesAtOnce(db)) : null;
  await db.destroy();

  const runtime = await openRuntime(config, 'bench');
  const walBefore = await walPosition(runtime.db);
  const cpuBefore = process.cpuUsage();
  const workers = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: Number(values.concurrency) });
  let lastReported = -1;
  const lock = await timed('nightly lock (BullMQ flow, workers)', () =>
    runNightlyNow(runtime, runDate, {
      workers,
      pollMs: 500,
      onProgress: ({ done, total }) => {
        const tenth = Math.floor((done / Math.max(total, 1)) * 10);
        if (tenth !== lastReported) {
          lastReported = tenth;
          process.stderr.write(`    ${done}/${total} pay dates\n`);
        }
      },
    }),
  );
  const backendCpu = await backendCpuSeconds(runtime.db);
  const nodeCpu = process.cpuUsage(cpuBefore);
  await workers.close();
  const walAfter = await walPosition(runtime.db);

  const check = await sql<{ instructed: number; snapshots: number; lines: number; events: number }>`
    select (select count(*) from payment_requests where status = 'instructed')::int as instructed,
           (select count(*) from deduction_snapshots)::int as snapshots,
           (select count(*) from deduction_lines)::int as lines,
           (select count(*) from events)::int as events
  `.execute(runtime.db);
  const queueKeys = await runtime.redis.keys(`${config.QUEUE_PREFIX}:*`);
  if (queueKeys.length) await runtime.redis.del(...queueKeys);
  await runtime.close();

  const counts = check.rows[0]!;
  const summary = lock.result;
  const rss = process.resourceUsage().maxRSS;
  process.stdout.write(
    [
      '',
      `Result (2 cores, pay-date concurrency ${values.concurrency})`,
      `  pay dates locked           ${summary.payrollsLocked} of ${summary.pairs}, failures ${summary.failures.length}`,
      `  payments instructed        ${counts.instructed} (events ${counts.events}, lines ${counts.lines}, snapshots ${counts.snapshots})`,
      `  lock wall time             ${seconds(lock.ms)} s`,
      `  lock throughput            ${perSecond(counts.instructed, lock.ms)} payment requests/s`,
      `  floor wall time            ${seconds(floor.ms)} s (${perSecond(payments, floor.ms)} rows/s)`,
      `  ratio lock / floor         ${(lock.ms / floor.ms).toFixed(2)}x`,
      ...(bound
        ? [
            `  write bound wall time      ${seconds(bound.ms)} s (${(bound.ms / floor.ms).toFixed(2)}x the floor; the lock takes ${(lock.ms / bound.ms).toFixed(2)}x the bound)`,
            ...Object.entries(bound.result).map(([name, ms]) => `    ${name.padEnd(44)} ${seconds(ms)} s (${(ms / floor.ms).toFixed(2)}x the floor)`),
          ]
        : []),
      `  peak RSS (this process)    ${megabytes(rss)}`,
      `  CPU during the lock        PostgreSQL backends ${backendCpu.toFixed(1)} s, this process ${((nodeCpu.user + nodeCpu.system) / 1e6).toFixed(1)} s`,
      `  WAL written by the lock    ${megabytes((walAfter.bytes - walBefore.bytes) / 1024)} (${walAfter.checkpoints - walBefore.checkpoints} checkpoints)`,
      '',
    ].join('\n'),
  );
  if (counts.instructed !== payments || summary.failures.length > 0) {
    process.stderr.write('Benchmark run was incorrect: not every payment request was instructed\n');
    process.exitCode = 1;
  }
}

await main();
