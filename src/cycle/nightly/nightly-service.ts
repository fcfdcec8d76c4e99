import type { Database } from '../../platform/db/connection.ts';
import type { NightlyRunTrigger } from '../../platform/db/tables.ts';
import type { AmountLimits } from '../../collections/payments/amount-limits.ts';
import { findPayrollNames } from '../../directory/payrolls/directory-repository.ts';
import { defaultJobOptions, lockJobId, lockPayDateJob, type PayDatePair } from '../../platform/queue/job-catalogue.ts';
import { enqueueJobs } from '../../platform/queue/job-contract.ts';
import type { JobQueue } from '../../platform/queue/queues.ts';
import { isConnectionError } from '../../platform/runtime/dependency-health.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { NotFoundError } from '../../platform/shared/domain-errors.ts';
import { lockPayDate, type PayDateFollowUp, type PayDateLockOutcome } from '../snapshots/pay-date-lock-service.ts';
import { holdReasonText, lockHoldReasons, type PayrollLockFacts } from './go-live-readiness.ts';
import {
  claimJobRequeue,
  findLatestRun,
  findRun,
  findUnfinishedRun,
  finishRunIfResolved,
  insertRunWithDuePayDates,
  listPendingPayDates,
  listRunPayDates,
  advisoryLockRunDate,
  listDuePayrollLockFacts,
  listPayrollLockFacts,
  listRetryablePayDates,
  reopenRunPayDates,
  updateSkipReasons,
  type HeldPayroll,
  type RetryablePayDate,
  markPayDateFailed,
  recordPayDateOutcomes,
  type NightlyRunPayDateRow,
  type NightlyRunRow,
} from './nightly-run-repository.ts';

/** Who started a run: the job scheduler, the watchdog catching up a missed date, or a person. */
export type RunTrigger = { kind: 'schedule' } | { kind: 'catch_up' } | { kind: 'manual'; by: string };

export interface TriggeredRun {
  run: NightlyRunRow;
  /** True when the date already had a run this trigger joined instead of starting another. */
  joined: boolean;
}

const ENQUEUE_BATCH = 1_000;

/** One lock job (lock-pay-date) per pay date of the run; an id already in Redis is left as it is (BullMQ adds nothing). */
export async function enqueueLockJobs(payDates: JobQueue, runId: string, pending: ReadonlyArray<PayDatePair & { requeues: number }>): Promise<void> {
  for (let i = 0; i < pending.length; i += ENQUEUE_BATCH) {
    await enqueueJobs(
      payDates,
      lockPayDateJob,
      pending.slice(i, i + ENQUEUE_BATCH).map(({ payrollId, payDate, requeues }) => ({
        payload: { runId, payrollId, payDate },
        options: { ...defaultJobOptions, jobId: lockJobId(runId, { payrollId, payDate }, requeues) },
      })),
    );
  }
}

/**
 * Starts the nightly run of a date: a database row with one pending row per due pay date, then a
 * lock job per pay date. The database decides what is due, never Redis: a pay date that is due and
 * unlocked is in the run whatever jobs Redis remembers, because the job ids carry the run's
 * generated id.
 *
 * A date whose run is still going is joined (its pay dates are checked for live jobs and queued
 * again where Redis lost them); the scheduler's trigger and the watchdog's catch-up also join a
 * finished run of the date rather than start a second one. A person triggering a finished date
 * starts a new run of whatever is due now.
 */
export async function triggerNightlyRun(db: Database, payDates: JobQueue, runDate: string, trigger: RunTrigger): Promise<TriggeredRun> {
  const { run, created } = await db.transaction().execute(async (trx) => {
    await advisoryLockRunDate(trx, runDate);
    const unfinished = await findUnfinishedRun(trx, runDate);
    if (unfinished) return { run: unfinished, created: false };
    if (trigger.kind !== 'manual') {
      const earlier = await findLatestRun(trx, runDate, trigger.kind === 'schedule' ? 'schedule' : undefined);
      if (earlier) return { run: earlier, created: false };
    }
    const kind: NightlyRunTrigger = trigger.kind;
    const inserted = await insertRunWithDuePayDates(trx, {
      id: timeOrderedUuid(),
      runDate,
      trigger: kind,
      triggeredBy: trigger.kind === 'manual' ? trigger.by : null,
      held: heldPayrolls(await listDuePayrollLockFacts(trx, runDate)),
    });
    return { run: inserted, created: true };
  });
  if (created) {
    const pending = await listPendingPayDates(db, run.id);
    await enqueueLockJobs(
      payDates,
      run.id,
      pending.map((row) => ({ payrollId: row.payroll_id, payDate: row.pay_date, requeues: row.job_requeues })),
    );
  } else if (run.finished_at === null) {
    await recoverRun(db, payDates, run.id);
  }
  return { run, joined: !created };
}

