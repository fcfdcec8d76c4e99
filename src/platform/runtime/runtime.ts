import type { RedisClient } from './redis-connections.ts';
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
  /**
   * For reads that tolerate the replica's lag (exports, reports, the console's read-only pages, through
   * readSource): a pool on DATABASE_READ_URL, or `db` itself when none is set (no second pool then).
   * openRuntime always sets it; a runtime put together by hand without it reads the primary.
   */
  readDb?: Database;
  redis: RedisClient;
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
export async function pingRedis(redis: RedisClient): Promise<void> {
  if (redis.status !== 'ready') await connected(redis);
  await redis.ping();
}

export async function openRuntime(config: Config, name = 'deductions', options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = createLogger(config, name);
  const db = createDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  // pg connects on first use: a replica that is down delays no start, and its reads go to the primary (readSource).
  const readDb = config.DATABASE_READ_URL === undefined ? db : createDatabase(config.DATABASE_READ_URL, config.DATABASE_READ_POOL_SIZE);
  const destroyDatabases = async () => {
    await db.destroy();
    if (readDb !== db) await readDb.destroy();
  };
  const redis = createProducerConnection(config);
  let health: DependencyHealth | undefined;
  if (options.service) {
    health = monitorDependencies(logger, { postgres: () => pingDatabase(db), redis: () => pingRedis(redis) });
    watchRedisConnection(redis, health);
  } else {
    try {
      await connected(redis);
    } catch (error) {
      redis.disconnect();
      await destroyDatabases();
      throw error;
    }
    // Later outages surface as failed commands; the listener only keeps ioredis from printing each retry.
    redis.on('error', () => {});
  }
  return {
    config,
    db,
    readDb,
    redis,
    logger,
    ...(health ? { health } : {}),
    async close() {
      health?.close();
      redis.disconnect();
      await destroyDatabases();
    },
  };
}
