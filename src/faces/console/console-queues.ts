import type { Queue } from 'bullmq';
import { queueNames, type QueueName } from '../../platform/queue/job-catalogue.ts';
import { createQueue } from '../../platform/queue/queues.ts';
import { producerConnection, type RedisTarget } from '../../platform/runtime/redis-connections.ts';

/**
 * The console's handles on the job queues (failed jobs, re-runs, the queues board), opened on first
 * use: a process that never serves those pages opens no connection for them.
 */
export class ConsoleQueues {
  private readonly open = new Map<QueueName, Queue>();

  constructor(
    private readonly redis: RedisTarget,
    private readonly prefix: string,
  ) {}

  async queue(name: QueueName): Promise<Queue> {
    let queue = this.open.get(name);
    if (!queue) {
      queue = createQueue(name, producerConnection(this.redis), this.prefix);
      this.open.set(name, queue);
    }
    // A producer connection refuses commands until it is ready (no offline queue).
    await queue.waitUntilReady();
    return queue;
  }

  async all(): Promise<Queue[]> {
    return Promise.all(Object.values(queueNames).map((name) => this.queue(name)));
  }

  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map((queue) => queue.close()));
    this.open.clear();
  }
}

export function isQueueName(name: string): name is QueueName {
  return (Object.values(queueNames) as string[]).includes(name);
}
