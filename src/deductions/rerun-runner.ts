import { Queue, QueueEvents } from 'bullmq';
import type { Runtime } from '../runtime/runtime.ts';
import { producerConnection, workerConnection } from '../queue/connections.ts';
import { defaultJobOptions, queueNames } from '../queue/queues.ts';
import { startWorkers, type WorkerHost } from '../queue/worker-host.ts';
import { rerunJobId, rerunPayDateJob } from './nightly-flow.ts';
import { requestRerun, type RerunOutcome, type RerunRequest } from './rerun-service.ts';

/** Records the re-run, queues its job (id per re-run, so a double enqueue is one job) and waits. */
export async function runRerunNow(runtime: Runtime, request: RerunRequest, options: { workers?: WorkerHost } = {}): Promise<RerunOutcome> {
  const rerun = await requestRerun(runtime.db, request);
  const { REDIS_URL, QUEUE_PREFIX } = runtime.config;
  const queue = new Queue(queueNames.payDates, { connection: producerConnection(REDIS_URL), prefix: QUEUE_PREFIX });
  const events = new QueueEvents(queueNames.payDates, { connection: workerConnection(REDIS_URL), prefix: QUEUE_PREFIX });
  const host = options.workers ?? (await startWorkers(runtime, { schedule: false }));
  try {
    await events.waitUntilReady();
    const job = await queue.add(rerunPayDateJob, { rerunId: rerun.id }, { ...defaultJobOptions, jobId: rerunJobId(rerun.id) });
    return (await job.waitUntilFinished(events, 120_000)) as RerunOutcome;
  } finally {
    if (!options.workers) await host.close();
    await Promise.all([queue.close(), events.close()]);
  }
}
