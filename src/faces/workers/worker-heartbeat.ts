import { hostname } from 'node:os';
import { masterNodes, type RedisClient } from '../../platform/runtime/redis-connections.ts';
import { z } from 'zod';

/** How often a worker process says it is alive; `deductions status` lists the ones that did lately. */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** Three missed beats and the key expires: a killed process drops off the list on its own. */
export const HEARTBEAT_TTL_MS = 3 * HEARTBEAT_INTERVAL_MS;

export const workerHeartbeatSchema = z.object({
  host: z.string(),
  pid: z.number().int(),
  started_at: z.string(),
  queues: z.array(z.string()),
  last_seen: z.string(),
});
export type WorkerHeartbeat = z.infer<typeof workerHeartbeatSchema>;

const heartbeatKeyPattern = (prefix: string) => `${prefix}:heartbeat:*`;

export interface HeartbeatHandle {
  /** Stops beating and removes the key, so a graceful shutdown is not mistaken for a live worker. */
  close(): Promise<void>;
}

/**
 * Writes this process's heartbeat now and every interval. A beat that fails (Redis down) is skipped:
 * the dependency monitor already reports the outage, and the key expiring says the same to `status`.
 */
export async function startHeartbeat(redis: RedisClient, prefix: string, queues: readonly string[], intervalMs = HEARTBEAT_INTERVAL_MS): Promise<HeartbeatHandle> {
  const host = hostname();
  const key = `${prefix}:heartbeat:${host}:${process.pid}`;
  const startedAt = new Date().toISOString();
  const beat = () => {
    const heartbeat: WorkerHeartbeat = { host, pid: process.pid, started_at: startedAt, queues: [...queues], last_seen: new Date().toISOString() };
    return redis.set(key, JSON.stringify(heartbeat), 'PX', 3 * intervalMs).then(
      () => undefined,
      () => undefined,
    );
  };
  await beat();
  let pending: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    pending = beat();
  }, intervalMs);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      // A beat in flight would otherwise write the key back after it was removed.
      await pending;
      await redis.del(key).catch(() => undefined);
    },
  };
}

/** The worker processes whose heartbeat has not expired, by host and pid. */
export async function listLiveWorkers(redis: RedisClient, prefix: string): Promise<WorkerHeartbeat[]> {
  const keys: string[] = [];
  // A cluster's masters each scan their own slots. One MGET then reads them all: on a cluster the
  // prefix is hash-tagged, so every heartbeat key is in one slot.
  for (const node of masterNodes(redis)) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', heartbeatKeyPattern(prefix), 'COUNT', 100);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  if (keys.length === 0) return [];
  const values = await redis.mget(...keys);
  return values
    .flatMap((value) => {
      if (value === null) return [];
      const parsed = workerHeartbeatSchema.safeParse(JSON.parse(value));
      return parsed.success ? [parsed.data] : [];
    })
    .sort((a, b) => a.host.localeCompare(b.host) || a.pid - b.pid);
}
