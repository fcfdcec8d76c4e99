import { Worker, type Job, type Processor } from 'bullmq';
import type { Runtime } from '../runtime/runtime.ts';
import { producerConnection, workerConnection } from './connections.ts';
import { createQueue, queueNames, type QueueName } from './queues.ts';
import { purgeIdempotencyKeysJob, purgeIdempotencyKeysProcessor } from '../../jobs/purge-idempotency-keys.ts';

export interface WorkerHost {
  workers: Worker[];
  close(): Promise<void>;
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

export async function startWorkers(runtime: Runtime): Promise<WorkerHost> {
  const { config, db, logger } = runtime;
  const prefix = config.QUEUE_PREFIX;
  const tables: Record<QueueName, { processors: ProcessorTable; concurrency: number }> = {
    [queueNames.maintenance]: {
      processors: { [purgeIdempotencyKeysJob]: purgeIdempotencyKeysProcessor(db) },
      concurrency: 1,
    },
  };

  const workers = Object.entries(tables).map(([name, { processors, concurrency }]) => {
    const worker = new Worker(name, dispatch(name as QueueName, processors), {
      connection: workerConnection(config.REDIS_URL),
      prefix,
      concurrency,
    });
    worker.on('failed', (job, error) => logger.error({ queue: name, job: job?.name, jobId: job?.id, err: error }, 'job failed'));
    worker.on('error', (error) => logger.error({ queue: name, err: error }, 'worker error'));
    return worker;
  });

  await scheduleRecurringJobs(runtime);
  logger.info({ queues: Object.keys(tables), prefix }, 'workers started');

  return {
    workers,
    async close() {
      // Let active jobs finish; BullMQ puts unfinished ones back as stalled for the next worker.
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}

/** Job schedulers are upserted: restarting every worker process still leaves one schedule each. */
export async function scheduleRecurringJobs(runtime: Runtime): Promise<void> {
  const { config } = runtime;
  const maintenance = createQueue(queueNames.maintenance, producerConnection(config.REDIS_URL), config.QUEUE_PREFIX);
  try {
    await maintenance.upsertJobScheduler(
      purgeIdempotencyKeysJob,
      { pattern: '30 3 * * *', tz: config.SERVICE_TIME_ZONE },
      { name: purgeIdempotencyKeysJob, data: {} },
    );
  } finally {
    await maintenance.close();
  }
}
