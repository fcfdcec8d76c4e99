/** Shared by the benchmark scripts: formatting, phase timing and fresh databases. */
import { Queue } from 'bullmq';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { inParallel } from '../../src/faces/cli/demo/api-client.ts';
import type { Config } from '../../src/platform/config/config.ts';
import { ensureDatabaseExists } from '../../src/platform/db/admin.ts';
import type { Database } from '../../src/platform/db/connection.ts';
import type { DB } from '../../src/platform/db/tables.ts';
import type { ConfirmationSubmission } from '../../src/cycle/deduction-records/confirmation-resource.ts';
import { submitConfirmation } from '../../src/cycle/deduction-records/confirmation-service.ts';
import { DEFAULT_REPORTED_LIMITS } from '../../src/cycle/deduction-records/reported-limits.ts';
import { toMajorUnits } from '../../src/platform/money/major-units.ts';
import { defaultJobOptions, queueNames, reconcilePayDateJob } from '../../src/platform/queue/job-catalogue.ts';
import { producerConnection } from '../../src/platform/runtime/redis-connections.ts';
import type { Caller } from '../../src/platform/shared/caller.ts';

export const seconds = (ms: number) => (ms / 1000).toFixed(2);
export const perSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000)).toLocaleString('en-GB');
export const megabytes = (kb: number) => `${Math.round(kb / 1024)} MB`;

export async function timed<T>(label: string, work: () => Promise<T>, width = 34): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  process.stdout.write(`  ${label.padEnd(width)} ${seconds(ms).padStart(8)} s\n`);
  return { ms, result };
}

class RolledBack extends Error {}

/**
 * Runs `work` in one transaction that is rolled back, timing each statement it runs through `part`:
 * a write bound measures rows that must not stay. Returns each part's milliseconds by name.
 */
export async function timedPartsRolledBack(
  db: Database,
  work: (part: (name: string, statement: RawBuilder<unknown>) => Promise<void>, trx: Transaction<DB>) => Promise<void>,
): Promise<Record<string, number>> {
  const parts: Record<string, number> = {};
  await db
    .transaction()
    .execute(async (trx) => {
      await work(async (name, statement) => {
        const started = performance.now();
        await statement.execute(trx);
        parts[name] = performance.now() - started;
      }, trx);
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  return parts;
}

/**
 * A phase's floor: INSERT ... SELECT generate_series of `rows` rows into a bare copy of
 * deduction_line_payments, rolled back. The fastest a write of that many rows can be here.
 */
export async function floorMs(db: Database, rows: number): Promise<number> {
  const parts = await timedPartsRolledBack(db, async (part, trx) => {
    await sql`create table bench_floor (like deduction_line_payments)`.execute(trx);
    await part(
      'floor',
      sql`
      insert into bench_floor (snapshot_id, line_id, payment_request_id, requested_amount)
      select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), g from generate_series(1, ${rows}) g
    `,
    );
  });
  return parts.floor!;
}

// Measuring ------------------------------------------------------------------------------------------

const TICKS = 100; // USER_HZ

/**
 * Every postgres process on this machine, with its CPU ticks: its own (utime + stime) and those of the
 * children it has reaped (cutime + cstime, the postmaster's exited backends).
 */
function postgresProcesses(): Array<{ pid: string; own: number; reaped: number }> {
  const processes = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      // Fields 14 to 17: utime, stime, cutime, cstime (the rest of the line starts at field 3).
      const fields = stat.slice(close + 2).split(' ');
      processes.push({ pid, own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) });
    } catch {
      // gone meanwhile
    }
  }
  return processes;
}

/**
 * CPU seconds of every postgres process on this machine, with the children the postmaster has reaped
 * (cutime, cstime): a backend that exits during a phase still counts. Other databases' work counts too.
 */
export function postgresCpuSeconds(): number {
  return postgresProcesses().reduce((ticks, process) => ticks + process.own + process.reaped, 0) / TICKS;
}

