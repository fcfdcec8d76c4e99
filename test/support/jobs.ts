import { Worker, type Job, type Queue } from 'bullmq';
import { workerConnection } from '../../src/platform/runtime/redis-connections.ts';

/**
 * Adds a job and runs it once on a worker of its own whose processor throws `reason`: a real job
 * failed for good in Redis, as one looks after its attempts ran out while something was down.
 */
export async function failedJob(
  queue: Queue,
  redisUrl: string,
  name: string,
  data: Record<string, unknown>,
  reason = `no processor for ${name}`,
  jobId?: string,
): Promise<Job> {
  const job = await queue.add(name, data, { attempts: 1, ...(jobId ? { jobId } : {}) });
  const worker = new Worker(
    queue.name,
    async () => {
      throw new Error(reason);
    },
    { connection: workerConnection(redisUrl), prefix: queue.opts.prefix, autorun: false },
  );
  const failed = new Promise<void>((resolve) => worker.on('failed', (done) => done?.id === job.id && resolve()));
  void worker.run();
  await failed;
  await worker.close();
  if ((await job.getState()) !== 'failed') throw new Error(`job ${job.id} did not fail`);
  return job;
}
