import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, InjectOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { DependencyHealth } from '../../src/platform/runtime/dependency-health.ts';
import { parseConfig, type Config } from '../../src/platform/config/config.ts';
import { TokenIssuer } from '../../src/directory/auth/token-issuer.ts';
import { buildApp, type RouteModule } from '../../src/faces/http/app.ts';
import { composition } from '../../bin/composition.ts';
import { queueReconciliationRequester, type ReconciliationRequester } from '../../src/cycle/reconciliation/reconciliation-requests.ts';
import { noProviderApis, type AdapterFactory } from '../../src/directory/payroll-providers/adapter.ts';
import { connected, createProducerConnection } from '../../src/platform/runtime/redis-connections.ts';
import { createDatabase } from '../../src/platform/db/connection.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

function externalDatabase(url: string): TestDatabase {
  const db = createDatabase(url, 5);
  return { name: new URL(url).pathname.slice(1), url, db, drop: () => db.destroy() };
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  database: TestDatabase;
  db: TestDatabase['db'];
  redis: Redis;
  tokens: TokenIssuer;
  reconciliation: ReconciliationRequester;
  close(): Promise<void>;
}

/** A real app on a private database and a private Redis prefix; requests go through app.inject. */
export async function startTestApp(
  options: {
    env?: Record<string, string>;
    routeModules?: readonly RouteModule[];
    adapterFor?: AdapterFactory;
    /** Receives what the app logs (LOG_LEVEL is silent otherwise). */
    logger?: FastifyBaseLogger;
    /** An already migrated database the test manages itself (e.g. a private server it stops). */
    databaseUrl?: string;
    /** The process's health monitor, as `serve` hands it over: requests refused for an outage go to it. */
    health?: DependencyHealth;
    /** A read replica (DATABASE_READ_URL): its own pool, as openRuntime opens one, handed to the app as readDb. */
    readDatabaseUrl?: string;
  } = {},
): Promise<TestApp> {
  const database = options.databaseUrl ? externalDatabase(options.databaseUrl) : await createTestDatabase();
  const config = parseConfig({
    DATABASE_URL: database.url,
    QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`,
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Fake payroll providers listen on 127.0.0.1 over http.
    PROVIDER_ALLOW_PRIVATE_URLS: 'true',
    // Console passwords at an eighth of the production cost: the same code, faster (TEST_PASSWORD_COST).
    CONSOLE_PASSWORD_SCRYPT_LOG_N: '14',
    ...(options.readDatabaseUrl ? { DATABASE_READ_URL: options.readDatabaseUrl } : {}),
    ...options.env,
  });
  const readDb = config.DATABASE_READ_URL === undefined ? undefined : createDatabase(config.DATABASE_READ_URL, config.DATABASE_READ_POOL_SIZE);
  const redis = await connected(createProducerConnection(config.REDIS_URL));
  const tokens = await TokenIssuer.generate({
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS,
    externalJwksUrl: config.AUTH_JWKS_URL,
  });
  const reconciliation = queueReconciliationRequester(config.REDIS_URL, config.QUEUE_PREFIX, Number(options.env?.RECONCILIATION_DEBOUNCE_MS ?? 200));
  const app = await buildApp(
    {
      config,
      db: database.db,
      ...(readDb ? { readDb } : {}),
      redis,
      tokens,
      adapterFor: options.adapterFor ?? noProviderApis,
      reconciliation,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.health ? { health: options.health } : {}),
    },
    options.routeModules ?? composition.routes,
  );
  await app.ready();
  return {
    app,
    config,
    database,
    db: database.db,
    redis,
    tokens,
    reconciliation,
    async close() {
      await app.close();
      await reconciliation.close();
      const keys = await redis.keys(`${config.QUEUE_PREFIX}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await readDb?.destroy();
      await database.drop();
    },
  };
}

/** Bearer token plus API key of one client, ready to spread into inject headers. */
export interface Credentials {
  clientId: string;
  clientSecret: string;
  apiKey: string;
}

export async function fetchToken(app: FastifyInstance, credentials: Credentials, scope?: string): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
      ...(scope ? { scope } : {}),
    }).toString(),
  });
  if (response.statusCode !== 200) throw new Error(`token request failed: ${response.statusCode} ${response.body}`);
  return response.json().access_token as string;
}

export async function authHeaders(app: FastifyInstance, credentials: Credentials, scope?: string) {
  return { authorization: `Bearer ${await fetchToken(app, credentials, scope)}`, 'x-api-key': credentials.apiKey };
}

export function injectJson(app: FastifyInstance, options: InjectOptions & { body?: unknown }) {
  const { body, ...rest } = options;
  return app.inject({
    ...rest,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(rest.headers ?? {}) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}