/** What a postgres process is, from the title it sets (`postgres: 15/main: checkpointer`, `postgres: autovacuum worker`, ...). */
function postgresRole(pid: string): string {
  const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  if (!title.startsWith('postgres: ')) return 'other';
  if (title.includes('autovacuum')) return 'autovacuum';
  if (title.includes('checkpointer')) return 'checkpointer';
  if (title.includes('background writer') || title.includes('walwriter')) return 'writers';
  // A client's backend names its client: `postgres: [cluster: ]user database 127.0.0.1(port) state`.
  if (/\(\d+\)|\[local\]/.test(title)) return 'backends';
  return 'other';
}

/**
 * PostgreSQL's CPU split by process role (backends, autovacuum, checkpointer, the WAL and background
 * writers), sampled every 250 ms: each process's own utime + stime as last seen, so a short-lived
 * autovacuum worker or backend counts up to its last sample. `since()` gives the seconds per role
 * from a mark.
 */
export class PostgresCpuByRole {
  readonly #seen = new Map<string, { role: string; ticks: number }>();
  readonly #timer: NodeJS.Timeout;

  constructor() {
    this.sample();
    this.#timer = setInterval(() => this.sample(), 250);
    this.#timer.unref();
  }

  sample(): void {
    for (const { pid, own } of postgresProcesses()) {
      // A new backend shows the postmaster's title until it has set its own: ask again until then.
      const known = this.#seen.get(pid);
      try {
        this.#seen.set(pid, { role: known === undefined || known.role === 'other' ? postgresRole(pid) : known.role, ticks: own });
      } catch {
        // gone meanwhile
      }
    }
  }

