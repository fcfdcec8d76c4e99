import type { RedisClient } from '../../platform/runtime/redis-connections.ts';
import type { Logger } from 'pino';
import type { Config } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import {
  catchUpMissedRun,
  PAST_RUN_LOOK_BACK_DAYS,
  recoverPastRunPayDates,
  recoverUnfinishedRuns,
  retryPayDatesNowReady,
  type PastRunsRecovery,
  type RunsRecovery,
} from '../../cycle/nightly/nightly-recovery.ts';
import { isConnectionError, type DependencyHealth } from '../../platform/runtime/dependency-health.ts';
import { requestDispatchOfStaleEvents, requeueLostDeliveries } from '../webhooks/webhook-jobs.ts';
import { recurringSchedules } from '../../platform/queue/job-catalogue.ts';
import type { JobQueues } from '../../platform/queue/queues.ts';
import { ensureSchedules } from '../../platform/queue/schedules.ts';

export interface WatchdogSettings {
  /** How often it looks. */
  intervalMs: number;
  /**
   * An unfinished nightly run that has resolved no pay date for this long has its jobs checked; so,
   * whatever the run's progress, do the pending pay dates of a past run date started this long ago.
   */
  stuckAfterMs: number;
  /** How many days back those past run dates go. */
  pastRunLookBackDays: number;
  /** An outbox event undispatched for this long means the dispatcher is not running: ask for it. */
  undispatchedAfterMs: number;
  /** Keep the job schedulers and catch up a nightly run that never started (the `work` process). */
  schedules: boolean;
  /** How long after the nightly cron time a missing run counts as missed. */
  catchUpGraceMs: number;
  now: () => Date;
}

export const defaultWatchdogSettings: WatchdogSettings = {
  intervalMs: 30_000,
  stuckAfterMs: 60_000,
  pastRunLookBackDays: PAST_RUN_LOOK_BACK_DAYS,
  undispatchedAfterMs: 30_000,
  schedules: true,
  catchUpGraceMs: 10 * 60_000,
  now: () => new Date(),
};

export interface WatchdogDeps {
  config: Pick<Config, 'QUEUE_PREFIX' | 'NIGHTLY_CRON' | 'SERVICE_TIME_ZONE'>;
  db: Database;
  /** A producer connection: the sentinel key lives here. */
  redis: RedisClient;
  queues: JobQueues;
  health: DependencyHealth;
  logger: Logger;
}

export interface WatchdogTick {
  skipped: boolean;
  /** Redis had lost its data since the last look (the sentinel key was gone). */
  redisDataLost: boolean;
  schedulersWritten: string[];
  runs: RunsRecovery;
  /** Pending pay dates of past run dates (the look-back) without a live job. */
  pastRunPayDates: PastRunsRecovery;
  catchUpRunDate: string | null;
  /** Pay dates a run skipped, their payroll not ready then, queued to lock now that it is. */
  payDatesNowReady: number;
  dispatchRequested: boolean;
  deliveriesRequeued: number;
}

export interface Watchdog {
  /** One look now (waits for a look already under way, then makes its own). */
  tick(): Promise<WatchdogTick>;
  close(): Promise<void>;
}

const noRuns: RunsRecovery = { runsChecked: 0, runsFinished: 0, requeued: 0, failuresRecorded: 0 };
const noPastRunPayDates: PastRunsRecovery = { requeued: 0, failuresRecorded: 0 };

/**
 * The database is the source of truth; Redis holds the jobs that carry it out and can lose them
 * (a restart without persistence, a failover, a flush). Periodically, and whenever Redis or the
 * database comes back, the watchdog puts back what Redis should hold:
 *
 * - the job schedulers (nightly trigger, payouts, reconciliation sweep, webhook dispatch, purge),
 *   re-created when missing;
 * - a lock job for every pending pay date of an unfinished nightly run, when that run has stopped
 *   making progress or Redis lost its data (and the run finished once nothing is pending), and
 *   whatever its progress for one of a past run date (the last week) that is still unlocked, unless
 *   its lock is recorded as failed: that is left for an operator;
 * - a lock job for every pay date a run skipped because its payroll was not ready, once it is (an
 *   operator set its collection account, its employer opted in), in the run that skipped it;
 * - the nightly trigger of a run date whose scheduled trigger never ran;
 * - a dispatcher run when outbox events wait too long, and after a loss of data a job for every
 *   pending webhook delivery whose job is gone.
 *
 * A loss of data is told by a sentinel key the watchdog keeps in the queue prefix: it is there
 * until Redis forgets everything. Every action is idempotent, so several worker processes may
 * each run a watchdog.
 */
