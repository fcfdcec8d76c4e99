import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { createDatabase } from '../../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../../src/platform/db/migrator.ts';
import { connected, createProducerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { deleteQueueKeys } from '../queue/nightly-fixtures.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { createPrivatePostgres, freePort, type PrivatePostgres } from '../../support/private-servers.ts';
import { pause, until } from '../../faces/webhooks/webhook-test-kit.ts';
import { startService, type LogLine, type ServiceProcess } from './service-process.ts';

// The operators' guide (docs/operators.md, Outages) promises one line when a dependency goes and one when it is back, never a line per
// retry. Under load that means: the requests that meet the outage (answered 503) tell the health
// monitor, which logs "down" at once and once, probes quickly while it is down and logs "back up"
// promptly; the requests themselves do not each log a warning. A real `serve` on a PostgreSQL of
// this file's own, under POST /payments from many clients at once, through an outage of a few seconds.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OUTAGE_MS = 6_000;
const CLIENTS = 16;
const prefix = `test-${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'outage-logging-'));
let postgres: PrivatePostgres | undefined;
let redis: Redis | undefined;
let service: ServiceProcess | undefined;
let biller: IssuedCredentials;
let mandateId: string;

beforeAll(async () => {
  postgres = await createPrivatePostgres();
  await postgres.start();
  const db = createDatabase(postgres.url, 2);
  try {
    await migrateToLatest(db);
    const world = await createEmploymentWorld(db);
    biller = await createBiller(db);
    mandateId = (await createMandateRow(db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
  } finally {
    await db.destroy();
  }
  redis = await connected(createProducerConnection(REDIS_URL));
}, 120_000);

afterAll(async () => {
  await service?.kill('SIGKILL');
  if (redis) {
    await deleteQueueKeys(redis, prefix);
    redis.disconnect();
  }
  await postgres?.destroy();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const isPostgresLine = (event: string) => (line: LogLine) => line.event === event && line.dependency === 'postgres';

describe('serve under POST /payments load through a PostgreSQL outage', () => {
  it('logs one line down (at once) and one line up (promptly), a bounded number of other warnings, answers only 201 or 503, and loses nothing', async () => {
    const port = await freePort();
    service = startService('serve', {
      DATABASE_URL: postgres!.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      AUTH_SIGNING_KEY_FILE: join(dir, 'serve-key.pem'),
      RATE_LIMIT_PER_SECOND: '100000',
      RATE_LIMIT_BURST: '100000',
    });
    const url = `http://127.0.0.1:${port}`;
    await service.waitForLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));
    await until(
      () => fetch(`${url}/readyz`).then((response) => response.status),
      (status) => status === 200,
      20_000,
    );

    const tokenResponse = await fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }),
    });
    expect(tokenResponse.status).toBe(200);
    const headers = {
      authorization: `Bearer ${((await tokenResponse.json()) as { access_token: string }).access_token}`,
      'x-api-key': biller.apiKey,
      'content-type': 'application/json',
    };

    const statuses = new Map<number, number>();
    const created = new Set<string>();
    let missingRetryAfter = 0;
    let running = true;
    const client = async () => {
      while (running) {
        const key = randomUUID();
        try {
          const response = await fetch(`${url}/payments`, {
            method: 'POST',
            headers: { ...headers, 'idempotency-key': key },
            body: JSON.stringify({ payment_record: { mandate_id: mandateId, amount: 100 } }),
          });
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status === 201) created.add(key);
          if (response.status === 503 && !response.headers.get('retry-after')) missingRetryAfter += 1;
        } catch {
          statuses.set(0, (statuses.get(0) ?? 0) + 1);
        }
      }
    };
    const load = Array.from({ length: CLIENTS }, client);

    await pause(1_500);
    const linesBefore = service.lines.length;
    const stoppedAt = Date.now();
    await postgres!.stop('immediate');
    await pause(OUTAGE_MS);
    await postgres!.start();
    const startedAt = Date.now();
    // Waited for without failing yet, so that the figures below are printed whatever happened.
    const up = await service.waitForLine(isPostgresLine('dependency_up'), 15_000).catch(() => undefined);
    await pause(2_000);
    running = false;
    await Promise.all(load);

    const during = service.lines.slice(linesBefore);
    const down = during.filter(isPostgresLine('dependency_down'));
    const ups = during.filter(isPostgresLine('dependency_up'));
    const otherWarnings = during.filter((line) => typeof line.level === 'number' && line.level >= 40 && line.event !== 'dependency_down');
    console.info(
      `outage logging: ${during.length} lines during the run, down ${down.length} (after ${Number(down[0]?.time) - stoppedAt} ms), ` +
        `up ${ups.length} (after ${Number(up?.time) - startedAt} ms, counting ${up?.refusedRequests} refused), other warnings ${otherWarnings.length}; ` +
        `answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );

    expect(down).toHaveLength(1);
    expect(ups).toHaveLength(1);
    // "Down" as soon as the requests meet the outage, not at the next 15 s look.
    expect(Number(down[0]!.time) - stoppedAt).toBeLessThan(3_000);
    // "Back up" soon after PostgreSQL is: the monitor probes quickly while it is down.
    expect(Number(up!.time) - startedAt).toBeLessThan(2_500);
    // The refused requests are counted there, not logged one by one.
    expect(up!.refusedRequests).toBeGreaterThanOrEqual(statuses.get(503)! - 50);
    expect(otherWarnings.length, JSON.stringify(otherWarnings.slice(0, 5))).toBeLessThanOrEqual(5);
    expect(during.filter((line) => typeof line.level === 'number' && line.level >= 50)).toEqual([]);

    // Only 201 and 503 (with Retry-After), and every 201 is a payment that exists.
    expect([...statuses.keys()].sort()).toEqual([201, 503]);
    expect(statuses.get(503)).toBeGreaterThan(100);
    expect(missingRetryAfter).toBe(0);
    const db = createDatabase(postgres!.url, 1);
    try {
      // A request cut off after its commit answers 503 yet exists (a retry would replay it): at least.
      const payments = Number(
        (
          await db
            .selectFrom('payment_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      expect(payments).toBeGreaterThanOrEqual(created.size);
      const kept = await db
        .selectFrom('idempotency_keys')
        .select('idempotency_key')
        .where('idempotency_key', 'in', [...created])
        .where('status', '=', 'completed')
        .where('response_status', '=', 201)
        .execute();
      expect(kept.length).toBe(created.size);
    } finally {
      await db.destroy();
    }

    expect(await service.kill('SIGTERM')).toBe(0);
  }, 120_000);
});
