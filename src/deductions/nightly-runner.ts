import { Job, Queue } from 'bullmq';
import type { Runtime } from '../runtime/runtime.ts';
import { producerConnection } from '../queue/connections.ts';
import { queueNames } from '../queue/queues.ts';
import { startWorkers, type WorkerHost } from '../queue/worker-host.ts';
import { triggerNightlyRun, type NightlySummary } from './nightly-service.ts';

export interface NightlyProgress {
  done: number;
  total: number;
}

/**
 * Runs the nightly cycle for one date now and waits for it: triggers the flow, works it with
 * in-process workers (any `deductions work` processes share the load), and reports progress as
 * pay dates finish. Returns the run's summary.
 */
export async function runNightlyNow(
  runtime: Runtime,
  runDate: string,
  options: { onProgress?: (progress: NightlyProgress) => void; pollMs?: number; workers?: WorkerHost } = {},
): Promise<NightlySummary> {
  const host = options.workers ?? (await startWorkers(runtime, { schedule: false }));
  const queue = new Queue(queueNames.nightly, { connection: producerConnection(runtime.config.REDIS_URL), prefix: runtime.config.QUEUE_PREFIX });
  try {
    const trigger = await triggerNightlyRun(runtime.db, host.flows, runDate);
    for (;;) {
      const parent = await Job.fromId(queue, trigger.parentJobId);
      if (!parent) throw new Error(`nightly run ${trigger.parentJobId} disappeared from the queue`);
      const counts = await parent.getDependenciesCount();
      const unprocessed = counts.unprocessed ?? 0;
      const total = (counts.processed ?? 0) + unprocessed + (counts.ignored ?? 0) + (counts.failed ?? 0);
      options.onProgress?.({ done: total - unprocessed, total });
      const state = await parent.getState();
      // Re-read: the job object above may predate its completion and so lack the return value.
      if (state === 'completed') return (await Job.fromId(queue, trigger.parentJobId))!.returnvalue as NightlySummary;
      if (state === 'failed') throw new Error(`nightly run ${runDate} failed: ${parent.failedReason}`);
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 200));
    }
  } finally {
    await queue.close();
    if (!options.workers) await host.close();
  }
}
