import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Config } from '../config/config.ts';
import type { DependencyHealth } from './dependency-health.ts';
import { isConnectionError } from './dependency-health.ts';

/** One Redis server or a Redis Cluster: every command the service sends works on either. */
export type RedisClient = Redis | Cluster;

/**
 * Where Redis is: a server's URL, or the configuration, which names a cluster when
 * REDIS_CLUSTER_NODES is set (and one server at REDIS_URL otherwise).
 */
export type RedisTarget = string | Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>;

/**
 * A connection as BullMQ's Queue, Worker and QueueEvents take it: for one server, the URL and how to
 * behave while it is away (BullMQ opens, and closes, its own connections from them); for a cluster,
 * a cluster client not yet connected, since BullMQ can only be handed a cluster as a client.
 */
export type RedisConnectionOptions = { url: string; enableOfflineQueue?: boolean; maxRetriesPerRequest?: number | null } | Cluster;

/**
 * BullMQ's production guide: workers block on Redis and must never give up a command
 * (maxRetriesPerRequest null); producers and request paths must fail fast rather than queue
 * commands while Redis is away (enableOfflineQueue false). Passing options rather than a shared
 * instance lets each Queue/Worker own, and close, its connection; a cluster client is closed with
 * its Queue or Worker by `closeWith`, since BullMQ leaves a client it was handed open.
 */
export function workerConnection(target: RedisTarget): RedisConnectionOptions {
  if (typeof target !== 'string' && target.REDIS_CLUSTER_NODES) {
    // BullMQ connects it (and the duplicates it makes for blocking reads) when the worker starts.
    return forOneOwner(
      clusterClient(target, target.REDIS_CLUSTER_NODES, { maxRetriesPerRequest: null }, { lazyConnect: true, retryDelayOnFailover: WORKER_RETRY_DELAY_ON_FAILOVER_MS }),
    );
  }
  return { url: urlOf(target), maxRetriesPerRequest: null };
}

export function producerConnection(target: RedisTarget): RedisConnectionOptions {
  if (typeof target !== 'string' && target.REDIS_CLUSTER_NODES) {
    return forOneOwner(clusterClient(target, target.REDIS_CLUSTER_NODES, { enableOfflineQueue: false }, { lazyConnect: true, enableOfflineQueue: false }));
  }
  return { url: urlOf(target), enableOfflineQueue: false };
}

/** A producer client of the process's own (request paths, limits, heartbeats); from a URL, one server's. */
export function createProducerConnection(url: string): Redis;
export function createProducerConnection(target: RedisTarget): RedisClient;
export function createProducerConnection(target: RedisTarget): RedisClient {
  if (typeof target !== 'string' && target.REDIS_CLUSTER_NODES) {
    return clusterClient(target, target.REDIS_CLUSTER_NODES, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }, { enableOfflineQueue: false });
  }
  return new Redis(urlOf(target), { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
}

/**
 * How long a worker's cluster connection waits before sending a command again to a slot whose
 * master went away. ioredis retries up to maxRedirections (16) times, so about 5 s in all: long
 * enough for the replica's promotion after cluster-node-timeout on a small cluster; beyond it
 * BullMQ's own loops retry, and a job whose lock lapsed meanwhile runs again (every job is safe to).
 */
const WORKER_RETRY_DELAY_ON_FAILOVER_MS = 300;

const urlOf = (target: RedisTarget) => (typeof target === 'string' ? target : target.REDIS_URL);

/** A cluster client over the seeds; REDIS_URL lends every node its credentials and TLS. */
function clusterClient(target: Pick<Config, 'REDIS_URL'>, nodes: readonly { host: string; port: number }[], redisOptions: RedisOptions, options: ClusterOptions): Cluster {
  const url = new URL(target.REDIS_URL);
  const credentials: RedisOptions = {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  return new Cluster(
    nodes.map((node) => ({ host: node.host, port: node.port })),
    { ...options, redisOptions: { ...credentials, ...redisOptions } },
  );
}

/** Cluster clients workerConnection and producerConnection made for one Queue, Worker or QueueEvents. */
const madeForOneOwner = new WeakSet<Cluster>();

function forOneOwner(cluster: Cluster): Cluster {
  madeForOneOwner.add(cluster);
  return cluster;
}

/**
 * BullMQ closes the connections it opened from options but leaves a client it was handed open: a
 * cluster client made for one Queue, Worker or QueueEvents is closed when that is. Anything else
 * (a single server's options, a client the caller shares between queues) is left as it was.
 */
export function closeWith<T extends { close(...args: never[]): Promise<unknown> }>(owner: T, connection: unknown): T {
  if (!(connection instanceof Cluster) || !madeForOneOwner.has(connection)) return owner;
  const close = owner.close.bind(owner) as (...args: never[]) => Promise<unknown>;
  owner.close = (async (...args: never[]) => {
    try {
      return await close(...args);
    } finally {
      connection.disconnect();
    }
  }) as T['close'];
  return owner;
}

/**
 * The servers to SCAN or KEYS: on a cluster each master holds only its own slots, so a scan of one
 * node (ioredis sends a keyless command to any) would miss the keys of the others.
 */
export function masterNodes(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** A producer connection rejects commands until it is connected, so wait for it once at start. */
export async function connected<T extends RedisClient>(redis: T): Promise<T> {
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
export function watchRedisConnection(redis: RedisClient, health: DependencyHealth): void {
  reportRedisErrors(redis, health);
  redis.on('ready', () => health.noteSignOfLife('redis'));
}
