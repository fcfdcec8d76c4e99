import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Database, Executor } from '../../platform/db/connection.ts';
import type { NightlyRunPayDatesTable, NightlyRunsTable, NightlyRunTrigger } from '../../platform/db/tables.ts';
import type { PayDatePair } from '../../platform/queue/job-catalogue.ts';
import type { PayrollLockFacts } from './go-live-readiness.ts';
import { payrollLockFactColumns } from './go-live-readiness-repository.ts';

export type NightlyRunRow = Selectable<NightlyRunsTable>;
export type NightlyRunPayDateRow = Selectable<NightlyRunPayDatesTable>;

/** Payrolls of sandbox providers: few, so the nightly's due pay dates exclude them with a hashed subplan. */
const sandboxPayrollIds = sql<string>`select p.id from payrolls p join payroll_providers pp on pp.id = p.payroll_provider_id where pp.sandbox`;

/**
 * The pay dates due to lock by a run date: unlocked, lock date come, from the payroll's go-live date
 * on (a payroll without one is not live). Sandbox payrolls are never due: only their simulation
 * locks them (see src/faces/sandbox).
 */
const duePayDates = (runDate: string) => sql<{ payroll_id: string; pay_date: string }>`
  select pd.payroll_id, pd.pay_date
    from pay_dates pd
    join payrolls p on p.id = pd.payroll_id
   where pd.lock_date <= ${runDate}::date and pd.locked_at is null and pd.pay_date >= p.go_live_date
     and pd.payroll_id not in (${sandboxPayrollIds})
`;

/** The lock facts (see lockHoldReasons) of the payrolls `which` selects (a query of payroll ids). */
async function payrollLockFacts(db: Executor, which: RawBuilder<unknown>) {
  const { rows } = await sql<{ payrollId: string } & PayrollLockFacts>`
    select ${payrollLockFactColumns}
      from payrolls p
      join employers e on e.id = p.employer_id
     where p.id in (${which})
  `.execute(db);
  return rows;
}

/** What the run must know, before it starts, of each payroll with pay dates due: whether it can lock them. */
export async function listDuePayrollLockFacts(db: Executor, runDate: string) {
  return payrollLockFacts(db, sql`select payroll_id from (${duePayDates(runDate)}) due`);
}

/** A payroll whose due pay dates the run holds back, and why. */
export interface HeldPayroll {
  payrollId: string;
  reason: string;
}