  /** Ticks per pid now, to pass to since() later. */
  mark(): Map<string, number> {
    this.sample();
    return new Map([...this.#seen].map(([pid, seen]) => [pid, seen.ticks]));
  }

  since(mark: Map<string, number>): Record<string, number> {
    this.sample();
    const seconds: Record<string, number> = {};
    for (const [pid, { role, ticks }] of this.#seen) {
      seconds[role] = (seconds[role] ?? 0) + (ticks - (mark.get(pid) ?? 0)) / TICKS;
    }
    return seconds;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * A fresh database each run: migrating a kept one down and up again breaks whenever the migration
 * list it was built with has changed meanwhile (a branch, a renamed migration).
 */
export async function recreateDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: new URL('/postgres', databaseUrl).toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
  await ensureDatabaseExists(databaseUrl);
}

export interface NightlyData {
  payrolls: number;
  employeesPerPayroll: number;
  paymentsPerEmployee: number;
  runDate: string;
  payDate: string;
}

/**
 * The nightly benchmark's data, set-based: one provider and biller, `payrolls` employers with one monthly
 * payroll each and a pay date locking on `runDate`, `employeesPerPayroll` employees each with an active
 * mandate and `paymentsPerEmployee` pending payment requests due on `payDate`. Used by nightly.ts and cycle.ts.
 */
export async function generateNightlyData(db: Database, { payrolls, employeesPerPayroll, paymentsPerEmployee, runDate, payDate }: NightlyData): Promise<void> {
  const employees = payrolls * employeesPerPayroll;
  const statements = [
    sql`insert into payroll_providers (id, name, lead_time_working_days)
        values ('00000000-0000-4000-8000-000000000001', 'Bench payroll provider', 2)`,
    sql`insert into clients (id, name, role, secret_hash, scopes)
        values ('00000000-0000-4000-8000-000000000002', 'Bench biller', 'biller', repeat('0', 64), '{payments:write}')`,
    sql`insert into collection_accounts (currency, account_number, sort_code, account_holder_name)
        values ('GBP', '41234978', '04-00-04', 'Salary Deductions Collections Ltd')`,
    sql`insert into employers (id, payroll_provider_id, external_id, name, salary_deduction_opt_in_status)
        select ('10000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, '00000000-0000-4000-8000-000000000001', 'E' || g, 'Employer ' || g, 'opted_in'
        from generate_series(1, ${payrolls}) g`,
    sql`insert into payrolls (id, employer_id, payroll_provider_id, external_id, name, payment_run_frequency, go_live_date)
        select ('20000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, ('10000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
               '00000000-0000-4000-8000-000000000001', 'P' || g, 'Payroll ' || g, 'monthly', date '2000-01-01'
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

export interface LockedSnapshot {
  id: string;
  payroll_id: string;
  pay_period: string;
}

/** One pay date's confirmation as payroll would send it, with the snapshot it answers. */
export interface PreparedConfirmation {
  snapshot: LockedSnapshot;
  submission: ConfirmationSubmission;
}

/**
 * Payroll's side: what it deducted on every locked pay date, from the lines it pulled (read here in
 * one statement): 90 % of employees deducted in full, every tenth half. Not the service's work, so
 * the benchmarks prepare it before timing submitConfirmations.
 */
export async function prepareConfirmations(db: Database, snapshots: readonly LockedSnapshot[]): Promise<PreparedConfirmation[]> {
  const lines = (
    await sql<{ snapshot_id: string; employee_id: string; requested_amount: number }>`
      select snapshot_id, employee_id, requested_amount from deduction_lines
      where snapshot_id = any(${snapshots.map((s) => s.id)}::uuid[]) order by snapshot_id, employee_id
    `.execute(db)
  ).rows;
  const linesOf = new Map<string, typeof lines>();
  for (const line of lines) {
    const list = linesOf.get(line.snapshot_id);
    if (list) list.push(line);
    else linesOf.set(line.snapshot_id, [line]);
  }
  return snapshots.map((snapshot, index) => {
    let total = 0;
    const deductions = (linesOf.get(snapshot.id) ?? []).map((line, i) => {
      const deducted = (index + i) % 10 === 0 ? Math.floor(line.requested_amount / 2) : line.requested_amount;
      total += deducted;
      return { employee_id: line.employee_id, deducted_amount: toMajorUnits(deducted, 'GBP'), leaver: false };
    });
    return {
      snapshot,
      submission: { deduction_data_id: snapshot.id, pay_period: snapshot.pay_period, currency: 'GBP', total_amount: toMajorUnits(total, 'GBP'), deductions },
    };
  });
}

/** Each prepared confirmation through submitConfirmation, in its own transaction, `concurrency` at a time. */
export async function submitConfirmations(db: Database, caller: Caller, prepared: readonly PreparedConfirmation[], concurrency: number): Promise<void> {
  await inParallel(prepared, concurrency, async ({ snapshot, submission }) => {
    await db.transaction().execute((trx) => submitConfirmation(trx, caller, snapshot.payroll_id, submission, DEFAULT_REPORTED_LIMITS));
  });
}

/**
 * Queues one reconcile job per payroll pay date for the workers already running and waits until none
 * waits, runs or waits for a retry. Completed jobs are removed beyond the newest 1,000
 * (defaultJobOptions); jobs that failed for good stay listed: returns the final counts.
 */
export async function reconcileThroughQueue(config: Config, payrollIds: readonly string[], payDate: string) {
  const queue = new Queue(queueNames.payDates, { connection: producerConnection(config.REDIS_URL), prefix: config.QUEUE_PREFIX });
  try {
    for (let i = 0; i < payrollIds.length; i += 1000) {
      await queue.addBulk(
        payrollIds.slice(i, i + 1000).map((payrollId) => ({
          name: reconcilePayDateJob,
          data: { payrollId, payDate },
          opts: { ...defaultJobOptions, jobId: `bench.reconcile.${payrollId}` },
        })),
      );
    }
    for (;;) {
      const counts = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed');
      if ((counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0) === 0) return counts;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await queue.close();
  }
}
