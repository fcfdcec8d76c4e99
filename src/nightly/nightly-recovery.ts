import { getNextMillis, Job, type Queue } from 'bullmq';
import type { Database } from '../db/connection.ts';
import { serviceToday } from '../calendars/lock-date.ts';
import { catchUpTriggerJobId, defaultJobOptions, nightlyTriggerJob } from '../queue/job-catalogue.ts';
import { findLatestRun, hasPayDatesDueForLock, listUnfinishedRuns } from './nightly-run-repository.ts';
import { recoverRun } from './nightly-service.ts';

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
      const next = getNextMillis(from, { pattern, tz: timeZone });
      if (next === undefined || next > now.getTime()) break;
      last = next;
      from = next;
    }
    if (last !== undefined) return { runDate: serviceToday(new Date(last), timeZone), at: new Date(last) };
  }
  return null;
}

/**
 * The nightly trigger's schedule lives in Redis. If Redis lost it around the time it should have
 * fired, no run happens for that date and its pay dates stay unlocked: this queues the trigger for
 * the latest scheduled run date that has no run at all and has pay dates due, once the scheduled
 * trigger has had `graceMs` to start its own. Returns the run date queued, or null.
 */
export async function catchUpMissedRun(
  db: Database,
  nightly: Queue,
  options: { pattern: string; timeZone: string; now: Date; graceMs: number },
): Promise<string | null> {
  const last = lastScheduledTrigger(options.pattern, options.timeZone, options.now);
  if (!last || options.now.getTime() - last.at.getTime() < options.graceMs) return null;
  if ((await findLatestRun(db, last.runDate)) !== undefined) return null;
  if (!(await hasPayDatesDueForLock(db, last.runDate))) return null;
  const jobId = catchUpTriggerJobId(last.runDate);
  const earlier = await Job.fromId(nightly, jobId);
  if (earlier) {
    const state = await earlier.getState();
    // Still to run: nothing to add. Finished without leaving a run (it failed, or the database
    // was restored since): make room for another.
    if (state !== 'completed' && state !== 'failed') return null;
    await earlier.remove();
  }
  await nightly.add(nightlyTriggerJob, { runDate: last.runDate, trigger: 'catch_up' }, { ...defaultJobOptions, jobId });
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
export async function recoverUnfinishedRuns(
  db: Database,
  payDates: Queue,
  options: { everyRun: boolean; stuckBefore: Date },
): Promise<RunsRecovery> {
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