export function startWatchdog(deps: WatchdogDeps, overrides: Partial<WatchdogSettings> = {}): Watchdog {
  const settings = { ...defaultWatchdogSettings, ...overrides };
  const { db, redis, queues, health, logger, config } = deps;
  const schedules = recurringSchedules(config);
  const sentinelKey = `${config.QUEUE_PREFIX}:watchdog-sentinel`;
  const token = `${process.pid}.${crypto.randomUUID()}`;
  let firstLook = true;
  // Set when a loss of data is seen, cleared once a full recovery has completed.
  let recoveryOwed = false;
  let running: Promise<WatchdogTick> | null = null;
  let closed = false;

  async function look(): Promise<WatchdogTick> {
    const result: WatchdogTick = {
      skipped: false,
      redisDataLost: false,
      schedulersWritten: [],
      runs: noRuns,
      pastRunPayDates: noPastRunPayDates,
      catchUpRunDate: null,
      payDatesNowReady: 0,
      dispatchRequested: false,
      deliveriesRequeued: 0,
    };
    // While a dependency is down the health monitor has said so once; looking would only fail.
    if (!health.isUp('redis') || !health.isUp('postgres')) return { ...result, skipped: true };
    const now = settings.now();

    const sentinelWasMissing = (await redis.set(sentinelKey, token, 'NX')) === 'OK';
    if (sentinelWasMissing) {
      recoveryOwed = true;
      // At a process's first look a missing sentinel may just mean a new installation.
      if (!firstLook) {
        result.redisDataLost = true;
        logger.warn({ event: 'redis_data_lost', prefix: config.QUEUE_PREFIX }, 'redis lost its data; recovering schedules and jobs from the database');
      }
    }

    if (settings.schedules) {
      result.schedulersWritten = await ensureSchedules(queues, schedules, { onlyMissing: true });
      if (result.schedulersWritten.length > 0 && !firstLook) {
        logger.warn({ event: 'schedulers_recreated', schedulers: result.schedulersWritten }, 'job schedulers were missing from redis; re-created');
      }
    }

    result.runs = await recoverUnfinishedRuns(db, queues['pay-dates'], {
      everyRun: recoveryOwed,
      stuckBefore: new Date(now.getTime() - settings.stuckAfterMs),
    });
    if (result.runs.requeued > 0 || result.runs.failuresRecorded > 0) {
      logger.warn(
        { event: 'nightly_jobs_recovered', ...result.runs },
        `nightly run pay dates without a live job: ${result.runs.requeued} queued again, ${result.runs.failuresRecorded} recorded as failed`,
      );
    }

    result.pastRunPayDates = await recoverPastRunPayDates(db, queues['pay-dates'], {
      today: serviceToday(now, config.SERVICE_TIME_ZONE),
      startedBefore: new Date(now.getTime() - settings.stuckAfterMs),
      lookBackDays: settings.pastRunLookBackDays,
    });
    if (result.pastRunPayDates.requeued > 0 || result.pastRunPayDates.failuresRecorded > 0) {
      logger.warn(
        { event: 'past_run_pay_dates_recovered', ...result.pastRunPayDates },
        `unlocked pay dates of past run dates without a live job: ${result.pastRunPayDates.requeued} queued again, ${result.pastRunPayDates.failuresRecorded} recorded as failed`,
      );
    }

    result.payDatesNowReady = await retryPayDatesNowReady(db, queues['pay-dates'], {
      today: serviceToday(now, config.SERVICE_TIME_ZONE),
      lookBackDays: settings.pastRunLookBackDays,
    });
    if (result.payDatesNowReady > 0) {
      logger.info({ event: 'skipped_pay_dates_retried', count: result.payDatesNowReady }, 'pay dates skipped while their payroll was not ready are ready now; queued to lock');
    }

    if (settings.schedules) {
      result.catchUpRunDate = await catchUpMissedRun(db, queues.nightly, {
        pattern: config.NIGHTLY_CRON,
        timeZone: config.SERVICE_TIME_ZONE,
        now,
        graceMs: settings.catchUpGraceMs,
      });
      if (result.catchUpRunDate) {
        logger.warn({ event: 'nightly_run_caught_up', runDate: result.catchUpRunDate }, 'no nightly run started for the last scheduled date; triggered one');
      }
    }

    result.dispatchRequested = await requestDispatchOfStaleEvents(db, queues['webhook-dispatch'], new Date(now.getTime() - settings.undispatchedAfterMs));
    if (recoveryOwed) {
      result.deliveriesRequeued = await requeueLostDeliveries(db, queues['webhook-deliveries']);
      if (result.deliveriesRequeued > 0) {
        logger.warn({ event: 'webhook_deliveries_recovered', count: result.deliveriesRequeued }, 'admitted webhook deliveries without a job queued again');
      }
    }
    recoveryOwed = false;
    firstLook = false;
    return result;
  }

  async function guardedLook(): Promise<WatchdogTick> {
    try {
      return await look();
    } catch (error) {
      if (isConnectionError(error)) {
        health.noteFailure('redis', error);
        health.noteFailure('postgres', error);
      } else {
        logger.error({ err: error }, 'watchdog look failed');
      }
      return {
        skipped: true,
        redisDataLost: false,
        schedulersWritten: [],
        runs: noRuns,
        pastRunPayDates: noPastRunPayDates,
        catchUpRunDate: null,
        payDatesNowReady: 0,
        dispatchRequested: false,
        deliveriesRequeued: 0,
      };
    }
  }

  function tick(): Promise<WatchdogTick> {
    const previous = running ?? Promise.resolve(undefined);
    const next: Promise<WatchdogTick> = previous.then(() => guardedLook());
    running = next;
    void next.finally(() => {
      if (running === next) running = null;
    });
    return next;
  }

  const timer = setInterval(() => {
    if (!running && !closed) void tick();
  }, settings.intervalMs);
  timer.unref();
  // A dependency that comes back, or a Redis connection that reconnects (a restart quick enough
  // for no probe to see it down), is the moment something may have been lost: look at once.
  const stopListening = health.onChange((_dependency, status) => {
    if (status === 'up' && !closed) void tick();
  });
  const onRedisReady = () => {
    if (!closed && health.isUp('redis')) void tick();
  };
  redis.on('ready', onRedisReady);
  if (health.isUp('redis') && health.isUp('postgres')) void tick();

  return {
    tick,
    async close() {
      closed = true;
      clearInterval(timer);
      stopListening();
      redis.off('ready', onRedisReady);
      await running;
    },
  };
}
