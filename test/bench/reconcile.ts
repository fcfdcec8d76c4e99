/**
 * Reconciliation benchmark (a script, not a test):
 * `npx tsx test/bench/reconcile.ts [--database deductions_bench] [--concurrency 8] [--write-bound]`
 *
 * Runs on the database the nightly benchmark leaves behind (run `npx tsx test/bench/nightly.ts
 * [--database X]` first): submits a confirmation for every locked payroll pay date (500,000 employees
 * at full scale; 90% deducted in full, 10% half), reconciles every payroll through the real BullMQ
 * workers, runs payouts, and exports the reconciliation CSV (1,000,000 rows) in a fresh child process
 * (reconcile-export.ts) so its peak RSS is the export's own. In the same run it measures a floor: one
 * INSERT ... SELECT of as many rows as there are payment requests. Prints each phase's wall time,
 * rows/s, peak RSS and the ratio to the floor, and checks the money adds up. With --write-bound it
 * times, in place of the jobs, the least that reconciliation must write (see
 * allReconciliationWritesAtOnce) and stops there.
 *
 * Re-runnable: the first run on a freshly locked database copies it to `<database>_locked` (a
 * template, a few seconds with FILE_COPY); a later run finds the pay dates already reconciled and
 * restores the database from that copy before measuring. Pending migrations are applied after that,
 * so the figures are always for the current schema.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createClient } from '../../src/directory/auth/clients-service.ts';
import { addWorkingDays } from '../../src/directory/calendars/working-days.ts';
import { parseConfig } from '../../src/platform/config/config.ts';
import pg from 'pg';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { insertPaymentUpdatedEvents } from '../../src/collections/payments/payment-event-repository.ts';
import { timeOrderedUuidSql } from '../../src/platform/db/time-ordered-uuid-sql.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { insertBeneficiaryAccount } from '../../src/faces/cli/demo/demo-repository.ts';
import { runPayoutsOn } from '../../src/settlement/payouts/payout-service.ts';
import { composition } from '../../bin/composition.ts';
import { openRuntime } from '../../src/platform/runtime/runtime.ts';
import { megabytes, prepareConfirmations, submitConfirmations, perSecond, reconcileThroughQueue, seconds, timed, timedPartsRolledBack } from './bench-support.ts';

const timedPhase = <T>(label: string, work: () => Promise<T>) => timed(label, work, 40);

const { values } = parseArgs({
  options: {
    // 8 kept both cores busiest here (6 and 12 were 10-15 % slower; BENCHMARKS.md).
    concurrency: { type: 'string', default: '8' },
    database: { type: 'string', default: 'deductions_bench' },
    out: { type: 'string', default: '/tmp/bench-reconciliation.csv' },
    'write-bound': { type: 'boolean', default: false },
  },
});
const PAY_DATE = '2026-12-10';
const config = parseConfig({
  ...process.env,
  DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${values.database}`,
  QUEUE_PREFIX: `bench-reconcile-${process.pid}`,
  LOG_LEVEL: 'warn',
  DATABASE_POOL_SIZE: '12',
});

const templateName = `${values.database}_locked`;

/** Pay dates of the bench that are not freshly locked (the database has been through a run), and when the lock ran. */
async function lockState(database: string): Promise<{ used: number; lockedAt: string | null }> {
  const db = createDatabase(config.DATABASE_URL.replace(/\/[^/]*$/, `/${database}`), 1);
  try {
    const row = (
      await sql<{ used: number; locked_at: string | null }>`
        select count(*) filter (where status <> 'locked')::int as used, max(locked_at)::text as locked_at
        from deduction_snapshots where pay_date = ${PAY_DATE}
      `.execute(db)
    ).rows[0]!;
    return { used: row.used, lockedAt: row.locked_at };
  } finally {
    await db.destroy();
  }
}