/** Triggers of one run date take turns: the second sees the first's run and joins it. */
export async function advisoryLockRunDate(trx: Executor, runDate: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`nightly-run:${runDate}`}, 0))`.execute(trx);
}

export async function findRun(db: Executor, runId: string): Promise<NightlyRunRow | undefined> {
  return db.selectFrom('nightly_runs').selectAll().where('id', '=', runId).executeTakeFirst();
}

export async function findUnfinishedRun(db: Executor, runDate: string): Promise<NightlyRunRow | undefined> {
  return db.selectFrom('nightly_runs').selectAll().where('run_date', '=', runDate).where('finished_at', 'is', null).executeTakeFirst();
}

/** The run started last, whatever its date. */
export async function findLatestRunOfAnyDate(db: Executor): Promise<NightlyRunRow | undefined> {
  return db.selectFrom('nightly_runs').selectAll().orderBy('started_at', 'desc').limit(1).executeTakeFirst();
}

/** The latest run of a date, or the latest one a given trigger started. */
export async function findLatestRun(db: Executor, runDate: string, trigger?: NightlyRunTrigger): Promise<NightlyRunRow | undefined> {
  let query = db.selectFrom('nightly_runs').selectAll().where('run_date', '=', runDate);
  if (trigger) query = query.where('trigger', '=', trigger);
  return query.orderBy('started_at', 'desc').limit(1).executeTakeFirst();
}

/**
 * Starts a run in one statement: the run row and one row per pay date due by the run date, pending,
 * or skipped with its reason when its payroll is held back. A run with nothing to lock is finished as
 * it starts.
 */
export async function insertRunWithDuePayDates(
  trx: Executor,
  run: { id: string; runDate: string; trigger: NightlyRunTrigger; triggeredBy: string | null; held?: readonly HeldPayroll[] },
): Promise<NightlyRunRow> {
  const held = run.held ?? [];
  const result = await sql<NightlyRunRow>`
    with held as (
      select * from unnest(${held.map((h) => h.payrollId)}::uuid[], ${held.map((h) => h.reason)}::text[]) as h(payroll_id, reason)
    ),
    due as (
      select due.payroll_id, due.pay_date, held.reason as held_reason
        from (${duePayDates(run.runDate)}) due
        left join held on held.payroll_id = due.payroll_id
    ),
    run as (
      insert into nightly_runs (id, run_date, trigger, triggered_by, pay_dates_due, finished_at)
      select ${run.id}::uuid, ${run.runDate}::date, ${run.trigger}, ${run.triggeredBy}, count(*),
             case when count(*) filter (where held_reason is null) = 0 then now() end
      from due
      returning *
    ),
    pay_date_rows as (
      insert into nightly_run_pay_dates (run_id, payroll_id, pay_date, outcome, failure_reason, resolved_at)
      select ${run.id}::uuid, payroll_id, pay_date,
             case when held_reason is null then 'pending' else 'skipped' end, held_reason,
             case when held_reason is not null then now() end
      from due
    )
    select * from run
  `.execute(trx);
  return result.rows[0]!;
}

export async function listPendingPayDates(db: Executor, runId: string) {
  return db
    .selectFrom('nightly_run_pay_dates')
    .select(['payroll_id', 'pay_date', 'job_requeues'])
    .where('run_id', '=', runId)
    .where('outcome', '=', 'pending')
    .orderBy('payroll_id')
    .orderBy('pay_date')
    .execute();
}

export interface PayDateOutcome {
  payrollId: string;
  payDate: string;
  /** True: this lock locked the pay date; false: it found it locked already. */
  created: boolean;
  snapshotId: string;
  employeeCount: number;
  paymentsInstructed: number;
  totalAmount: number;
  currency: string;
}

/**
 * Records what a lock did, in the lock's own transaction, so the run's record and the pay date's
 * state can never disagree (a worker killed after the commit leaves both written). A row already
 * resolved keeps its outcome: a repeated job finds the pay date locked by this very run and must
 * not call it "already locked". The one exception is a pay date recorded as failed (its job's
 * failure reached the database) that a re-queued job then locked after all: it is locked.
 */
export async function recordPayDateOutcomes(trx: Executor, runId: string, outcomes: readonly PayDateOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await trx
    .insertInto('nightly_run_pay_dates')
    .values(
      outcomes.map((outcome) => ({
        run_id: runId,
        payroll_id: outcome.payrollId,
        pay_date: outcome.payDate,
        outcome: outcome.created ? ('locked' as const) : ('already_locked' as const),
        snapshot_id: outcome.snapshotId,
        employee_count: outcome.employeeCount,
        payments_instructed: outcome.paymentsInstructed,
        total_amount: outcome.totalAmount,
        currency: outcome.currency,
        resolved_at: sql<Date>`now()`,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['run_id', 'payroll_id', 'pay_date'])
        .doUpdateSet((eb) => ({
          outcome: eb.ref('excluded.outcome'),
          snapshot_id: eb.ref('excluded.snapshot_id'),
          employee_count: eb.ref('excluded.employee_count'),
          payments_instructed: eb.ref('excluded.payments_instructed'),
          total_amount: eb.ref('excluded.total_amount'),
          currency: eb.ref('excluded.currency'),
          failure_reason: null,
          resolved_at: eb.ref('excluded.resolved_at'),
        }))
        .where((eb) =>
          eb.or([eb('nightly_run_pay_dates.outcome', '=', 'pending'), eb.and([eb('nightly_run_pay_dates.outcome', '=', 'failed'), eb('excluded.outcome', '=', 'locked')])]),
        ),
    )
    .execute();
}

/** Records a pay date the run could not lock; a pay date already resolved keeps its outcome. */
export async function markPayDateFailed(db: Executor, runId: string, pair: PayDatePair, reason: string): Promise<boolean> {
  const result = await db
    .updateTable('nightly_run_pay_dates')
    .set({ outcome: 'failed', failure_reason: reason, resolved_at: sql<Date>`now()` })
    .where('run_id', '=', runId)
    .where('payroll_id', '=', pair.payrollId)
    .where('pay_date', '=', pair.payDate)
    .where('outcome', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Finishes the run once none of its pay dates is pending. Asked after each pay date commits, as a
 * statement of its own: the last pay date to commit then sees every other one committed.
 */
export async function finishRunIfResolved(db: Executor, runId: string): Promise<boolean> {
  const result = await db
    .updateTable('nightly_runs')
    .set({ finished_at: sql<Date>`now()` })
    .where('id', '=', runId)
    .where('finished_at', 'is', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('nightly_run_pay_dates')
            .select(sql`1`.as('one'))
            .where('run_id', '=', runId)
            .where('outcome', '=', 'pending'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Claims the next re-queue of a pending pay date: only one watchdog wins a given count, and a pay
 * date resolved meanwhile is not re-queued. Returns the new count, or undefined when not claimed.
 */
export async function claimJobRequeue(db: Executor, runId: string, pair: PayDatePair, seen: number): Promise<number | undefined> {
  const row = await db
    .updateTable('nightly_run_pay_dates')
    .set((eb) => ({ job_requeues: eb('job_requeues', '+', 1) }))
    .where('run_id', '=', runId)
    .where('payroll_id', '=', pair.payrollId)
    .where('pay_date', '=', pair.payDate)
    .where('outcome', '=', 'pending')
    .where('job_requeues', '=', seen)
    .returning('job_requeues')
    .executeTakeFirst();
  return row?.job_requeues;
}

/**
 * Pay dates still unlocked that the latest run to take them on, dated within `days` days before
 * `today` and started before `startedBefore`, still calls pending. Latest: a pay date a later run
 * took on again (every run takes each due unlocked pay date) belongs to that run. A pay date whose
 * latest run recorded its lock as failed is not listed: that failure stands until an operator, or
 * the next nightly run, tries again. Only the rows of the look-back's runs are read.
 */
export async function listPendingPayDatesOfPastRuns(db: Executor, window: { today: string; days: number; startedBefore: Date }) {
  const result = await sql<{ run_id: string; payroll_id: string; pay_date: string; job_requeues: number }>`
    select latest.run_id, latest.payroll_id, latest.pay_date, latest.job_requeues
    from (
      select distinct on (p.payroll_id, p.pay_date)
             p.run_id, p.payroll_id, p.pay_date, p.outcome, p.job_requeues, r.run_date, r.started_at
      from nightly_runs r
      join nightly_run_pay_dates p on p.run_id = r.id
      join pay_dates d on d.payroll_id = p.payroll_id and d.pay_date = p.pay_date
      where r.run_date >= ${window.today}::date - ${window.days}::int and d.locked_at is null
      order by p.payroll_id, p.pay_date, r.started_at desc
    ) latest
    where latest.run_date < ${window.today}::date and latest.outcome = 'pending' and latest.started_at < ${window.startedBefore}
    order by latest.run_id, latest.payroll_id, latest.pay_date
  `.execute(db);
  return result.rows;
}

/** A pay date a run skipped or failed that a retry could lock: still unlocked, and no later run has taken it on. */
export interface RetryablePayDate {
  run_id: string;
  payroll_id: string;
  pay_date: string;
  outcome: 'failed' | 'skipped';
  failure_reason: string;
}

/**
 * The skipped or failed pay dates, still unlocked, whose latest run row is theirs: of one run, or of
 * every run of the last `days` (before `today`, and today's too). Those a later run took on belong
 * to that run.
 */
export async function listRetryablePayDates(db: Executor, scope: { runId: string } | { today: string; days: number; outcomes: ReadonlyArray<'failed' | 'skipped'> }) {
  const runFilter = 'runId' in scope ? sql`r.id = ${scope.runId}::uuid` : sql`r.run_date >= ${scope.today}::date - ${scope.days}::int`;
  const outcomes = 'runId' in scope ? ['failed', 'skipped'] : [...scope.outcomes];
  const result = await sql<RetryablePayDate>`
    select latest.run_id, latest.payroll_id, latest.pay_date, latest.outcome, latest.failure_reason
    from (
      select distinct on (p.payroll_id, p.pay_date) p.run_id, p.payroll_id, p.pay_date, p.outcome, p.failure_reason
        from nightly_run_pay_dates p
        join nightly_runs r on r.id = p.run_id
        join pay_dates d on d.payroll_id = p.payroll_id and d.pay_date = p.pay_date
       where d.locked_at is null
         and (p.payroll_id, p.pay_date) in (
           select p2.payroll_id, p2.pay_date from nightly_run_pay_dates p2 join nightly_runs r on r.id = p2.run_id where ${runFilter}
         )
       order by p.payroll_id, p.pay_date, r.started_at desc
    ) latest
    join nightly_runs r on r.id = latest.run_id
    where ${runFilter} and latest.outcome = any(${outcomes}::text[])
    order by latest.run_id, latest.payroll_id, latest.pay_date
  `.execute(db);
  return result.rows;
}

/** The lock facts of some payrolls. */
export async function listPayrollLockFacts(db: Executor, payrollIds: readonly string[]) {
  if (payrollIds.length === 0) return [];
  return payrollLockFacts(db, sql`select unnest(${[...payrollIds]}::uuid[])`);
}

/**
 * Puts skipped or failed pay dates of a run back to pending under their next job id, and reopens the
 * run, unless another run of its date is going (one unfinished run per date): then nothing, and
 * undefined. Returns the pay dates reopened with their new job counts.
 */
export async function reopenRunPayDates(trx: Executor, runId: string, pairs: readonly PayDatePair[]): Promise<Array<PayDatePair & { requeues: number }> | undefined> {
  const run = await trx.selectFrom('nightly_runs').select(['run_date', 'finished_at']).where('id', '=', runId).forUpdate().executeTakeFirstOrThrow();
  await advisoryLockRunDate(trx, run.run_date);
  const other = await findUnfinishedRun(trx, run.run_date);
  if (other && other.id !== runId) return undefined;
  if (pairs.length === 0) return [];
  const { rows } = await sql<{ payroll_id: string; pay_date: string; job_requeues: number }>`
    update nightly_run_pay_dates p
       set outcome = 'pending', failure_reason = null, resolved_at = null, job_requeues = p.job_requeues + 1
      from unnest(${pairs.map((pair) => pair.payrollId)}::uuid[], ${pairs.map((pair) => pair.payDate)}::date[]) as r(payroll_id, pay_date)
     where p.run_id = ${runId}::uuid and p.payroll_id = r.payroll_id and p.pay_date = r.pay_date and p.outcome in ('failed', 'skipped')
    returning p.payroll_id, p.pay_date::text, p.job_requeues
  `.execute(trx);
  if (rows.length > 0 && run.finished_at !== null) await trx.updateTable('nightly_runs').set({ finished_at: null }).where('id', '=', runId).execute();
  return rows.map((row) => ({ payrollId: row.payroll_id, payDate: row.pay_date, requeues: row.job_requeues }));
}

/** Skipped pay dates whose payroll is still not ready keep the reason as it stands now, in one statement. */
export async function updateSkipReasons(db: Executor, rows: ReadonlyArray<{ run_id: string; payroll_id: string; pay_date: string; reason: string }>): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    update nightly_run_pay_dates p set failure_reason = r.reason
      from unnest(${rows.map((row) => row.run_id)}::uuid[], ${rows.map((row) => row.payroll_id)}::uuid[],
                  ${rows.map((row) => row.pay_date)}::date[], ${rows.map((row) => row.reason)}::text[]) as r(run_id, payroll_id, pay_date, reason)
     where p.run_id = r.run_id and p.payroll_id = r.payroll_id and p.pay_date = r.pay_date and p.outcome = 'skipped'
  `.execute(db);
}

