import type { RedisClient } from '../../platform/runtime/redis-connections.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { JobQueue } from '../../platform/queue/queues.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import { formatCalendarDate, parseCalendarDate } from '../../directory/calendars/working-days.ts';
import { holdReasonText, lockHoldReasons } from '../../cycle/nightly/go-live-readiness.ts';
import { nextNightlyRunAt } from '../../cycle/nightly/next-nightly-run.ts';
import { findMissedScheduledRun } from '../../cycle/nightly/nightly-recovery.ts';
import { listLiveWorkers } from '../workers/worker-heartbeat.ts';
import { listTroubledEndpoints } from '../webhooks/webhook-repository.ts';
import {
  attentionGauges,
  attentionList,
  type AttentionList,
  type Counted,
  type FailedJobFact,
  type FailingEndpointFact,
  type MissedNightlyFact,
  type NotReadyPayDateFact,
} from './attention.ts';
import {
  findFailedLatestPayoutRun,
  findJobSubjectNames,
  listUnmatchedCreditsOldestFirst,
  listDuePayDatesOfPayrollsNotReady,
  listFailedPayDates,
  listFailedReconciliations,
  listPayoutsAwaitingBank,
  listRemittancesNeedingAttention,
  listStuckRuns,
} from './attention-repository.ts';
import { describeJob, jobSubjectIdSets } from './job-subject.ts';

export interface AttentionSources {
  db: Executor;
  /** Where worker heartbeats are read; without it, whether workers are alive is not asked. */
  workers?: { redis: RedisClient; prefix: string };
  /** Queues whose failed jobs count; without them, failed jobs are not asked. */
  queues?: () => Promise<readonly JobQueue[]>;
  nightlyCron: string;
  timeZone: string;
}

export interface AttentionSettings {
  /** The most items of one kind listed (the counts include the rest). */
  itemsPerKind: number;
  /** Runs started this long ago or more are history, not this morning's. */
  recentRunsMs: number;
  /** An unfinished run with no progress for this long is stuck (the watchdog recovers most within a minute). */
  stuckAfterMs: number;
  /** How long after it was due a nightly run that has not started counts as not run (the watchdog's catch-up waits 10 min). */
  nightlyGraceMs: number;
  /** Pay dates whose lock date passed up to this many days ago still count as due. */
  dueLookBackDays: number;
}

export const defaultAttentionSettings: AttentionSettings = {
  itemsPerKind: 20,
  recentRunsMs: 35 * 86_400_000,
  stuckAfterMs: 30 * 60_000,
  nightlyGraceMs: 30 * 60_000,
  dueLookBackDays: 7,
};

const nothing = <T>(): Counted<T> => ({ rows: [], total: 0 });

/** Redis answers in this time or its part of the list is reported unknown: the database's part still shows. */
export const REDIS_ANSWER_MS = 2_000;

