import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { createDatabase, type Database } from '../db/connection.ts';
import { TokenIssuer } from '../auth/token-issuer.ts';
import { connected, createProducerConnection } from '../queue/connections.ts';
import { createLogger } from '../shared/logger.ts';

/** The long-lived resources one process shares, opened once and closed in reverse order. */
export interface Runtime {
  config: Config;
  db: Database;
  redis: Redis;
  logger: Logger;
  close(): Promise<void>;
}

export async function openRuntime(config: Config, name = 'deductions'): Promise<Runtime> {
  const logger = createLogger(config, name);
  const db = createDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  const redis = await connected(createProducerConnection(config.REDIS_URL));
  return {
    config,
    db,
    redis,
    logger,
    async close() {
      redis.disconnect();
      await db.destroy();
    },
  };
}

export function loadTokenIssuer(config: Config): Promise<TokenIssuer> {
  return TokenIssuer.fromKeyFile(config.AUTH_SIGNING_KEY_FILE, {
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS,
    externalJwksUrl: config.AUTH_JWKS_URL,
  });
}
