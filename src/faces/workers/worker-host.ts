import { DelayedError, Job, Worker, type Processor, type Queue, type WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import { pingDatabase } from '../../platform/db/ping.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import { pingRedis, type Runtime } from '../../platform/runtime/runtime.ts';
import { isConnectionError, monitorDependencies, type DependencyHealth } from '../../platform/runtime/dependency-health.ts';
import type { AdapterFactory } from '../../directory/payroll-providers/adapter.ts';
import { amountLimitsOf, type AmountLimits } from '../../collections/payments/amount-limits.ts';
import { httpAdapterFactory } from '../../directory/payroll-providers/http-adapter.ts';
import { providerUrlPolicy } from '../../directory/payroll-providers/provider-url-guard.ts';
import { resolveWebhookTarget, systemResolver } from '../webhooks/webhook-target.ts';
import { secretBoxFor } from '../../platform/shared/secret-box.ts';
import { closeWith, createProducerConnection, producerConnection, reportRedisErrors, workerConnection, type RedisTarget } from '../../platform/runtime/redis-connections.ts';
import {
  JOB_LOCK_DURATION_MS,
  MAX_STALLED_COUNT,
  queueNames,
  queueWorkers,
  RECONCILIATION_DEBOUNCE_MS,
  recurringSchedules,
  STALLED_INTERVAL_MS,
  type JobNameOn,
  type QueueName,
} from '../../platform/queue/job-catalogue.ts';
import { createQueue } from '../../platform/queue/queues.ts';
import { observeJobAttempt } from '../../platform/metrics/service-metrics.ts';
import { ensureSchedules } from '../../platform/queue/schedules.ts';
import { startWatchdog, type Watchdog, type WatchdogSettings } from './watchdog.ts';
import { startHeartbeat } from './worker-heartbeat.ts';
import { queueReconciliationRequester, type ReconciliationRequester } from '../../cycle/reconciliation/reconciliation-requests.ts';
import { WebhookAttemptFailed, webhookDeliverySettings, type WebhookDeliverySettings } from '../webhooks/webhook-delivery-service.ts';
import { webhookBackoffStrategy } from '../webhooks/webhook-jobs.ts';

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

/** What the host hands every processor factory: its own queues and connections, opened once per host. */
export interface ProcessorDeps {
  config: Config;
  db: Database;
  logger: Logger;
  /** Producer queues, one per queue name, on the host's connection. */
  queues: Record<QueueName, Queue>;
  adapterFor: AdapterFactory;
  reconciliation: ReconciliationRequester;
  webhookSettings: WebhookDeliverySettings;
  amountLimits: AmountLimits;
}

/** Builds a job's processor once, when the host starts. */
export type ProcessorFactory = (deps: ProcessorDeps) => Processor;
/** Runs once a job has failed for the last time; the job's name picks the handler. */
export type FinalFailureHandler = (job: Job, error: Error) => Promise<void>;

/**
 * Every job's processor, per queue and job name (the job catalogue's), plus the handlers of final
 * failures. The host takes it as a parameter so that src/ never imports jobs/: the composition
 * root (bin/composition.ts) passes jobs/index.ts's.
 */
export type ProcessorRegistry = {
  [Name in QueueName]: {
    processors: Record<JobNameOn<Name>, ProcessorFactory>;
    finalFailure?: Partial<Record<JobNameOn<Name>, (deps: ProcessorDeps) => FinalFailureHandler>>;
  };
};

/** Starts a worker host with the processors already chosen: what commands and runners are handed. */
export type StartWorkers = (runtime: Runtime, options?: WorkerHostOptions) => Promise<WorkerHost>;

/** The workers a command's jobs run on: a running host it shares, or a way to start its own (closed when it is done). */
export type WorkerSource = { workers: WorkerHost } | { startWorkers: StartWorkers };

type ProcessorTable = Record<string, Processor>;

/** A queue's processors and final-failure handlers, built once with the host's dependencies. */
function handlersOf(entry: ProcessorRegistry[QueueName], deps: ProcessorDeps): { processors: ProcessorTable; finalFailure: Record<string, FinalFailureHandler> } {
  const processors: ProcessorTable = {};
  for (const [job, factory] of Object.entries<ProcessorFactory>(entry.processors)) processors[job] = factory(deps);
  const finalFailure: Record<string, FinalFailureHandler> = {};
  for (const [job, factory] of Object.entries(entry.finalFailure ?? {})) if (factory) finalFailure[job] = factory(deps);
  return { processors, finalFailure };
}

/** Jobs at once on a queue's worker: the catalogue's, unless the options change the pay dates' or the deliveries'. */
function concurrencyOf(name: QueueName, options: WorkerHostOptions): number {
  if (name === queueNames.payDates) return options.payDateConcurrency ?? queueWorkers[name].concurrency;
  if (name === queueNames.webhookDeliveries) return options.webhooks?.concurrency ?? queueWorkers[name].concurrency;
  return queueWorkers[name].concurrency;
}

/**
 * One Worker per queue; a job's name picks its processor, an unknown name fails loudly (and, not
 * being a catalogue name, is not measured). Every attempt is timed and counted here, in one place.
 */
function dispatch(queue: QueueName, table: ProcessorTable): Processor {
  return async (job: Job, token?: string) => {
    const processor = table[job.name];
    if (!processor) throw new Error(`no processor for job ${job.name} on queue ${queue}`);
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await processor(job, token);
      observeJobAttempt(queue, job.name, 'completed', seconds());
      return result;
    } catch (error) {
      // A job put back as delayed on purpose (a webhook delivery waiting its turn) made no attempt.
      if (!(error instanceof DelayedError)) observeJobAttempt(queue, job.name, 'failed', seconds());
      throw error;
    }
  };
}

