import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { pingDatabase } from '../db/ping.ts';
import type { Config } from '../config/config.ts';
import { createDatabase, type Database } from '../db/connection.ts';
import { connected, createProducerConnection, watchRedisConnection } from './redis-connections.ts';
import { createLogger } from '../shared/logger.ts';
import { monitorDependencies, type DependencyHealth } from './dependency-health.ts';

/** The long-lived resources one process shares, opened once and closed in reverse order. */
export interface Runtime {
  config: Config;
  db: Database;
  redis: Redis;
  logger: Logger;
  /** Up/down of PostgreSQL and Redis; set for long-running processes (`serve`, `work`, `start`). */
  health?: DependencyHealth;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /**
   * A service process starts whatever is down and waits for it: no connection is awaited, and the
   * health monitor logs one line when a dependency goes and one when it is back. A one-shot
   * command (the default) needs Redis now and fails at once without it.
   */
  service?: boolean;
}

/**
 * Answers once the connection is ready and Redis answers a PING. A connection still connecting (at
 * start, or between reconnect attempts) is waited for rather than failed, so the outcome is its
 * attempt's (with ECONNREFUSED or the like), not "not connected yet".
 */
export async function pingRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') await connected(redis);
  await redis.ping();
}

export async function openRuntime(config: Config, name = 'deductions', options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = createLogger(config, name);
  const db = createDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  const redis = createProducerConnection(config.REDIS_URL);
  let health: DependencyHealth | undefined;
  if (options.service) {
    health = monitorDependencies(logger, { postgres: () => pingDatabase(db), redis: () => pingRedis(redis) });
    watchRedisConnection(redis, health);
  } else {
    try {
      await connected(redis);
    } catch (error) {
      redis.disconnect();
      await db.destroy();
      throw error;
    }
    // Later outages surface as failed commands; the listener only keeps ioredis from printing each retry.
    redis.on('error', () => {});
  }
  return {
    config,
    db,
    redis,
    logger,
    ...(health ? { health } : {}),
    async close() {
      health?.close();
      redis.disconnect();
      await db.destroy();
    },
  };
}