/** The payrolls a run holds back, each with the reason its skipped pay dates keep. */
function heldPayrolls(facts: ReadonlyArray<{ payrollId: string } & PayrollLockFacts>): HeldPayroll[] {
  return facts.flatMap((payroll) => {
    const reasons = lockHoldReasons(payroll);
    return reasons.length === 0 ? [] : [{ payrollId: payroll.payrollId, reason: holdReasonText(reasons) }];
  });
}

export interface RunRetry {
  runId: string;
  /** Pay dates queued to lock again in the run. */
  retried: PayDatePair[];
  /** Skipped pay dates whose payroll is still not ready, with why. */
  stillNotReady: Array<PayDatePair & { reason: string }>;
  /** Another run of the same date is going; nothing was retried (one unfinished run per date). */
  busyWith: string | null;
}

const pairOf = (row: RetryablePayDate): PayDatePair => ({ payrollId: row.payroll_id, payDate: row.pay_date });

/**
 * Which of these skipped or failed pay dates can lock now, their payrolls read once; the skipped ones
 * whose payroll is still not ready keep their skip with today's reason, written in one statement.
 */
async function sortByReadiness(db: Database, rows: readonly RetryablePayDate[]) {
  const facts = new Map((await listPayrollLockFacts(db, [...new Set(rows.map((row) => row.payroll_id))])).map((f) => [f.payrollId, f]));
  const ready: RetryablePayDate[] = [];
  const stillNotReady: Array<RetryablePayDate & { reason: string }> = [];
  for (const row of rows) {
    const reasons = lockHoldReasons(facts.get(row.payroll_id)!);
    if (reasons.length === 0) ready.push(row);
    else stillNotReady.push({ ...row, reason: holdReasonText(reasons) });
  }
  await updateSkipReasons(
    db,
    stillNotReady.filter((row) => row.outcome === 'skipped' && row.failure_reason !== row.reason),
  );
  return { ready, stillNotReady };
}

/** Puts these pay dates of a run back to pending and queues their jobs; undefined while another run of its date is going. */
async function reopenAndEnqueue(db: Database, payDates: JobQueue, runId: string, pairs: readonly PayDatePair[]): Promise<PayDatePair[] | undefined> {
  const reopened = await db.transaction().execute((trx) => reopenRunPayDates(trx, runId, pairs));
  if (reopened === undefined) return undefined;
  await enqueueLockJobs(payDates, runId, reopened);
  return reopened.map(({ payrollId, payDate }) => ({ payrollId, payDate }));
}

/**
 * Locks again the pay dates a run skipped or failed, still unlocked and not taken on by a later run:
 * those whose payroll is ready go back to pending in the run, which reopens, under their next job
 * id; the others keep their skip with today's reason.
 */
export async function retryRunPayDates(db: Database, payDates: JobQueue, runId: string): Promise<RunRetry> {
  const run = await findRun(db, runId);
  if (!run) throw new NotFoundError(`Nightly run ${runId}`);
  const { ready, stillNotReady } = await sortByReadiness(db, await listRetryablePayDates(db, { runId }));
  const notReady = stillNotReady.map((row) => ({ ...pairOf(row), reason: row.reason }));
  const retried = await reopenAndEnqueue(db, payDates, runId, ready.map(pairOf));
  if (retried === undefined) {
    const busy = await findUnfinishedRun(db, run.run_date);
    return { runId, retried: [], stillNotReady: notReady, busyWith: busy?.id ?? null };
  }
  return { runId, retried, stillNotReady: notReady, busyWith: null };
}

/**
 * Of these skipped or failed pay dates (of any runs), locks again those whose payroll is ready, each
 * in its own run; a run whose date has another run going is left for a later look. Returns how many
 * it queued.
 */
export async function retryReadyPayDates(db: Database, payDates: JobQueue, rows: readonly RetryablePayDate[]): Promise<number> {
  const { ready } = await sortByReadiness(db, rows);
  const byRun = new Map<string, PayDatePair[]>();
  for (const row of ready) byRun.set(row.run_id, [...(byRun.get(row.run_id) ?? []), pairOf(row)]);
  let retried = 0;
  for (const [runId, pairs] of byRun) retried += (await reopenAndEnqueue(db, payDates, runId, pairs))?.length ?? 0;
  return retried;
}

