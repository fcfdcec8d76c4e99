import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../../src/platform/db/migrator.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { createBiller, createEmploymentWorld, createMandateRow, createOperator } from '../../support/factories.ts';
import { captureLogs } from '../../support/log-capture.ts';
import { createPrivatePostgres, createPrivateRedis, type PrivatePostgres, type PrivateRedis } from '../../support/private-servers.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

/**
 * The API on a PostgreSQL and a Redis of its own, each taken down and brought back while the app
 * keeps running: requests meanwhile get 503 with Retry-After (never 500), /readyz says which
 * dependency is missing, and a retry with the same Idempotency-Key afterwards runs exactly once.
 */

let postgres: PrivatePostgres | undefined;
let redis: PrivateRedis | undefined;
let t: TestApp | undefined;
let headers: Record<string, string>;
let operatorHeaders: Record<string, string>;
let mandateId: string;
const logs = captureLogs('warn');

beforeAll(async () => {
  postgres = await createPrivatePostgres();
  await postgres.start();
  redis = await createPrivateRedis();
  await redis.start();
  const migrating = createDatabase(postgres.url, 1);
  await migrateToLatest(migrating);
  await migrating.destroy();
  t = await startTestApp({ databaseUrl: postgres.url, env: { REDIS_URL: redis.url }, logger: logs.logger });
  const world = await createEmploymentWorld(t.db);
  const biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
  operatorHeaders = await authHeaders(t.app, await createOperator(t.db));
  mandateId = (await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
}, 120_000);

afterAll(async () => {
  // Both back up first, so the app can close cleanly; then the servers go, whatever failed.
  try {
    await postgres?.start().catch(() => {});
    await redis?.start().catch(() => {});
    await t?.close();
  } finally {
    await redis?.destroy();
    await postgres?.destroy();
  }
}, 60_000);

const createPayment = (key: string) =>
  injectJson(t!.app, {
    method: 'POST',
    url: '/payments',
    headers: { ...headers, 'idempotency-key': key },
    body: { payment_record: { mandate_id: mandateId, amount: 2500 } },
  });

const paymentRows = async () =>
  Number(
    (
      await t!.db
        .selectFrom('payment_requests')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

function expectServiceUnavailable(response: LightMyRequestResponse, dependency: 'postgres' | 'redis') {
  expect(response.statusCode, response.body).toBe(503);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  expect(response.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}service-unavailable`, status: 503, dependency });
  // Names the dependency, not where it lives or what the driver said.
  expect(response.body).not.toMatch(/127\.0\.0\.1|postgres:\/\/|redis:\/\/|ECONNREFUSED|Connection terminated/);
}

async function readiness() {
  const response = await t!.app.inject({ method: 'GET', url: '/readyz' });
  return { status: response.statusCode, body: response.json() };
}

/**
 * ioredis reconnects on its own, each connection with its own backoff: wait (bounded) until the
 * app sees Redis again, and the reconciliation producer too (BullMQ cannot close a connection
 * that is still reconnecting).
 */
async function untilRedisIsBack() {
  for (let attempt = 0; attempt < 100; attempt++) {
    const ready = (await readiness()).status === 200;
    if (
      ready &&
      (await t!.reconciliation.request(randomUUID(), '2026-01-01').then(
        () => true,
        () => false,
      ))
    )
      return;
    await sleep(100);
  }
  throw new Error('the app did not reconnect to Redis');
}

describe('PostgreSQL unreachable', () => {
  it('answers 503 with Retry-After, readiness names PostgreSQL, and the same key succeeds once it is back', async () => {
    // Several pooled connections open and idle when the server goes: they break with it.
    const warm = await Promise.all([1, 2, 3].map(() => t!.app.inject({ method: 'GET', url: '/payments', headers })));
    expect(warm.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    const report = () => t!.app.inject({ method: 'GET', url: '/reports/reconciliation?pay_date=2026-11-27', headers: operatorHeaders });
    expect((await report()).statusCode).toBe(200);

    await postgres!.stop('immediate');
    const key = randomUUID();
    expectServiceUnavailable(await createPayment(key), 'postgres');
    expectServiceUnavailable(await t!.app.inject({ method: 'GET', url: '/payments', headers }), 'postgres');
    // A streamed download reads its first batch before answering: 503, not a 200 cut short.
    expectServiceUnavailable(await report(), 'postgres');
    expect(await readiness()).toEqual({ status: 503, body: { status: 'not_ready', checks: { postgres: 'unavailable', redis: 'ok' } } });

    await postgres!.start();
    // The first request after the restart already gets a working connection: no stale client.
    const created = await createPayment(key);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    const replay = await createPayment(key);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(created.body);
    expect(await paymentRows()).toBe(1);
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } } });
  });
});

describe('Redis unreachable', () => {
  it('fails closed with 503 (the rate limit cannot be enforced); the same key succeeds once Redis is back', async () => {
    const before = await paymentRows();
    await redis!.stop();
    const key = randomUUID();
    expectServiceUnavailable(await createPayment(key), 'redis');
    expect(await readiness()).toEqual({ status: 503, body: { status: 'not_ready', checks: { postgres: 'ok', redis: 'unavailable' } } });
    // What needs neither a client nor a rate limit still answers.
    expect((await t!.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    await redis!.start();
    await untilRedisIsBack();
    const created = await createPayment(key);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    expect(await paymentRows()).toBe(before + 1);
  });

  it('logged each outage as a warning line without a stack, and nothing at error level', () => {
    const outages = logs.lines.filter((line) => typeof line.msg === 'string' && line.msg.endsWith('unavailable; answered 503'));
    expect(new Set(outages.map((line) => line.dependency))).toEqual(new Set(['postgres', 'redis']));
    expect(outages.every((line) => line.level === 40 && !('err' in line))).toBe(true);
    expect(logs.errors()).toEqual([]);
  });
});