async function orUnknown<T>(work: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), REDIS_ANSWER_MS);
  });
  try {
    return await Promise.race([work(), late]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

async function missedNightly(db: Executor, sources: AttentionSources, now: Date, graceMs: number): Promise<MissedNightlyFact | null> {
  const missed = await findMissedScheduledRun(db, { pattern: sources.nightlyCron, timeZone: sources.timeZone, now, graceMs });
  return missed ? { run_date: missed.runDate, due_at: missed.at } : null;
}

async function notReadyPayDates(db: Executor, sources: AttentionSources, now: Date, settings: AttentionSettings): Promise<Counted<NotReadyPayDateFact>> {
  const today = serviceToday(now, sources.timeZone);
  const next = nextNightlyRunAt(sources.nightlyCron, sources.timeZone, now);
  const through = next ? serviceToday(next, sources.timeZone) : today;
  const due = await listDuePayDatesOfPayrollsNotReady(db, {
    from: formatCalendarDate(parseCalendarDate(today).minus({ days: settings.dueLookBackDays })),
    through,
    limit: settings.itemsPerKind,
  });
  return {
    rows: due.rows.map((row) => ({
      payroll_id: row.payroll_id,
      employer: row.employer,
      payroll: row.payroll,
      pay_date: row.pay_date,
      lock_date: row.lock_date,
      missing: holdReasonText(lockHoldReasons(row)).replace(/^not ready: /, ''),
    })),
    total: due.total,
  };
}

async function failedJobs(db: Executor, queues: readonly JobQueue[], limit: number): Promise<Counted<FailedJobFact>> {
  const perQueue = await Promise.all(
    queues.map(async (queue) => ({
      queue: queue.name,
      jobs: (await queue.getFailed(0, limit - 1)).filter((job) => job !== undefined && job !== null),
      count: await queue.getFailedCount(),
    })),
  );
  const jobs = perQueue.flatMap(({ queue, jobs: failed }) => failed.map((job) => ({ queue, job })));
  const names = await findJobSubjectNames(db, jobSubjectIdSets(jobs.map(({ job }) => job.data)));
  const rows = jobs
    .map(({ queue, job }) => ({
      queue,
      job_id: job.id ?? '',
      description: describeJob(job.name, job.data, names),
      failed_reason: job.failedReason ?? null,
      since: new Date(job.finishedOn ?? job.timestamp),
    }))
    .sort((a, b) => a.since.getTime() - b.since.getTime())
    .slice(0, limit);
  return { rows, total: perQueue.reduce((sum, { count }) => sum + count, 0) };
}

/** The endpoints `deductions webhooks list` shows as failing or disabled, as the list's facts. */
async function failingEndpoints(db: Executor, limit: number): Promise<Counted<FailingEndpointFact>> {
  const rows = await listTroubledEndpoints(db, limit);
  return {
    rows: rows.map((row) => ({
      id: row.id,
      biller: row.biller_name,
      url: row.url,
      status: row.status,
      disabled_reason: row.disabled_reason,
      pending_deliveries: Number(row.pending_deliveries ?? 0),
      since: row.failing_since ?? row.created_at,
    })),
    total: rows[0]?.total ?? 0,
  };
}

/**
 * Everything that needs an operator now, read in parallel. A face that cannot reach Redis leaves
 * `workers` and `queues` out and gets the database's part.
 */
export async function collectAttention(sources: AttentionSources, now = new Date(), settings = defaultAttentionSettings): Promise<AttentionList> {
  const { db } = sources;
  const window = { limit: settings.itemsPerKind, since: new Date(now.getTime() - settings.recentRunsMs) };
  const [liveWorkers, missed, failedPayDates, stuckRuns, failedReconciliations, failedPayoutRun, jobs, notReady, credits, remittances, payouts, endpoints] = await Promise.all(
    [
      sources.workers ? orUnknown(async () => (await listLiveWorkers(sources.workers!.redis, sources.workers!.prefix)).length) : Promise.resolve(null),
      missedNightly(db, sources, now, settings.nightlyGraceMs),
      listFailedPayDates(db, window),
      listStuckRuns(db, { ...window, stuckBefore: new Date(now.getTime() - settings.stuckAfterMs) }),
      listFailedReconciliations(db, window),
      findFailedLatestPayoutRun(db, window),
      sources.queues ? orUnknown(async () => failedJobs(db, await sources.queues!(), settings.itemsPerKind)) : Promise.resolve(nothing<FailedJobFact>()),
      notReadyPayDates(db, sources, now, settings),
      listUnmatchedCreditsOldestFirst(db, settings.itemsPerKind),
      listRemittancesNeedingAttention(db, settings.itemsPerKind),
      listPayoutsAwaitingBank(db, settings.itemsPerKind),
      failingEndpoints(db, settings.itemsPerKind),
    ],
  );
  return attentionList(
    {
      liveWorkers: liveWorkers ?? null,
      unanswered: [...(sources.workers && liveWorkers === undefined ? ['workers' as const] : []), ...(sources.queues && jobs === undefined ? ['failed jobs' as const] : [])],
      missedNightly: missed,
      failedPayDates,
      stuckRuns,
      failedReconciliations,
      failedPayoutRun,
      failedJobs: jobs ?? nothing<FailedJobFact>(),
      notReadyPayDates: notReady,
      unmatchedCredits: credits,
      remittances,
      pendingPayouts: payouts,
      failingEndpoints: endpoints,
    },
    now,
  );
}

/** The metrics' source: every scrape reads the list afresh and exposes its counts (service-metrics.ts). */
export function attentionGaugesSource(sources: AttentionSources): () => Promise<ReturnType<typeof attentionGauges>> {
  return async () => {
    const now = new Date();
    return attentionGauges(await collectAttention(sources, now), now);
  };
}