/**
 * A freshly locked database is saved as the template, unless the template already holds this very lock
 * run; a used one is restored from the template. FILE_COPY copies the files rather than WAL-logging every
 * block: several times faster for a few GB.
 */
async function saveOrRestore(): Promise<void> {
  const admin = new pg.Client({ connectionString: config.DATABASE_URL.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  try {
    const hasTemplate = ((await admin.query('select 1 from pg_database where datname = $1', [templateName])).rowCount ?? 0) > 0;
    const current = await lockState(values.database!);
    if (current.used === 0) {
      if (!hasTemplate || (await lockState(templateName)).lockedAt !== current.lockedAt) {
        await timedPhase(`save as template ${templateName}`, async () => {
          await admin.query(`drop database if exists "${templateName}" with (force)`);
          await admin.query(`create database "${templateName}" template "${values.database}" strategy file_copy`);
        });
      }
    } else if (hasTemplate) {
      await timedPhase(`restore from template ${templateName}`, async () => {
        await admin.query(`drop database "${values.database}" with (force)`);
        await admin.query(`create database "${values.database}" template "${templateName}" strategy file_copy`);
      });
    }
  } finally {
    await admin.end();
  }
  const db = createDatabase(config.DATABASE_URL, 1);
  try {
    await timedPhase('migrate to latest', () => migrateToLatest(db));
  } finally {
    await db.destroy();
  }
}

/**
 * What reconciliation must write at the least, timed part by part: every payment the pay date's
 * snapshots ask for collected in full, with its attempt, ledger entry and payment_request.updated
 * event, each part one set-based statement, all in one transaction that is rolled back. No job, no
 * queue, no reads: how far the jobs are from the writes themselves.
 */
async function allReconciliationWritesAtOnce(db: Database): Promise<Record<string, number>> {
  const timeOrderedId = timeOrderedUuidSql;
  return timedPartsRolledBack(db, async (part, trx) => {
    await sql`
      create temp table asked on commit drop as
      select s.payroll_id, lp.payment_request_id, lp.requested_amount, pr.employee_id, pr.mandate_id, pr.biller_client_id, pr.currency, pr.attempts
      from deduction_snapshots s
      join deduction_line_payments lp on lp.snapshot_id = s.id
      join payment_requests pr on pr.id = lp.payment_request_id
      where s.pay_date = ${PAY_DATE}::date and s.status <> 'superseded'
    `.execute(trx);
    await sql`create temp table attempted (id uuid, payment_request_id uuid, biller_client_id uuid, currency char(3), amount bigint) on commit drop`.execute(trx);
    await part(
      'collection attempts',
      sql`
      with written as (
        insert into collection_attempts (id, payment_request_id, employee_id, mandate_id, biller_client_id, currency, payroll_id,
          pay_date, attempt_number, requested_amount, deducted_amount, collected_amount, shortfall_amount, outcome, push_version,
          revision, reconciled_at)
        select ${timeOrderedId}, a.payment_request_id, a.employee_id, a.mandate_id, a.biller_client_id, a.currency, a.payroll_id,
               ${PAY_DATE}::date, a.attempts, a.requested_amount, a.requested_amount, a.requested_amount, 0, 'collected', 1, 1, now()
        from asked a
        returning id, payment_request_id, biller_client_id, currency, collected_amount
      )
      insert into attempted select * from written
    `,
    );
    await part(
      'ledger entries',
      sql`
      insert into ledger_entries (id, biller_client_id, payment_request_id, collection_attempt_id, revision, kind, amount, currency, pay_date)
      select ${timeOrderedId}, a.biller_client_id, a.payment_request_id, a.id, 1, 'payment_collected', a.amount, a.currency, ${PAY_DATE}::date
      from attempted a
    `,
    );
    await sql`create temp table settled on commit drop as select * from payment_requests limit 0`.execute(trx);
    await part(
      'payment requests to collected',
      sql`
      with moved as (
        update payment_requests pr
        set collected_amount = a.requested_amount, status = 'collected', version = pr.version + 1, updated_at = now()
        from asked a where pr.id = a.payment_request_id
        returning pr.*
      )
      insert into settled select * from moved
    `,
    );
    await part('their events', insertPaymentUpdatedEvents('settled'));
  });
}

async function main(): Promise<void> {
  await saveOrRestore();
  const runtime = await openRuntime(config, 'bench');
  const { db } = runtime;
  const snapshots = (
    await sql<{ id: string; payroll_id: string; pay_period: string; status: string }>`
      select id, payroll_id, pay_period, status from deduction_snapshots where pay_date = ${PAY_DATE} and status <> 'superseded'
    `.execute(db)
  ).rows;
  const payments = Number((await sql<{ n: number }>`select count(*)::int as n from payment_requests`.execute(db)).rows[0]!.n);
  if (snapshots.length === 0 || snapshots.some((s) => s.status !== 'locked')) {
    process.stderr.write('Run test/bench/nightly.ts first: this benchmark needs its freshly locked pay dates.\n');
    process.exitCode = 1;
    await runtime.close();
    return;
  }
  const planCacheMode = (await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(db)).rows[0]!.mode;
  process.stdout.write(
    `Reconciliation benchmark: ${snapshots.length} payroll pay dates, ${payments} payment requests (plan_cache_mode ${planCacheMode}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})\n`,
  );
  // Autovacuum is off on the benchmark machine; in service it would have analyzed the tables the lock
  // has just filled before anyone reconciles.
  await timedPhase('analyze', () => sql`analyze`.execute(db));
  const rss = () => megabytes(process.resourceUsage().maxRSS);
  // Where a phase's CPU goes: this process (workers included), the Postgres backends serving this
  // database, and Redis. On two shared cores the wall time is mostly their sum divided by two.
  const redisPid = Number(((await runtime.redis.info('server')).match(/process_id:(\d+)/) ?? [])[1] ?? 0);
  const cpuOf = (pid: number) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      return 0; // the process has gone
    }
  };
  /** Busy CPU of the whole machine (every core, every process), ms. */
  const machineBusyMs = () => {
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return ((user! + nice! + system! + irq! + softirq! + steal!) * 1000) / 100;
  };
  const cpuNow = async () => {
    const pids = (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(db)).rows.map((r) => r.pid);
    const usage = process.cpuUsage();
    return {
      pids: new Map(pids.map((pid) => [pid, cpuOf(pid)])),
      node: (usage.user + usage.system) / 1000,
      redis: cpuOf(redisPid),
      machine: machineBusyMs(),
      at: performance.now(),
    };
  };
  const cpuSince = async (before: Awaited<ReturnType<typeof cpuNow>>) => {
    const after = await cpuNow();
    let postgres = 0;
    for (const [pid, ms] of after.pids) postgres += ms - (before.pids.get(pid) ?? 0);
    const node = after.node - before.node;
    const redis = after.redis - before.redis;
    // Everything else busy meanwhile: other engineers' work, and Postgres' WAL writer, checkpointer and
    // background writer working for this run too.
    const rest = after.machine - before.machine - postgres - node - redis;
    const s = (ms: number) => (ms / 1000).toFixed(0);
    const cores = (after.machine - before.machine) / (after.at - before.at);
    return `CPU: postgres backends ${s(postgres)} s, node ${s(node)} s, redis ${s(redis)} s, all else ${s(rest)} s; machine busy ${cores.toFixed(2)} of ${cpus().length} cores`;
  };

  const floor = await timedPhase(`floor: INSERT ... SELECT ${payments} rows`, () =>
    sql`
      create table bench_floor (like deduction_line_payments);
      insert into bench_floor (snapshot_id, line_id, payment_request_id, requested_amount)
      select gen_random_uuid(), gen_random_uuid(), id, amount from payment_requests;
    `.execute(db),
  );
  await sql`drop table bench_floor`.execute(db);

  const provider = await sql<{ id: string }>`select id from payroll_providers limit 1`.execute(db);
  const providerClient = await createClient(db, { name: 'Bench provider client', role: 'payroll_provider', payrollProviderId: provider.rows[0]!.id });
  const caller = { clientId: providerClient.clientId, role: 'payroll_provider' as const, scopes: providerClient.scopes, payrollProviderId: provider.rows[0]!.id };

  const employees = Number(
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from deduction_lines l join deduction_snapshots s on s.id = l.snapshot_id where s.pay_date = ${PAY_DATE} and s.status <> 'superseded'`.execute(
        db,
      )
    ).rows[0]!.n,
  );
  const prepared = await prepareConfirmations(db, snapshots);
  let cpuMark = await cpuNow();
  const confirm = await timedPhase(`confirmations (${employees} employees)`, () => submitConfirmations(db, caller, prepared, Number(values.concurrency)));
  const confirmRss = rss();
  const confirmCpu = await cpuSince(cpuMark);

  if (values['write-bound']) {
    // Measured instead of the jobs: a rolled-back bulk write leaves its dead rows behind, which would
    // slow the jobs measured after it.
    const bound = await timedPhase('write bound: every reconciliation write at once', () => allReconciliationWritesAtOnce(db));
    const parts = Object.entries(bound.result)
      .map(([name, ms]) => `${name} ${seconds(ms)} s`)
      .join(', ');
    process.stdout.write(`\nWrite bound ${seconds(bound.ms)} s, ${(bound.ms / floor.ms).toFixed(2)}x the floor (${floor.ms.toFixed(0)} ms): ${parts}\n`);
    await runtime.close();
    return;
  }

  const workers = await composition.startWorkers(runtime, { schedule: false, payDateConcurrency: Number(values.concurrency) });
  cpuMark = await cpuNow();
  const reconcile = await timedPhase('reconciliation (BullMQ jobs, workers)', () =>
    reconcileThroughQueue(
      config,
      snapshots.map((s) => s.payroll_id),
      PAY_DATE,
    ),
  );
  await workers.close();
  const reconcileRss = rss();
  const reconcileCpu = await cpuSince(cpuMark);
  const reconciled = (
    await sql<{ attempts: number; collected: number; ledger: number; ledger_total: number; collected_total: number }>`
    select (select count(*)::int from collection_attempts) as attempts,
           (select count(*)::int from payment_requests where status = 'collected') as collected,
           (select count(*)::int from ledger_entries) as ledger,
           (select coalesce(sum(amount), 0)::bigint from ledger_entries) as ledger_total,
           (select coalesce(sum(collected_amount), 0)::bigint from payment_requests) as collected_total
  `.execute(db)
  ).rows[0]!;

  const biller = await sql<{ id: string }>`select id from clients where role = 'biller' limit 1`.execute(db);
  await insertBeneficiaryAccount(db, {
    biller_client_id: biller.rows[0]!.id,
    currency: 'GBP',
    account_number: '70000019',
    sort_code: '20-00-00',
    account_holder_name: 'Bench biller',
  });
  const payoutDate = addWorkingDays(PAY_DATE, config.SETTLEMENT_DELAY_WORKING_DAYS + 1, new Set());
  cpuMark = await cpuNow();
  const payouts = await timedPhase('payouts', () =>
    runPayoutsOn(db, { funding: 'deducted', today: payoutDate, settlementDelayWorkingDays: config.SETTLEMENT_DELAY_WORKING_DAYS }),
  );
  const payoutsRss = rss();
  const payoutsCpu = await cpuSince(cpuMark);
  const paidOut = (
    await sql<{ items: number; paid_out: number; unpaid: number }>`
    select (select count(*)::int from payout_items) as items,
           (select count(*)::int from payment_requests where status = 'paid_out') as paid_out,
           (select count(*)::int from ledger_entries where payout_id is null) as unpaid
  `.execute(db)
  ).rows[0]!;
  const keys = await runtime.redis.keys(`${config.QUEUE_PREFIX}:*`);
  for (let i = 0; i < keys.length; i += 500) await runtime.redis.del(...keys.slice(i, i + 500));
  await runtime.close();

  const exportScript = fileURLToPath(new URL('./reconcile-export.ts', import.meta.url));
  const exportStart = { machine: machineBusyMs(), at: performance.now() };
  const child = execFileSync(process.execPath, ['--import', 'tsx', exportScript, '--database', values.database!, '--pay-date', PAY_DATE, '--out', values.out!], {
    encoding: 'utf8',
  });
  const exported = JSON.parse(child.trim().split('\n').at(-1)!) as { ms: number; bytes: number; maxRssKb: number; cpuMs: number };
  const exportBusy = `CPU: export process ${(exported.cpuMs / 1000).toFixed(0)} s; machine busy ${((machineBusyMs() - exportStart.machine) / (performance.now() - exportStart.at)).toFixed(2)} of ${cpus().length} cores`;
  process.stdout.write(`  ${'reconciliation CSV export (child process)'.padEnd(40)} ${seconds(exported.ms).padStart(8)} s\n`);

  const failed = reconcile.result.failed ?? 0;
  const ratio = (ms: number) => `${(ms / floor.ms).toFixed(2)}x`;
  const paidOutTotal = Object.values(payouts.result.totalsByCurrency).reduce((sum, amount) => sum + amount, 0);
  process.stdout.write(
    [
      '',
      `Result (2 cores, concurrency ${values.concurrency}, load average now ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
      `  confirmations     ${seconds(confirm.ms)} s, ${perSecond(employees, confirm.ms)} employees/s, ratio to floor ${ratio(confirm.ms)}, peak RSS so far ${confirmRss}; ${confirmCpu}`,
      `  reconciliation    ${seconds(reconcile.ms)} s, ${perSecond(payments, reconcile.ms)} payment requests/s, ratio to floor ${ratio(reconcile.ms)}, peak RSS so far ${reconcileRss}; ${reconcileCpu}` +
        ` (${reconciled.attempts} attempts, ${reconciled.collected} collected, ${reconciled.ledger} ledger entries, ${failed} failed jobs;` +
        ` ledger ${reconciled.ledger_total} = collected ${reconciled.collected_total} minor units: ${reconciled.ledger_total === reconciled.collected_total})`,
      `  payouts           ${seconds(payouts.ms)} s, ${perSecond(paidOut.items, payouts.ms)} ledger entries/s, ratio to floor ${ratio(payouts.ms)}, peak RSS so far ${payoutsRss}; ${payoutsCpu}` +
        ` (${payouts.result.groups.length} payout groups, ${paidOut.items} items, ${paidOut.paid_out} payments paid out, ${paidOut.unpaid} entries left unpaid, paid ${paidOutTotal} minor units)`,
      `  CSV export        ${seconds(exported.ms)} s, ${perSecond(reconciled.attempts, exported.ms)} rows/s, ${Math.round(exported.bytes / 1_048_576)} MB file, peak RSS ${megabytes(exported.maxRssKb)} (its own process), ratio to floor ${ratio(exported.ms)}; ${exportBusy}`,
      `  floor             ${seconds(floor.ms)} s (${perSecond(payments, floor.ms)} rows/s)`,
      '',
    ].join('\n'),
  );
  const correct =
    failed === 0 &&
    reconciled.attempts === payments &&
    reconciled.ledger_total === reconciled.collected_total &&
    paidOut.unpaid === 0 &&
    paidOutTotal === reconciled.ledger_total;
  if (!correct) {
    process.stderr.write('Benchmark run was incorrect: see the counts above\n');
    process.exitCode = 1;
  }
}

await main();
