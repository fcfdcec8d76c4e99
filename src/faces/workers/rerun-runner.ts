import { QueueEvents, type Job } from 'bullmq';
import type { Database } from '../../platform/db/connection.ts';
import type { Runtime } from '../../platform/runtime/runtime.ts';
import { closeWith, producerConnection, workerConnection } from '../../platform/runtime/redis-connections.ts';
import { defaultJobOptions, queueNames, rerunJobId, rerunPayDateJob } from '../../platform/queue/job-catalogue.ts';
import { enqueueJob } from '../../platform/queue/job-contract.ts';
import { createQueue, type JobQueue } from '../../platform/queue/queues.ts';
import type { WorkerSource } from './worker-host.ts';
import { findRerun } from '../../cycle/reruns/rerun-repository.ts';
import type { PayDateState } from '../../cycle/reruns/rerun-confirmation.ts';
import { requestRerun, type RerunOutcome, type RerunRequest } from '../../cycle/reruns/rerun-service.ts';

export interface RerunResult extends RerunOutcome {
  /** This request joined a re-run others had asked for; `requests` names them all. */
  joined: boolean;
  /** Where the pay date was when asked (a reconciled or paid-out one was re-run because the asker confirmed it). */
  payDateState?: PayDateState;
}

/**
 * Queues the open re-run's job. The job id is the re-run's, so every request that joined it adds
 * one job. The database decides whether the re-run is done: a job Redis remembers as finished while
 * the re-run is still open (it failed for good, or Redis outlived a database restore) runs again,
 * with every attempt, for the requests now waiting on it.
 */
export async function enqueueRerun(queue: JobQueue, db: Database, rerunId: string): Promise<Job> {
  const job = await enqueueJob(queue, rerunPayDateJob, { rerunId }, { ...defaultJobOptions, jobId: rerunJobId(rerunId) });
  const state = await job.getState();
  if (state !== 'failed' && state !== 'completed') return job;
  const rerun = await findRerun(db, rerunId);
  if (rerun?.completed_at) return job;
  try {
    await job.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
  } catch (error) {
    // Another request retried it first; it is on its way again either way.
    if ((await job.getState()) === state) throw error;
  }
  return job;
}

/**
 * Records the request against the pay date's open re-run (see requestRerun), queues that re-run's
 * job and waits for it (on the given host's workers, or its own, started with `startWorkers`): a
 * request that joined another operator's re-run gets the same outcome.
 */
export async function runRerunNow(runtime: Runtime, request: RerunRequest, options: WorkerSource): Promise<RerunResult> {
  const recorded = await requestRerun(runtime.db, request);
  const { QUEUE_PREFIX } = runtime.config;
  // A lost connection fails the awaited calls below, which the command reports in one line; without a
  // listener BullMQ would also print each connection error's stack (createQueue gives the queue one).
  const queue = createQueue(queueNames.payDates, producerConnection(runtime.config), QUEUE_PREFIX);
  const eventsConnection = workerConnection(runtime.config);
  const events = closeWith(new QueueEvents(queueNames.payDates, { connection: eventsConnection, prefix: QUEUE_PREFIX }), eventsConnection);
  events.on('error', () => {});
  const host = 'workers' in options ? options.workers : await options.startWorkers(runtime, { schedule: false });
  try {
    await events.waitUntilReady();
    const job = await enqueueRerun(queue, runtime.db, recorded.id);
    const outcome = (await job.waitUntilFinished(events, 120_000)) as RerunOutcome;
    return { ...outcome, joined: recorded.joined, payDateState: recorded.payDateState };
  } finally {
    if (!('workers' in options)) await host.close();
    await Promise.all([queue.close(), events.close()]);
  }
}