function outcomesOf(outcome: PayDateLockOutcome) {
  return [...(outcome.earlier ?? []), outcome].map((o) => ({
    payrollId: o.payrollId,
    payDate: o.payDate,
    created: o.created,
    snapshotId: o.snapshotId,
    employeeCount: o.employeeCount,
    paymentsInstructed: o.paymentsInstructed,
    totalAmount: o.totalAmount,
    currency: o.currency,
  }));
}

/**
 * Locks one pay date of a run and records the outcome in the lock's transaction (with any earlier
 * pay date of the payroll it had to lock first), then finishes the run if that was its last.
 * `followUp` runs in that transaction too (the job gives the expected remittances), so a run that
 * has finished has done it for every pay date it locked.
 */
export async function lockPayDateOfRun(
  db: Database,
  runId: string | undefined,
  pair: PayDatePair,
  limits: AmountLimits,
  followUp?: PayDateFollowUp,
): Promise<PayDateLockOutcome> {
  if (runId === undefined) return lockPayDate(db, pair.payrollId, pair.payDate, { limits, followUp });
  const outcome = await lockPayDate(db, pair.payrollId, pair.payDate, {
    limits,
    recordOutcome: (trx, locked) => recordPayDateOutcomes(trx, runId, outcomesOf(locked)),
    followUp,
  });
  await finishRunIfResolved(db, runId);
  return outcome;
}

/** A pay date's job failed for good: the run records it (unless it was resolved meanwhile). */
export async function recordPayDateFailure(db: Database, runId: string, pair: PayDatePair, reason: string): Promise<void> {
  if (await markPayDateFailed(db, runId, pair, reason)) await finishRunIfResolved(db, runId);
}

/** Job states in which a job will still run. */
const LIVE_JOB_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);
/** How often one pay date's job is queued again before the run records it as failed. */
export const MAX_JOB_REQUEUES = 5;
const STATE_LOOKUPS_AT_ONCE = 200;

export interface RunRecovery {
  finished: boolean;
  /** Pay dates queued again: Redis had no live job for them (lost data, or a stale finished job). */
  requeued: number;
  /** Pay dates recorded as failed from Redis: their job failed for good and the database never heard. */
  failuresRecorded: number;
}

async function jobStates(queue: JobQueue, ids: readonly string[]): Promise<string[]> {
  const states: string[] = [];
  for (let i = 0; i < ids.length; i += STATE_LOOKUPS_AT_ONCE) {
    states.push(...(await Promise.all(ids.slice(i, i + STATE_LOOKUPS_AT_ONCE).map((id) => queue.getJobState(id)))));
  }
  return states;
}

/** Pending pay dates of one run, as the run's rows hold them. */
export type PendingPayDateRow = Pick<NightlyRunPayDateRow, 'payroll_id' | 'pay_date' | 'job_requeues'>;

/**
 * Gives each of these pending pay dates of a run a job that will run, where Redis has none. A job
 * that is gone (Redis lost its data), or finished while the database still calls its pay date
 * pending (a database restored from before the job ran), is queued again under the next id; a job
 * that failed for good without the database hearing of it (its worker could not write the failure)
 * has the failure recorded, unless it failed for want of a connection, which is retried.
 */
export async function recoverRunPayDates(
  db: Database,
  payDates: JobQueue,
  runId: string,
  pending: readonly PendingPayDateRow[],
): Promise<{ requeued: number; failuresRecorded: number }> {
  const ids = pending.map((row) => lockJobId(runId, { payrollId: row.payroll_id, payDate: row.pay_date }, row.job_requeues));
  const states = await jobStates(payDates, ids);
  const requeue: Array<PayDatePair & { requeues: number }> = [];
  let failuresRecorded = 0;
  for (const [i, row] of pending.entries()) {
    const state = states[i]!;
    if (LIVE_JOB_STATES.has(state)) continue;
    const pair = { payrollId: row.payroll_id, payDate: row.pay_date };
    if (state === 'failed') {
      const reason = (await payDates.getJob(ids[i]!))?.failedReason ?? 'failed';
      if (!isConnectionError(reason)) {
        if (await markPayDateFailed(db, runId, pair, reason)) failuresRecorded += 1;
        continue;
      }
    }
    if (row.job_requeues >= MAX_JOB_REQUEUES) {
      const reason = `its job was lost, or failed without reaching the database, ${row.job_requeues + 1} times`;
      if (await markPayDateFailed(db, runId, pair, reason)) failuresRecorded += 1;
      continue;
    }
    const claimed = await claimJobRequeue(db, runId, pair, row.job_requeues);
    if (claimed !== undefined) requeue.push({ ...pair, requeues: claimed });
  }
  await enqueueLockJobs(payDates, runId, requeue);
  return { requeued: requeue.length, failuresRecorded };
}

