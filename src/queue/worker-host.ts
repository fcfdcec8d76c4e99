import { Job, Worker, type Processor, type Queue, type WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import { sql } from 'kysely';
import { pingRedis, type Runtime } from '../runtime/runtime.ts';
import { isConnectionError, monitorDependencies, type DependencyHealth } from '../runtime/dependency-health.ts';
import type { AdapterFactory } from '../payroll-providers/adapter.ts';
import { amountLimitsOf } from '../payments/amount-limits.ts';
import { httpAdapterFactory } from '../payroll-providers/http-adapter.ts';
import { secretBoxFor } from '../shared/secret-box.ts';
import { createProducerConnection, producerConnection, reportRedisErrors, workerConnection } from './connections.ts';
import { createQueue, LOCK_DURATION_MS, MAX_STALLED_COUNT, queueNames, STALLED_INTERVAL_MS, type QueueName } from './queues.ts';
import { ensureSchedules, recurringSchedules } from './schedules.ts';
import { startWatchdog, type Watchdog, type WatchdogSettings } from './watchdog.ts';
import { lockPayDateJob, nightlyTriggerJob, rerunPayDateJob } from '../nightly/nightly-flow.ts';
import { purgeIdempotencyKeysJob, purgeIdempotencyKeysProcessor } from '../../jobs/purge-idempotency-keys.ts';
import { runPayoutsJob, runPayoutsProcessor } from '../../jobs/run-payouts.ts';
import { lockPayDateFailedForGood, lockPayDateProcessor } from '../../jobs/lock-pay-date.ts';
import { rerunPayDateProcessor } from '../../jobs/rerun-pay-date.ts';
import { nightlyTriggerProcessor } from '../../jobs/nightly-trigger.ts';
import { reconcilePayDateProcessor } from '../../jobs/reconcile-pay-date.ts';
import { reconcileSweepJob, reconcileSweepProcessor } from '../../jobs/reconcile-sweep.ts';
import {
  queueReconciliationRequester,
  RECONCILIATION_DEBOUNCE_MS,
  reconcilePayDateJob,
  type ReconciliationRequester,
} from '../reconciliation/reconciliation-requests.ts';
import { dispatchEventsProcessor } from '../../jobs/dispatch-events.ts';
import { deliverWebhookProcessor } from '../../jobs/deliver-webhook.ts';
import { WebhookAttemptFailed, webhookDeliverySettings, type WebhookDeliverySettings } from '../webhooks/webhook-delivery-service.ts';
import { deliverWebhookJob, dispatchEventsJob, webhookBackoffStrategy } from '../webhooks/webhook-jobs.ts';

export interface WorkerHost {
  workers: Worker[];
  /** Producer queues, one per queue name, on connections the host owns. */
  queues: Record<QueueName, Queue>;
  watchdog: Watchdog;
  health: DependencyHealth;
  close(): Promise<void>;
}

export interface WorkerHostOptions {
  /** Keep the recurring schedules (nightly run, payouts, sweep, purge) and catch up missed runs. Tests drive runs themselves. */
  schedule?: boolean;
  /** Pay-date jobs in parallel; Postgres does the heavy lifting, so a few per core. */
  payDateConcurrency?: number;
  /** How long a job's lock lives without renewal; a crashed worker's job is retried after it. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Reaches providers' APIs (calendar sync, employee pushes); the real HTTP adapter by default. */
  adapterFor?: AdapterFactory;
  /** Webhook delivery: concurrency, and for tests a scaled retry schedule, timeout or DNS resolver. */
  webhooks?: Partial<Omit<WebhookDeliverySettings, 'allowPrivate'>> & { concurrency?: number };
  /** The watchdog's timings; tests shorten them. */
  watchdog?: Partial<Omit<WatchdogSettings, 'schedules'>>;
}

type ProcessorTable = Record<string, Processor>;
/** Runs once a job has failed for the last time; the job's name picks the handler. */
type FinalFailureHandler = (job: Job, error: Error) => Promise<void>;

/** One Worker per queue; a job's name picks its processor, an unknown name fails loudly. */
function dispatch(queue: QueueName, table: ProcessorTable): Processor {
  return async (job: Job, token?: string) => {
    const processor = table[job.name];
    if (!processor) throw new Error(`no processor for job ${job.name} on queue ${queue}`);
    return processor(job, token);
  };
}

/**
 * The re-run processor asks for reconciliation through a queue of its own; it is opened on first
 * use, so a process that starts while Redis is down holds no connection that would retry unheard.
 */
export function deferredReconciliationRequester(redisUrl: string, prefix: string, health?: DependencyHealth): ReconciliationRequester {
  let requester: ReconciliationRequester | undefined;
  return {
    request: (payrollId, payDate) =>
      (requester ??= queueReconciliationRequester(redisUrl, prefix, RECONCILIATION_DEBOUNCE_MS, health)).request(payrollId, payDate),
    close: async () => requester?.close(),
  };
}

/** Whether BullMQ will try the job again after this failure (its 'failed' event fires for every attempt). */
function willRetry(job: Job, error: Error): boolean {
  if (error.name === 'UnrecoverableError' || typeof job.finishedOn === 'number') return false;
  return job.attemptsMade < (job.opts.attempts ?? 1);
}

/**
 * One line per failed attempt, saying which attempt of how many and whether another follows: a
 * transient failure (a warning, with when the retry comes) and a final one (an error, with the
 * stack once) look different.
 */
export function logJobFailure(logger: Logger, queue: QueueName, job: Job, error: Error): void {
  const attempts = job.opts.attempts ?? 1;
  const context = { queue, job: job.name, jobId: job.id, attempt: job.attemptsMade, attempts };
  if (willRetry(job, error)) {
    const retryInMs = job.delay > 0 ? job.delay : 0;
    logger.warn(
      { ...context, willRetry: true, retryInMs, error: error.message },
      `job failed (attempt ${job.attemptsMade} of ${attempts}); retrying in ${(retryInMs / 1000).toFixed(1)} s`,
    );
  } else {
    logger.error({ ...context, willRetry: false, err: error }, `job failed (attempt ${job.attemptsMade} of ${attempts}); final, not retried`);
  }
}

export async function startWorkers(runtime: Runtime, options: WorkerHostOptions = {}): Promise<WorkerHost> {
  const { config, db, logger } = runtime;
  const prefix = config.QUEUE_PREFIX;
  const ownHealth = runtime.health === undefined;
  const health =
    runtime.health ?? monitorDependencies(logger, { postgres: () => sql`select 1`.execute(db), redis: () => pingRedis(runtime.redis) });
  const adapterFor = options.adapterFor ?? httpAdapterFactory({ secrets: secretBoxFor(config) });
  // One producer connection for every queue the host adds to; the host closes it itself, so a
  // shutdown without Redis drops the socket instead of waiting to send QUIT.
  const producer = createProducerConnection(config.REDIS_URL);
  reportRedisErrors(producer, health);
  const queues = Object.fromEntries(Object.values(queueNames).map((name) => [name, createQueue(name, producer, prefix, health)])) as Record<
    QueueName,
    Queue
  >;
  const reconciliation = deferredReconciliationRequester(config.REDIS_URL, prefix, health);
  const webhookSettings = webhookDeliverySettings(config, options.webhooks);
  const amountLimits = amountLimitsOf(config);
  const tables: Record<
    QueueName,
    { processors: ProcessorTable; concurrency: number; settings?: WorkerOptions['settings']; finalFailure?: Record<string, FinalFailureHandler> }
  > = {
    [queueNames.maintenance]: {
      processors: {
        [purgeIdempotencyKeysJob]: purgeIdempotencyKeysProcessor(db),
        [runPayoutsJob]: runPayoutsProcessor(db, config, logger),
      },
      concurrency: 1,
    },
    [queueNames.nightly]: {
      processors: {
        [nightlyTriggerJob]: nightlyTriggerProcessor(db, queues['pay-dates'], adapterFor, config.SERVICE_TIME_ZONE, logger),
        [reconcileSweepJob]: reconcileSweepProcessor(db, queues['pay-dates'], config.SERVICE_TIME_ZONE),
      },
      concurrency: 1,
    },
    [queueNames.payDates]: {
      processors: {
        [lockPayDateJob]: lockPayDateProcessor(db, adapterFor, amountLimits),
        [rerunPayDateJob]: rerunPayDateProcessor(db, adapterFor, reconciliation, amountLimits),
        [reconcilePayDateJob]: reconcilePayDateProcessor(db, config.SERVICE_TIME_ZONE, reconciliation),
      },
      concurrency: options.payDateConcurrency ?? 4,
      finalFailure: { [lockPayDateJob]: lockPayDateFailedForGood(db) },
    },
    [queueNames.webhookDispatch]: {
      processors: { [dispatchEventsJob]: dispatchEventsProcessor(db, queues['webhook-deliveries']) },
      concurrency: 1,
    },
    [queueNames.webhookDeliveries]: {
      processors: { [deliverWebhookJob]: deliverWebhookProcessor(db, webhookSettings) },
      // Mostly waiting on receivers' answers, so many at once.
      concurrency: options.webhooks?.concurrency ?? 16,
      settings: { backoffStrategy: webhookBackoffStrategy(webhookSettings.retryDelayScale, webhookSettings.random) },
    },
  };

  const workers = Object.entries(tables).map(([key, { processors, concurrency, settings, finalFailure }]) => {
    const name = key as QueueName;
    const worker = new Worker(name, dispatch(name, processors), {
      connection: workerConnection(config.REDIS_URL),
      prefix,
      concurrency,
      // Started once the database answers (below), so a worker never takes jobs it can only fail.
      autorun: false,
      lockDuration: options.lockDurationMs ?? LOCK_DURATION_MS,
      stalledInterval: options.stalledIntervalMs ?? STALLED_INTERVAL_MS,
      maxStalledCount: MAX_STALLED_COUNT,
      ...(settings ? { settings } : {}),
    });
    worker.on('failed', (job, error) => {
      // A receiver that refuses a webhook says nothing of our own dependencies.
      if (isConnectionError(error) && !(error instanceof WebhookAttemptFailed)) {
        health.noteFailure('postgres', error);
        health.noteFailure('redis', error);
      }
      if (!job) {
        logger.error({ queue: name, err: error }, 'job failed for good and was removed');
        return;
      }
      logJobFailure(logger, name, job, error);
      const handler = finalFailure?.[job.name];
      if (handler && !willRetry(job, error)) {
        // If this write fails too, the watchdog finds the failed job and records it.
        handler(job, error).catch((cause: unknown) => logger.warn({ queue: name, jobId: job.id, err: cause }, 'could not record a final job failure'));
      }
    });
    worker.on('stalled', (jobId) => {
      void Job.fromId(queues[name], jobId).then(
        (job) =>
          logger.warn(
            { event: 'job_stalled', queue: name, job: job?.name, jobId, stalledCount: job?.stalledCounter },
            'job recovered from a worker that stopped renewing its lock; queued for another worker',
          ),
        () => logger.warn({ event: 'job_stalled', queue: name, jobId }, 'job recovered from a worker that stopped renewing its lock'),
      );
    });
    reportRedisErrors(worker, health, (error) => logger.warn({ queue: name, error: error.message }, 'worker error'));
    return worker;
  });

  // Work while the database answers: pause every worker while it is down (an attempt would only
  // fail, and burn one of the job's retries), resume when it is back.
  let closing = false;
  const setRunning = (postgresUp: boolean) => {
    for (const worker of workers) {
      if (closing) return;
      if (postgresUp && worker.isPaused()) {
        // Resumes the main loop, or starts it again if it ended while paused.
        void worker.resume();
      } else if (postgresUp && !worker.isRunning()) {
        worker.run().catch((error: unknown) => logger.error({ queue: worker.name, err: error }, 'worker stopped'));
      } else if (!postgresUp && worker.isRunning() && !worker.isPaused()) {
        void worker.pause(true);
      }
    }
  };
  const stopFollowingHealth = health.onChange((dependency, status) => {
    if (dependency === 'postgres') setRunning(status === 'up');
  });
  if (health.isUp('postgres')) setRunning(true);

  const schedule = options.schedule ?? true;
  const watchdog = startWatchdog({ config, db, redis: runtime.redis, queues, health, logger }, { ...options.watchdog, schedules: schedule });
  logger.info({ queues: Object.keys(tables), prefix, schedule }, 'workers started');

  return {
    workers,
    queues,
    watchdog,
    health,
    async close() {
      closing = true;
      stopFollowingHealth();
      await watchdog.close();
      // Let active jobs finish; BullMQ hands unfinished ones to the next worker as stalled. With
      // Redis down a job could not be finished anyway, and a worker would wait for Redis to close.
      const redisDown = !health.isUp('redis');
      await Promise.all(workers.map((worker) => worker.close(redisDown)));
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
      if (producer.status === 'ready') await producer.quit().catch(() => producer.disconnect());
      else producer.disconnect();
      await reconciliation.close();
      if (ownHealth) health.close();
    },
  };
}

/** Job schedulers are upserted: restarting every worker process still leaves one schedule each. */
export async function scheduleRecurringJobs(runtime: Runtime): Promise<void> {
  const { config } = runtime;
  const queues = Object.fromEntries(
    Object.values(queueNames).map((name) => [name, createQueue(name, producerConnection(config.REDIS_URL), config.QUEUE_PREFIX, runtime.health)]),
  ) as Record<QueueName, Queue>;
  try {
    await ensureSchedules(queues, recurringSchedules(config));
  } finally {
    await Promise.all(Object.values(queues).map((queue) => queue.close()));
  }
}
