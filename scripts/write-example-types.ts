// `npm run examples:types`: regenerates the example integration's API types
// (examples/integration/src/generated/openapi.d.ts) with openapi-typescript, from the OpenAPI document
// the code builds: the app is assembled with the routes of bin/composition.ts, as `serve` assembles
// it, and asked for /openapi.json in memory. Nothing listens, and neither PostgreSQL nor Redis is
// reached (the database pool and the Redis connection are made, never used).
// test/examples/example-integration.test.ts fails while the committed file differs from what this writes.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { Redis } from 'ioredis';
import type { OpenAPI3 } from 'openapi-typescript';
import { composition } from '../bin/composition.ts';
import { parseConfig } from '../src/platform/config/config.ts';
import { createDatabase } from '../src/platform/db/connection.ts';
import { TokenIssuer } from '../src/directory/auth/token-issuer.ts';
import { buildApp } from '../src/faces/http/app.ts';
import { noProviderApis } from '../src/directory/payroll-providers/adapter.ts';
import type { ReconciliationRequester } from '../src/cycle/reconciliation/reconciliation-requests.ts';
import { apiTypesOf, GENERATED_TYPES_FILE } from '../examples/integration/generate-types.ts';

/** The document `GET /openapi.json` serves, built from the same route specs, without a server. */
async function builtOpenApiDocument(): Promise<OpenAPI3> {
  // The defaults, as an installation without settings has them (the document names PUBLIC_BASE_URL
  // as its server; the generated types do not carry it).
  const config = parseConfig({ LOG_LEVEL: 'silent' });
  const db = createDatabase(config.DATABASE_URL, 1);
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  const tokens = await TokenIssuer.generate({ issuer: config.AUTH_ISSUER, audience: config.AUTH_AUDIENCE, ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS });
  const reconciliation: ReconciliationRequester = { request: async () => {}, close: async () => {} };
  const app = await buildApp({ config, db, redis, tokens, adapterFor: noProviderApis, reconciliation }, composition.routes);
  try {
    await app.ready();
    const response = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode}: ${response.body}`);
    return response.json<OpenAPI3>();
  } finally {
    await app.close();
    redis.disconnect();
    await db.destroy();
  }
}

const text = await apiTypesOf(await builtOpenApiDocument());
const shown = relative(process.cwd(), GENERATED_TYPES_FILE);
let current: string | null = null;
try {
  current = readFileSync(GENERATED_TYPES_FILE, 'utf8');
} catch {
  // Not written yet.
}
if (current === text) process.stdout.write(`${shown} is up to date\n`);
else {
  writeFileSync(GENERATED_TYPES_FILE, text);
  process.stdout.write(`wrote ${shown}\n`);
}
