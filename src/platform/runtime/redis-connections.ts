import { Redis } from 'ioredis';
import type { DependencyHealth } from './dependency-health.ts';
import { isConnectionError } from './dependency-health.ts';

/** A connection's options as BullMQ's Queue, Worker and QueueEvents take them: the server's URL and how to behave while it is away. */
export type RedisConnectionOptions = { url: string; enableOfflineQueue?: boolean; maxRetriesPerRequest?: number | null };

/**
 * BullMQ's production guide: workers block on Redis and must never give up a command
 * (maxRetriesPerRequest null); producers and request paths must fail fast rather than queue
 * commands while Redis is away (enableOfflineQueue false). Passing options rather than a shared
 * instance lets each Queue/Worker own, and close, its connection.
 */
export function workerConnection(url: string): RedisConnectionOptions {
  return { url, maxRetriesPerRequest: null };
}

export function producerConnection(url: string): RedisConnectionOptions {
  return { url, enableOfflineQueue: false };
}

export function createProducerConnection(url: string): Redis {
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
}

/** A producer connection rejects commands until it is connected, so wait for it once at start. */
export async function connected(redis: Redis): Promise<Redis> {
  if (redis.status === 'ready') return redis;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      redis.off('ready', onReady);
      reject(error);
    };
    const onReady = () => {
      redis.off('error', onError);
      resolve();
    };
    redis.once('ready', onReady);
    redis.once('error', onError);
  });
  return redis;
}

/** Anything that emits a connection's 'error' events: an ioredis client, a BullMQ Queue or Worker. */
export interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Every Redis connection a process owns gets an 'error' listener: without one ioredis prints
 * "[ioredis] Unhandled error event" with a stack for every reconnect attempt, and BullMQ prints the
 * error itself. Connection errors go to the health monitor (which logs the outage once); anything
 * else goes to `otherwise`, or is dropped when the caller has nothing to add.
 */
export function reportRedisErrors(emitter: ErrorEmitter, health: DependencyHealth | undefined, otherwise?: (error: Error) => void): void {
  emitter.on('error', (error) => {
    if (isConnectionError(error)) health?.noteFailure('redis', error);
    else otherwise?.(error);
  });
}

/** The health monitor's own Redis connection: its errors and its reconnects drive the probes. */
export function watchRedisConnection(redis: Redis, health: DependencyHealth): void {
  reportRedisErrors(redis, health);
  redis.on('ready', () => health.noteSignOfLife('redis'));
}