/**
 * The re-run processor asks for reconciliation through a queue of its own; it is opened on first
 * use, so a process that starts while Redis is down holds no connection that would retry unheard.
 */
export function deferredReconciliationRequester(redis: RedisTarget, prefix: string, health?: DependencyHealth): ReconciliationRequester {
  let requester: ReconciliationRequester | undefined;
  return {
    request: (payrollId, payDate) => (requester ??= queueReconciliationRequester(redis, prefix, RECONCILIATION_DEBOUNCE_MS, health)).request(payrollId, payDate),
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

export async function startWorkers(runtime: Runtime, registry: ProcessorRegistry, options: WorkerHostOptions = {}): Promise<WorkerHost> {
  const { config, db, logger } = runtime;
  const prefix = config.QUEUE_PREFIX;
  const ownHealth = runtime.health === undefined;
  const health = runtime.health ?? monitorDependencies(logger, { postgres: () => pingDatabase(db), redis: () => pingRedis(runtime.redis) });
  const adapterFor =
    options.adapterFor ??
    httpAdapterFactory({ secrets: secretBoxFor(config), urls: providerUrlPolicy(config.PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver) });
  // One producer connection for every queue the host adds to; the host closes it itself, so a
  // shutdown without Redis drops the socket instead of waiting to send QUIT.
  const producer = createProducerConnection(config);
  reportRedisErrors(producer, health);
  const queues = Object.fromEntries(Object.values(queueNames).map((name) => [name, createQueue(name, producer, prefix, health)])) as Record<QueueName, Queue>;
  const reconciliation = deferredReconciliationRequester(config, prefix, health);
  const webhookSettings = webhookDeliverySettings(config, options.webhooks);
  const deps: ProcessorDeps = { config, db, logger, queues, adapterFor, reconciliation, webhookSettings, amountLimits: amountLimitsOf(config) };
  // Delivery jobs name the webhook backoff type (job-catalogue.ts); their worker says what it means.
  const workerSettings: Partial<Record<QueueName, WorkerOptions['settings']>> = {
    [queueNames.webhookDeliveries]: { backoffStrategy: webhookBackoffStrategy(webhookSettings.retryDelayScale, webhookSettings.random) },
  };

  const workers = Object.values(queueNames).map((name) => {
    const { processors, finalFailure } = handlersOf(registry[name], deps);
    const settings = workerSettings[name];
    const connection = workerConnection(config);
    const worker = new Worker(name, dispatch(name, processors), {
      connection,
      prefix,
      concurrency: concurrencyOf(name, options),
      // Started once the database answers (below), so a worker never takes jobs it can only fail.
      autorun: false,
      lockDuration: options.lockDurationMs ?? JOB_LOCK_DURATION_MS,
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
      const handler = finalFailure[job.name];
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
    return closeWith(worker, connection);
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
  const heartbeat = await startHeartbeat(
    runtime.redis,
    prefix,
    workers.map((worker) => worker.name),
  );
  logger.info({ queues: workers.map((worker) => worker.name), prefix, schedule }, 'workers started');

  return {
    workers,
    queues,
    watchdog,
    health,
    async close() {
      closing = true;
      stopFollowingHealth();
      await heartbeat.close();
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
    Object.values(queueNames).map((name) => [name, createQueue(name, producerConnection(config), config.QUEUE_PREFIX, runtime.health)]),
  ) as Record<QueueName, Queue>;
  try {
    await ensureSchedules(queues, recurringSchedules(config));
  } finally {
    await Promise.all(Object.values(queues).map((queue) => queue.close()));
  }
}
