import { Queue, type ConnectionOptions } from 'bullmq';
import type { DependencyHealth } from '../runtime/dependency-health.ts';
import { closeWith, reportRedisErrors } from '../runtime/redis-connections.ts';
import { defaultJobOptions, type QueueName } from './job-catalogue.ts';

/**
 * A producer queue, as areas hold it: they add jobs through enqueueJob (job-contract.ts), never with
 * BullMQ's own calls, and only src/platform/queue, the workers, the console and jobs/ import BullMQ
 * (test/architecture holds them to it).
 */
export type JobQueue = Queue;
/** A producer queue per queue name: what a worker host, or a process that adds to several queues, holds. */
export type JobQueues = Record<QueueName, JobQueue>;

/**
 * A producer queue; with a health monitor, its connection errors are reported rather than printed.
 * A cluster client made for it by producerConnection is closed with it; a client the caller shares
 * between queues (a Redis or Cluster instance of its own) stays the caller's to close.
 */
export function createQueue(name: QueueName, connection: ConnectionOptions, prefix: string, health?: DependencyHealth): JobQueue {
  const queue = new Queue(name, { connection, prefix, defaultJobOptions });
  reportRedisErrors(queue, health);
  return closeWith(queue, connection);
}
