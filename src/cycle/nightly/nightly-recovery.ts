import type { Database, Executor } from '../../platform/db/connection.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import { nextCronFireAfter } from '../../platform/config/cron.ts';
import { catchUpTriggerJobId, defaultJobOptions, nightlyTriggerJob } from '../../platform/queue/job-catalogue.ts';
import { enqueueJob } from '../../platform/queue/job-contract.ts';
import type { JobQueue } from '../../platform/queue/queues.ts';
import { findLatestRun, finishRunIfResolved, hasPayDatesDueToLock, listPendingPayDatesOfPastRuns, listUnfinishedRuns } from './nightly-run-repository.ts';
import { listRetryablePayDates } from './nightly-run-repository.ts';
import { recoverRun, recoverRunPayDates, retryReadyPayDates, type PendingPayDateRow } from './nightly-service.ts';

export interface ScheduledTrigger {
  /** The run date that trigger would have run (its calendar date in the service time zone). */
  runDate: string;
  at: Date;
}

// Look-back windows, shortest first: a frequent pattern is answered by the first one with few
// steps, a weekly one by the last.
const LOOK_BACK_MS = [3_600_000, 86_400_000, 8 * 86_400_000];

/** The latest time at or before `now` that the nightly cron pattern fired, or should have. */
export function lastScheduledTrigger(pattern: string, timeZone: string, now: Date): ScheduledTrigger | null {
  for (const window of LOOK_BACK_MS) {
    let from = now.getTime() - window;
    let last: number | undefined;
    for (;;) {
      const next = nextCronFireAfter(pattern, timeZone, from);
      if (next === undefined || next > now.getTime()) break;
      last = next;
      from = next;
    }
    if (last !== undefined) return { runDate: serviceToday(new Date(last), timeZone), at: new Date(last) };
  }
  return null;
}

/**
 * The latest scheduled run that has not started `graceMs` after it was due, and had pay dates due to
 * lock: what the watchdog catches up and the attention list reports. Null when there is none.
 */
export async function findMissedScheduledRun(db: Executor, options: { pattern: string; timeZone: string; now: Date; graceMs: number }): Promise<ScheduledTrigger | null> {
  const last = lastScheduledTrigger(options.pattern, options.timeZone, options.now);
  if (!last || options.now.getTime() - last.at.getTime() < options.graceMs) return null;
  if ((await findLatestRun(db, last.runDate)) !== undefined) return null;
  if (!(await hasPayDatesDueToLock(db, last.runDate))) return null;
  return last;
}

/**
 * The nightly trigger's schedule lives in Redis. If Redis lost it around the time it should have
 * fired, no run happens for that date and its pay dates stay unlocked: this queues the trigger for
 * the latest scheduled run date that has no run at all and has pay dates due, once the scheduled
 * trigger has had `graceMs` to start its own. Returns the run date queued, or null.
 */
export async function catchUpMissedRun(db: Database, nightly: JobQueue, options: { pattern: string; timeZone: string; now: Date; graceMs: number }): Promise<string | null> {
  const last = await findMissedScheduledRun(db, options);
  if (!last) return null;
  const jobId = catchUpTriggerJobId(last.runDate);
  const earlier = await nightly.getJob(jobId);
  if (earlier) {
    const state = await earlier.getState();
    // Still to run: nothing to add. Finished without leaving a run (it failed, or the database
    // was restored since): make room for another.
    if (state !== 'completed' && state !== 'failed') return null;
    await earlier.remove();
  }
  await enqueueJob(nightly, nightlyTriggerJob, { runDate: last.runDate, trigger: 'catch_up' }, { ...defaultJobOptions, jobId });
  return last.runDate;
}

export interface RunsRecovery {
  runsChecked: number;
  runsFinished: number;
  requeued: number;
  failuresRecorded: number;
}

/**
 * Checks unfinished runs against Redis: all of them (`everyRun`, after Redis lost its data), or
 * those that have made no progress since `stuckBefore` (cheap enough to ask every minute).
 */
export async function recoverUnfinishedRuns(db: Database, payDates: JobQueue, options: { everyRun: boolean; stuckBefore: Date }): Promise<RunsRecovery> {
  const total: RunsRecovery = { runsChecked: 0, runsFinished: 0, requeued: 0, failuresRecorded: 0 };
  for (const run of await listUnfinishedRuns(db)) {
    if (!options.everyRun && new Date(run.last_progress_at) >= options.stuckBefore) continue;
    const recovery = await recoverRun(db, payDates, run.id);
    total.runsChecked += 1;
    if (recovery.finished) total.runsFinished += 1;
    total.requeued += recovery.requeued;
    total.failuresRecorded += recovery.failuresRecorded;
  }
  return total;
}

/** How many days back the watchdog looks for run dates whose pay dates were left unlocked. */
export const PAST_RUN_LOOK_BACK_DAYS = 7;

export interface PastRunsRecovery {
  requeued: number;
  failuresRecorded: number;
}

/**
 * A pay date due on a past run date (within the look-back) that is still unlocked, whose latest run
 * still calls it pending and for which Redis holds no live lock job, is queued again against that
 * run under the next job id, however the rest of the run is doing. recoverUnfinishedRuns looks at a
 * run only once the whole run has stopped making progress; a pay date whose lock date has passed
 * should not wait on its neighbours. A pay date whose lock is recorded as failed is left alone, for
 * an operator (or the next nightly run): queuing it again every look would only repeat the failure.
 * A run started after `startedBefore` is left alone: its trigger queues its jobs just after the run's
 * row commits.
 */
export async function recoverPastRunPayDates(
  db: Database,
  payDates: JobQueue,
  options: { today: string; startedBefore: Date; lookBackDays?: number },
): Promise<PastRunsRecovery> {
  const rows = await listPendingPayDatesOfPastRuns(db, {
    today: options.today,
    days: options.lookBackDays ?? PAST_RUN_LOOK_BACK_DAYS,
    startedBefore: options.startedBefore,
  });
  const byRun = new Map<string, PendingPayDateRow[]>();
  for (const row of rows) byRun.set(row.run_id, [...(byRun.get(row.run_id) ?? []), row]);
  const total: PastRunsRecovery = { requeued: 0, failuresRecorded: 0 };
  for (const [runId, pending] of byRun) {
    const recovery = await recoverRunPayDates(db, payDates, runId, pending);
    total.requeued += recovery.requeued;
    total.failuresRecorded += recovery.failuresRecorded;
    if (recovery.failuresRecorded > 0) await finishRunIfResolved(db, runId);
  }
  return total;
}

/**
 * A pay date a run skipped because its payroll was not ready is locked as soon as it is (an operator
 * set the collection account, the employer opted in): the watchdog retries, in the run that skipped
 * them, the skipped pay dates of the look-back whose payrolls are ready now. Returns how many it
 * queued.
 */
export async function retryPayDatesNowReady(db: Database, payDates: JobQueue, options: { today: string; lookBackDays?: number }): Promise<number> {
  const rows = await listRetryablePayDates(db, { today: options.today, days: options.lookBackDays ?? PAST_RUN_LOOK_BACK_DAYS, outcomes: ['skipped'] });
  return rows.length === 0 ? 0 : retryReadyPayDates(db, payDates, rows);
}
