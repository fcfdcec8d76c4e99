import { FlowProducer, Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import type { Runtime } from '../runtime/runtime.ts';
import type { AdapterFactory } from '../payroll-providers/adapter.ts';
import { httpAdapterFactory } from '../payroll-providers/http-adapter.ts';
import { producerConnection, workerConnection } from './connections.ts';
import { createQueue, queueNames, type QueueName } from './queues.ts';
import { lockPayDateJob, nightlyRunJob, nightlyTriggerJob, rerunPayDateJob } from '../deductions/nightly-flow.ts';
import { purgeIdempotencyKeysJob, purgeIdempotencyKeysProcessor } from '../../jobs/purge-idempotency-keys.ts';
import { runPayoutsCron, runPayoutsJob, runPayoutsProcessor } from '../../jobs/run-payouts.ts';
import { lockPayDateProcessor } from '../../jobs/lock-pay-date.ts';
import { rerunPayDateProcessor } from '../../jobs/rerun-pay-date.ts';
import { nightlyRunProcessor } from '../../jobs/nightly-run.ts';
import { nightlyTriggerProcessor } from '../../jobs/nightly-trigger.ts';
import { reconcilePayDateProcessor } from '../../jobs/reconcile-pay-date.ts';
import { RECONCILE_SWEEP_CRON, reconcileSweepJob, reconcileSweepProcessor } from '../../jobs/reconcile-sweep.ts';
import { queueReconciliationRequester, reconcilePayDateJob } from '../reconciliation/reconciliation-requests.ts';
import { dispatchEventsProcessor } from '../../jobs/dispatch-events.ts';
import { deliverWebhookProcessor } from '../../jobs/deliver-webhook.ts';
import { webhookDeliverySettings, type WebhookDeliverySettings } from '../webhooks/webhook-delivery-service.ts';
import { deliverWebhookJob, dispatchEventsJob, scheduleEventDispatch, webhookBackoffStrategy } from '../webhooks/webhook-jobs.ts';

export interface WorkerHost {
  workers: Worker[];
  flows: FlowProducer;
  close(): Promise<void>;
}

export interface WorkerHostOptions {
  /** Register the recurring schedules (nightly run, purge). Tests drive runs themselves. */
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
}

type ProcessorTable = Record<string, Processor>;

/** One Worker per queue; a job's name picks its processor, an unknown name fails loudly. */
function dispatch(queue: QueueName, table: ProcessorTable): Processor {
  return async (job: Job, token?: string) => {
    const processor = table[job.name];
    if (!processor) throw new Error(`no processor for job ${job.name} on queue ${queue}`);
    return processor(job, token);
  };
}

export async function startWorkers(runtime: Runtime, options: WorkerHostOptions = {}): Promise<WorkerHost> {
  const { config, db, logger } = runtime;
  const prefix = config.QUEUE_PREFIX;
  const adapterFor = options.adapterFor ?? httpAdapterFactory();
  const flows = new FlowProducer({ connection: producerConnection(config.REDIS_URL), prefix });
  const webhookDeliveries = createQueue(queueNames.webhookDeliveries, producerConnection(config.REDIS_URL), prefix);
  const reconciliation = queueReconciliationRequester(config.REDIS_URL, prefix);
  const webhookSettings = webhookDeliverySettings(config, options.webhooks);
  const tables: Record<QueueName, { processors: ProcessorTable; concurrency: number; settings?: WorkerOptions['settings'] }> = {
    [queueNames.maintenance]: {
      processors: {
        [purgeIdempotencyKeysJob]: purgeIdempotencyKeysProcessor(db),
        [runPayoutsJob]: runPayoutsProcessor(db, config, logger),
      },
      concurrency: 1,
    },
    [queueNames.nightly]: {
      processors: {
        [nightlyTriggerJob]: nightlyTriggerProcessor(db, flows, adapterFor, config.SERVICE_TIME_ZONE, logger),
        [nightlyRunJob]: nightlyRunProcessor(),
        [reconcileSweepJob]: reconcileSweepProcessor(db, flows, config.SERVICE_TIME_ZONE),
      },
      concurrency: 1,
    },
    [queueNames.payDates]: {
      processors: { [lockPayDateJob]: lockPayDateProcessor(db, adapterFor), [rerunPayDateJob]: rerunPayDateProcessor(db, adapterFor, reconciliation), [reconcilePayDateJob]: reconcilePayDateProcessor(db, config.SERVICE_TIME_ZONE, reconciliation) },
      concurrency: options.payDateConcurrency ?? 4,
    },
    [queueNames.webhookDispatch]: {
      processors: { [dispatchEventsJob]: dispatchEventsProcessor(db, webhookDeliveries) },
      concurrency: 1,
    },
    [queueNames.webhookDeliveries]: {
      processors: { [deliverWebhookJob]: deliverWebhookProcessor(db, webhookSettings) },
      // Mostly waiting on receivers' answers, so many at once.
      concurrency: options.webhooks?.concurrency ?? 16,
      settings: { backoffStrategy: webhookBackoffStrategy(webhookSettings.retryDelayScale, webhookSettings.random) },
    },
  };

  const workers = Object.entries(tables).map(([name, { processors, concurrency, settings }]) => {
    const worker = new Worker(name, dispatch(name as QueueName, processors), {
      connection: workerConnection(config.REDIS_URL),
      prefix,
      concurrency,
      ...(settings ? { settings } : {}),
      ...(options.lockDurationMs ? { lockDuration: options.lockDurationMs } : {}),
      ...(options.stalledIntervalMs ? { stalledInterval: options.stalledIntervalMs } : {}),
    });
    worker.on('failed', (job, error) => logger.error({ queue: name, job: job?.name, jobId: job?.id, err: error }, 'job failed'));
    worker.on('error', (error) => logger.error({ queue: name, err: error }, 'worker error'));
    return worker;
  });

  if (options.schedule ?? true) await scheduleRecurringJobs(runtime);
  logger.info({ queues: Object.keys(tables), prefix }, 'workers started');

  return {
    workers,
    flows,
    async close() {
      // Let active jobs finish; BullMQ hands unfinished ones to the next worker as stalled.
      await Promise.all(workers.map((worker) => worker.close()));
      await flows.close();
      await webhookDeliveries.close();
      await reconciliation.close();
    },
  };
}

/** Job schedulers are upserted: restarting every worker process still leaves one schedule each. */
export async function scheduleRecurringJobs(runtime: Runtime): Promise<void> {
  const { config } = runtime;
  const connection = producerConnection(config.REDIS_URL);
  const maintenance = createQueue(queueNames.maintenance, connection, config.QUEUE_PREFIX);
  const nightly = createQueue(queueNames.nightly, connection, config.QUEUE_PREFIX);
  const webhookDispatch = createQueue(queueNames.webhookDispatch, connection, config.QUEUE_PREFIX);
  try {
    await scheduleEventDispatch(webhookDispatch);
    await maintenance.upsertJobScheduler(
      purgeIdempotencyKeysJob,
      { pattern: '30 3 * * *', tz: config.SERVICE_TIME_ZONE },
      { name: purgeIdempotencyKeysJob, data: {} },
    );
    await maintenance.upsertJobScheduler(
      runPayoutsJob,
      { pattern: runPayoutsCron, tz: config.SERVICE_TIME_ZONE },
      { name: runPayoutsJob, data: {} },
    );
    await nightly.upsertJobScheduler(
      nightlyTriggerJob,
      { pattern: config.NIGHTLY_CRON, tz: config.SERVICE_TIME_ZONE },
      { name: nightlyTriggerJob, data: {} },
    );
    await nightly.upsertJobScheduler(reconcileSweepJob, { pattern: RECONCILE_SWEEP_CRON, tz: config.SERVICE_TIME_ZONE }, { name: reconcileSweepJob, data: {} });
  } finally {
    await Promise.all([maintenance.close(), nightly.close(), webhookDispatch.close()]);
  }
}
