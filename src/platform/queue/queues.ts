import { Queue, type ConnectionOptions } from 'bullmq';
import type { DependencyHealth } from '../runtime/dependency-health.ts';
import { reportRedisErrors } from '../runtime/redis-connections.ts';
import { defaultJobOptions, type QueueName } from './job-catalogue.ts';

/** A producer queue; with a health monitor, its connection errors are reported rather than printed. */
export function createQueue(name: QueueName, connection: ConnectionOptions, prefix: string, health?: DependencyHealth): Queue {
  const queue = new Queue(name, { connection, prefix, defaultJobOptions });
  reportRedisErrors(queue, health);
  return queue;
}