/** Makes Redis match what the database says of a run: every pending pay date has a job that will run. */
export async function recoverRun(db: Database, payDates: JobQueue, runId: string): Promise<RunRecovery> {
  if (await finishRunIfResolved(db, runId)) return { finished: true, requeued: 0, failuresRecorded: 0 };
  const { requeued, failuresRecorded } = await recoverRunPayDates(db, payDates, runId, await listPendingPayDates(db, runId));
  const finished = failuresRecorded > 0 ? await finishRunIfResolved(db, runId) : false;
  return { finished, requeued, failuresRecorded };
}

export interface NightlySummary {
  runId: string;
  runDate: string;
  trigger: NightlyRunTrigger;
  triggeredBy: string | null;
  startedAt: string;
  finishedAt: string | null;
  /** Pay dates the run took on (due when it started, and any earlier one a lock had to take first). */
  pairs: number;
  /** Pay dates this run locked. */
  payrollsLocked: number;
  /** Pay dates it found locked by someone else (another run, a re-run). */
  alreadyLocked: number;
  /** Pay dates not resolved yet (only while the run is going). */
  pending: number;
  employees: number;
  paymentsInstructed: number;
  /**
   * Minor units per currency, exact: one pay date's total is at most 15 digits, but thousands of
   * them together pass 2^53, where a number would start rounding.
   */
  totalsByCurrency: Record<string, bigint>;
  /** `payroll` is its name as people read it ("Employer: Payroll"), null when not looked up. */
  failures: Array<{ payrollId: string; payroll: string | null; payDate: string; reason: string }>;
  /** Pay dates held back because their payroll was not ready, each with why. */
  skipped: Array<{ payrollId: string; payroll: string | null; payDate: string; reason: string }>;
}

/**
 * The run's summary from its recorded pay dates (pure: no I/O). Figures count what this run locked;
 * failed and skipped pay dates name their payroll from `payrollNames` where it has them.
 */
export function summarizeNightlyRun(run: NightlyRunRow, payDates: readonly NightlyRunPayDateRow[], payrollNames: ReadonlyMap<string, string> = new Map()): NightlySummary {
  const summary: NightlySummary = {
    runId: run.id,
    runDate: run.run_date,
    trigger: run.trigger,
    triggeredBy: run.triggered_by,
    startedAt: run.started_at.toISOString(),
    finishedAt: run.finished_at ? run.finished_at.toISOString() : null,
    pairs: payDates.length,
    payrollsLocked: 0,
    alreadyLocked: 0,
    pending: 0,
    employees: 0,
    paymentsInstructed: 0,
    totalsByCurrency: {},
    failures: [],
    skipped: [],
  };
  for (const row of payDates) {
    switch (row.outcome) {
      case 'locked':
        summary.payrollsLocked += 1;
        summary.employees += row.employee_count ?? 0;
        summary.paymentsInstructed += row.payments_instructed ?? 0;
        summary.totalsByCurrency[row.currency!] = (summary.totalsByCurrency[row.currency!] ?? 0n) + BigInt(row.total_amount ?? 0);
        break;
      case 'already_locked':
        summary.alreadyLocked += 1;
        break;
      case 'failed':
        summary.failures.push({ payrollId: row.payroll_id, payroll: payrollNames.get(row.payroll_id) ?? null, payDate: row.pay_date, reason: row.failure_reason ?? 'failed' });
        break;
      case 'pending':
        summary.pending += 1;
        break;
      case 'skipped':
        summary.skipped.push({
          payrollId: row.payroll_id,
          payroll: payrollNames.get(row.payroll_id) ?? null,
          payDate: row.pay_date,
          reason: row.failure_reason ?? 'not ready',
        });
        break;
    }
  }
  return summary;
}

export async function loadNightlySummary(db: Database, runId: string): Promise<NightlySummary> {
  const run = await findRun(db, runId);
  if (!run) throw new Error(`there is no nightly run ${runId}`);
  const payDates = await listRunPayDates(db, runId);
  const named = payDates.filter((row) => row.outcome === 'failed' || row.outcome === 'skipped').map((row) => row.payroll_id);
  return summarizeNightlyRun(run, payDates, await findPayrollNames(db, named));
}