/** Unfinished runs with when each last made progress (a pay date resolved, or its start). */
export async function listUnfinishedRuns(db: Executor) {
  return db
    .selectFrom('nightly_runs as r')
    .select((eb) => [
      'r.id',
      'r.run_date',
      'r.started_at',
      eb
        .fn<Date>('coalesce', [
          eb
            .selectFrom('nightly_run_pay_dates as p')
            .select((inner) => inner.fn.max('p.resolved_at').as('last'))
            .whereRef('p.run_id', '=', 'r.id'),
          eb.ref('r.started_at'),
        ])
        .as('last_progress_at'),
    ])
    .where('r.finished_at', 'is', null)
    .orderBy('r.started_at')
    .execute();
}

export async function readRunProgress(db: Database, runId: string): Promise<{ finishedAt: Date | null; total: number; pending: number }> {
  const row = await db
    .selectFrom('nightly_runs as r')
    .leftJoin('nightly_run_pay_dates as p', 'p.run_id', 'r.id')
    .select((eb) => ['r.finished_at', eb.fn.count<number>('p.pay_date').as('total'), eb.fn.count<number>('p.pay_date').filterWhere('p.outcome', '=', 'pending').as('pending')])
    .where('r.id', '=', runId)
    .groupBy('r.finished_at')
    .executeTakeFirstOrThrow();
  return { finishedAt: row.finished_at, total: Number(row.total), pending: Number(row.pending) };
}

