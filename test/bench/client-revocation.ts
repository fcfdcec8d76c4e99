/**
 * How soon a disabled client stops working, and what the short client cache costs (a script, not a test):
 *   npx tsx test/bench/client-revocation.ts [--rounds 10] [--interval 20] [--requests 2000]
 *
 * Resets the database deductions_bench_revocation and starts the real app (buildApp + routeModules) on
 * a free port. Per round, a biller calls GET /payments every --interval ms over HTTP with a bearer token
 * and its API key, while another connection pool (as the CLI would) disables the client; the time from
 * the disable's commit to the first 401 is recorded, then the client is enabled again and the loop
 * waits for 200. Then --requests sequential authenticated requests are timed, against the cost of the
 * two lookups the cache saves (a client by id, a client by API key hash).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { cliActor } from '../../src/platform/audit/audit-service.ts';
import { findClientByApiKeyHash, findClientById } from '../../src/directory/auth/clients-repository.ts';
import { createClient, disableClient, enableClient } from '../../src/directory/auth/clients-service.ts';
import { CLIENT_CACHE_TTL_MS } from '../../src/directory/auth/revocation.ts';
import { hashSecret } from '../../src/directory/auth/secrets.ts';
import { TokenIssuer } from '../../src/directory/auth/token-issuer.ts';
import { parseConfig } from '../../src/platform/config/config.ts';
import { createDatabase } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { buildApp } from '../../src/faces/http/app.ts';
import { composition } from '../../bin/composition.ts';
import { noProviderApis } from '../../src/directory/payroll-providers/adapter.ts';
import { connected, createProducerConnection } from '../../src/platform/runtime/redis-connections.ts';
import type { ReconciliationRequester } from '../../src/cycle/reconciliation/reconciliation-requests.ts';
import { recreateDatabase } from './bench-support.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    interval: { type: 'string', default: '20' },
    requests: { type: 'string', default: '2000' },
    database: { type: 'string', default: 'deductions_bench_revocation' },
  },
});
const rounds = Number(values.rounds);
const intervalMs = Number(values.interval);
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${values.database}`;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

await recreateDatabase(databaseUrl);
const config = parseConfig({
  ...process.env,
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'silent',
  QUEUE_PREFIX: 'bench-revocation',
  RATE_LIMIT_PER_SECOND: '100000',
  RATE_LIMIT_BURST: '100000',
});
const db = createDatabase(databaseUrl, 5);
const cli = createDatabase(databaseUrl, 1);
await migrateToLatest(db);
const redis = await connected(createProducerConnection(config.REDIS_URL));
const tokens = await TokenIssuer.generate({ issuer: config.AUTH_ISSUER, audience: config.AUTH_AUDIENCE, ttlSeconds: 3600 });
const reconciliation: ReconciliationRequester = { request: async () => {}, close: async () => {} };
const app = await buildApp({ config, db, redis, tokens, adapterFor: noProviderApis, reconciliation }, composition.routes);
const address = await app.listen({ host: '127.0.0.1', port: 0 });

const biller = await createClient(db, { name: 'Bench biller', role: 'biller' });
const token = await tokens.issue({ clientId: biller.clientId, scopes: ['payments:read'], secretVersion: 1 });
const headers = { authorization: `Bearer ${token}`, 'x-api-key': biller.apiKey };
const call = async () => (await fetch(`${address}/payments?limit=1`, { headers })).status;

process.stdout.write(`Client cache lifetime ${CLIENT_CACHE_TTL_MS} ms; polling every ${intervalMs} ms; ${rounds} rounds\n`);
const delays: number[] = [];
for (let round = 0; round < rounds; round++) {
  while ((await call()) !== 200) await sleep(intervalMs);
  // Let the cache entry age by a random part of its lifetime, as a real disable would find it.
  await sleep(Math.random() * CLIENT_CACHE_TTL_MS);
  await cli.transaction().execute((trx) => disableClient(trx, biller.clientId, { actor: cliActor('bench'), reason: 'bench' }));
  const disabledAt = performance.now();
  while ((await call()) !== 401) await sleep(intervalMs);
  delays.push(performance.now() - disabledAt);
  await cli.transaction().execute((trx) => enableClient(trx, biller.clientId, { actor: cliActor('bench'), reason: 'bench' }));
}
delays.sort((a, b) => a - b);
process.stdout.write(`  disable -> first 401: min ${delays[0]!.toFixed(0)} ms, median ${percentile(delays, 50).toFixed(0)} ms, max ${delays.at(-1)!.toFixed(0)} ms\n`);

while ((await call()) !== 200) await sleep(intervalMs);
const requests = Number(values.requests);
const latencies: number[] = [];
for (let i = 0; i < requests; i++) {
  const started = performance.now();
  await call();
  latencies.push(performance.now() - started);
}
latencies.sort((a, b) => a - b);
const lookups: number[] = [];
const keyHash = hashSecret(biller.apiKey);
for (let i = 0; i < 500; i++) {
  const started = performance.now();
  await findClientById(db, biller.clientId);
  await findClientByApiKeyHash(db, keyHash);
  lookups.push(performance.now() - started);
}
lookups.sort((a, b) => a - b);
process.stdout.write(
  `  authenticated GET /payments: p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms over ${requests}\n` +
    `  the two client lookups a cache miss costs: p50 ${percentile(lookups, 50).toFixed(2)} ms, p99 ${percentile(lookups, 99).toFixed(2)} ms` +
    ` (once per client and credential per ${CLIENT_CACHE_TTL_MS / 1000} s per process)\n`,
);

await app.close();
redis.disconnect();
await Promise.all([db.destroy(), cli.destroy()]);
