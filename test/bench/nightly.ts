/**
 * Nightly lock benchmark (a script, not a test): `npx tsx test/bench/nightly.ts [--scale 1] [--concurrency 6]`
 *
 * Generates 10,000 payrolls, 500,000 employees and 1,000,000 payment requests due at one cut-off
 * (times --scale) with set-based SQL, measures a floor in the same run (one INSERT ... SELECT of as
 * many rows as there are payment requests), then runs the whole nightly lock through real BullMQ
 * workers and queues, and prints wall time, rows/s, peak RSS and the ratio to the floor.
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { parseConfig } from '../../src/config/config.ts';
import { ensureDatabaseExists } from '../../src/db/admin.ts';
import { createDatabase, type Database } from '../../src/db/connection.ts';
import { migrateDownToEmpty, migrateToLatest } from '../../src/db/migrator.ts';
import { runNightlyNow } from '../../src/deductions/nightly-runner.ts';
import { startWorkers } from '../../src/queue/worker-host.ts';
import { openRuntime } from '../../src/runtime/runtime.ts';
import { megabytes, perSecond, seconds, timed } from './bench-support.ts';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '6' },
    database: { type: 'string', default: 'deductions_bench' },
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


async function generate(db: Database): Promise<void> {
  const statements = [
    sql`insert into payroll_providers (id, name, lead_time_working_days)
        values ('00000000-0000-4000-8000-000000000001', 'Bench payroll provider', 2)`,
    sql`insert into clients (id, name, role, secret_hash, scopes)
        values ('00000000-0000-4000-8000-000000000002', 'Bench biller', 'biller', repeat('0', 64), '{payments:write}')`,
    sql`insert into collection_accounts (currency, account_number, sort_code, account_holder_name)
        values ('GBP', '12345678', '04-00-04', 'Salary Deductions Collections Ltd')`,
    sql`insert into employers (id, payroll_provider_id, external_id, name, salary_deduction_opt_in_status)
        select ('10000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, '00000000-0000-4000-8000-000000000001', 'E' || g, 'Employer ' || g, 'opted_in'
        from generate_series(1, ${payrolls}) g`,
    sql`insert into payrolls (id, employer_id, payroll_provider_id, external_id, name, payment_run_frequency)
        select ('20000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, ('10000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
               '00000000-0000-4000-8000-000000000001', 'P' || g, 'Payroll ' || g, 'monthly'
        from generate_series(1, ${payrolls}) g`,
    sql`insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
        select id, ${payDate}::date, '2026-12-03'::date, '9-2026', ${runDate}::date from payrolls`,
  ];
  for (const statement of statements) await statement.execute(db);
  await sql`
    insert into employees (id, payroll_provider_id, given_name, family_name)
    select ('30000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, '00000000-0000-4000-8000-000000000001', 'Given', 'Family' || g
    from generate_series(1, ${employees}) g
  `.execute(db);
  await sql`
    insert into employments (employee_id, employer_id, payroll_id, payroll_reference)
    select ('30000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
           ('10000000-0000-4000-8000-' || lpad(to_hex((g - 1) / ${employeesPerPayroll} + 1), 12, '0'))::uuid,
           ('20000000-0000-4000-8000-' || lpad(to_hex((g - 1) / ${employeesPerPayroll} + 1), 12, '0'))::uuid,
           'WN' || g
    from generate_series(1, ${employees}) g
  `.execute(db);
  await sql`
    insert into consumers (id, biller_client_id, given_name, family_name)
    select ('40000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, '00000000-0000-4000-8000-000000000002', 'Given', 'Family' || g
    from generate_series(1, ${employees}) g
  `.execute(db);
  await sql`
    insert into mandates (id, biller_client_id, consumer_id, employee_id, payroll_id, status, authorisation_source)
    select ('50000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, '00000000-0000-4000-8000-000000000002',
           ('40000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
           ('30000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
           ('20000000-0000-4000-8000-' || lpad(to_hex((g - 1) / ${employeesPerPayroll} + 1), 12, '0'))::uuid,
           'active', '{"type":"online"}'
    from generate_series(1, ${employees}) g
  `.execute(db);
  await sql`
    insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, due_date, target_pay_date)
    select m.biller_client_id, m.id, m.payroll_id, m.employee_id, 'GBP', 1000 + (n * 137 + length(m.id::text)) % 9000, ${payDate}::date, ${payDate}::date
    from mandates m cross join generate_series(1, ${paymentsPerEmployee}) n
  `.execute(db);
  await sql`analyze`.execute(db);
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
  await timed('generate data (set-based)', () => generate(db));

  const floor = await timed(`floor: INSERT ... SELECT ${payments} rows`, () =>
    sql`
      create table bench_floor (like deduction_line_payments);
      insert into bench_floor (snapshot_id, line_id, payment_request_id, requested_amount)
      select gen_random_uuid(), gen_random_uuid(), id, amount from payment_requests;
    `.execute(db),
  );
  await sql`drop table bench_floor`.execute(db);
  await db.destroy();

  const runtime = await openRuntime(config, 'bench');
  const workers = await startWorkers(runtime, { schedule: false, payDateConcurrency: Number(values.concurrency) });
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
  await workers.close();

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
      `  peak RSS (this process)    ${megabytes(rss)}`,
      '',
    ].join('\n'),
  );
  if (counts.instructed !== payments || summary.failures.length > 0) {
    process.stderr.write('Benchmark run was incorrect: not every payment request was instructed\n');
    process.exitCode = 1;
  }
}

await main();