export async function listRunPayDates(db: Executor, runId: string): Promise<NightlyRunPayDateRow[]> {
  return db.selectFrom('nightly_run_pay_dates').selectAll().where('run_id', '=', runId).orderBy('payroll_id').orderBy('pay_date').execute();
}

/** Whether a run of this date would have anything to lock (sandbox payrolls never are, as above). */
export async function hasPayDatesDueToLock(db: Executor, runDate: string): Promise<boolean> {
  const { rows } = await sql`${duePayDates(runDate)} limit 1`.execute(db);
  return rows.length > 0;
}

/** The latest runs with how their pay dates stand: the start of a run history. */
export async function listRecentRuns(db: Executor, limit: number) {
  const result = await sql<{
    id: string;
    run_date: string;
    trigger: NightlyRunTrigger;
    triggered_by: string | null;
    started_at: Date;
    finished_at: Date | null;
    pay_dates: number;
    locked: number;
    already_locked: number;
    failed: number;
    skipped: number;
    pending: number;
  }>`
    select r.id, r.run_date, r.trigger, r.triggered_by, r.started_at, r.finished_at,
           count(p.pay_date)::int as pay_dates,
           (count(*) filter (where p.outcome = 'locked'))::int as locked,
           (count(*) filter (where p.outcome = 'already_locked'))::int as already_locked,
           (count(*) filter (where p.outcome = 'failed'))::int as failed,
           (count(*) filter (where p.outcome = 'skipped'))::int as skipped,
           (count(*) filter (where p.outcome = 'pending'))::int as pending
    from (select * from nightly_runs order by started_at desc limit ${limit}) r
    left join nightly_run_pay_dates p on p.run_id = r.id
    group by r.id, r.run_date, r.trigger, r.triggered_by, r.started_at, r.finished_at
    order by r.started_at desc
  `.execute(db);
  return result.rows;
}
