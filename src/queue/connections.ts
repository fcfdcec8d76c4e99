import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * BullMQ's production guide: workers block on Redis and must never give up a command
 * (maxRetriesPerRequest null); producers and request paths must fail fast rather than queue
 * commands while Redis is away (enableOfflineQueue false). Passing options rather than a shared
 * instance lets each Queue/Worker own, and close, its connection.
 */
export function workerConnection(url: string): ConnectionOptions {
  return { url, maxRetriesPerRequest: null };
}

export function producerConnection(url: string): ConnectionOptions {
  return { url, enableOfflineQueue: false };
}

export function createProducerConnection(url: string): Redis {
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
}

/** A producer connection rejects commands until it is connected, so wait for it once at start. */
export async function connected(redis: Redis): Promise<Redis> {
  if (redis.status === 'ready') return redis;
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', () => resolve());
    redis.once('error', reject);
  });
  return redis;
}
