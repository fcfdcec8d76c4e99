import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/platform/shared/rate-limiter.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { defineRoute } from '../../../src/faces/http/route.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createBiller, createProviderClient } from '../../support/factories.ts';

function testRoutes(app: FastifyInstance): void {
  defineRoute(app, {
    method: 'GET',
    url: '/test/protected',
    operationId: 'test_protected',
    summary: 'test',
    description: 'A route of this test only.',
    tags: [],
    auth: { kind: 'both', scope: 'payments:read' },
    responses: { 200: { description: 'ok' } },
    handler: async (ctx) => ({ status: 200, body: { clientId: ctx.caller.clientId } }),
  });
  defineRoute(app, {
    method: 'GET',
    url: '/test/either',
    operationId: 'test_either',
    summary: 'test',
    description: 'A route of this test only.',
    tags: [],
    auth: { kind: 'either', scope: 'deduction_data:request' },
    responses: { 200: { description: 'ok' } },
    handler: async (ctx) => ({ status: 200, body: { clientId: ctx.caller.clientId } }),
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' }, routeModules: [testRoutes] });
});
afterAll(async () => t.close());

describe('rate limit on authenticated routes', () => {
  it('lets the burst through, then answers 429 problem+json with Retry-After and RateLimit headers', async () => {
    const biller = await createBiller(t.db);
    const other = await createBiller(t.db);
    // Fetch credentials first: the token endpoint must not be what spends the bucket.
    const headers = await authHeaders(t.app, biller);
    const otherHeaders = await authHeaders(t.app, other);

    const passed = [];
    for (let i = 0; i < 3; i++) {
      passed.push(await t.app.inject({ method: 'GET', url: '/test/protected', headers }));
    }
    expect(passed.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(passed.map((r) => r.headers['ratelimit-limit'])).toEqual(['3', '3', '3']);
    expect(passed.map((r) => r.headers['ratelimit-remaining'])).toEqual(['2', '1', '0']);
    for (const r of passed) expect(Number(r.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);

    const limited = await t.app.inject({ method: 'GET', url: '/test/protected', headers });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(Number(limited.headers['retry-after']))).toBe(true);
    expect(limited.headers['ratelimit-limit']).toBe('3');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    const body = limited.json();
    expect(body).toMatchObject({ status: 429, instance: '/test/protected' });
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}rate-limited`);
    expect(typeof body.title).toBe('string');
    expect(typeof body.detail).toBe('string');
    expect(body).not.toHaveProperty('stack');

    // Another client has its own bucket.
    const unaffected = await t.app.inject({ method: 'GET', url: '/test/protected', headers: otherHeaders });
    expect(unaffected.statusCode).toBe(200);
    expect(unaffected.headers['ratelimit-remaining']).toBe('2');
  });

  it('counts per client, whichever credential authenticates it', async () => {
    const provider = await createProviderClient(t.db);
    const apiKeyOnly = { 'x-api-key': provider.apiKey };
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await t.app.inject({ method: 'GET', url: '/test/either', headers: apiKeyOnly })).statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const both = await authHeaders(t.app, provider);
    const viaToken = await t.app.inject({ method: 'GET', url: '/test/either', headers: { authorization: both.authorization } });
    expect(viaToken.statusCode).toBe(429);
  });

  it('does not rate-limit the token endpoint or unauthenticated failures', async () => {
    const biller = await createBiller(t.db);
    for (let i = 0; i < 5; i++) await authHeaders(t.app, biller);
    for (let i = 0; i < 5; i++) {
      const response = await t.app.inject({ method: 'GET', url: '/test/protected' });
      expect(response.statusCode).toBe(401);
    }
    const headers = await authHeaders(t.app, biller);
    const response = await t.app.inject({ method: 'GET', url: '/test/protected', headers });
    expect(response.statusCode).toBe(200);
    expect(response.headers['ratelimit-remaining']).toBe('2');
  });
});

describe('RateLimiter (token bucket in Redis)', () => {
  const T0 = 1_700_000_000_000;
  let serial = 0;
  const limiter = (perSecond: number, burst: number) => new RateLimiter(t.redis, `${t.config.QUEUE_PREFIX}:unit${++serial}`, perSecond, burst);

  it('allows the burst at one instant, then refuses', async () => {
    const rl = limiter(1, 3);
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await rl.take('c', T0));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions.map((d) => d.limit)).toEqual([3, 3, 3, 3]);
    expect(decisions.slice(0, 3).map((d) => d.retryAfterSeconds)).toEqual([0, 0, 0]);
    expect(decisions[3]!.retryAfterSeconds).toBe(1);
    expect(decisions[3]!.resetSeconds).toBe(3);
  });

  it('refills at the steady rate: after 1 s at 1/s exactly one more is allowed', async () => {
    const rl = limiter(1, 3);
    for (let i = 0; i < 3; i++) expect((await rl.take('c', T0)).allowed).toBe(true);
    expect((await rl.take('c', T0 + 500)).allowed).toBe(false);
    // The refused attempt at +500 ms must not have cost anything: at +1000 ms one token is back.
    const refilled = await rl.take('c', T0 + 1000);
    expect(refilled.allowed).toBe(true);
    expect(refilled.remaining).toBe(0);
    const again = await rl.take('c', T0 + 1000);
    expect(again.allowed).toBe(false);
    expect(again.retryAfterSeconds).toBe(1);
  });

  it('computes Retry-After from the missing fraction of a token', async () => {
    const rl = limiter(1, 1);
    expect((await rl.take('c', T0)).allowed).toBe(true);
    const early = await rl.take('c', T0 + 250);
    expect(early.allowed).toBe(false);
    expect(early.retryAfterSeconds).toBe(1);
    const slow = limiter(1, 2);
    // Rate 1/s: a nearly empty bucket needs a whole second; never 0 while refused.
    expect((await slow.take('c', T0)).allowed).toBe(true);
    expect((await slow.take('c', T0)).allowed).toBe(true);
    const refused = await slow.take('c', T0 + 999);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('never fills beyond the burst however long the client was idle', async () => {
    const rl = limiter(1, 3);
    expect((await rl.take('c', T0)).remaining).toBe(2);
    const later = T0 + 3_600_000;
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await rl.take('c', later));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
  });

  it('refills fractionally at higher rates', async () => {
    const rl = limiter(10, 5);
    for (let i = 0; i < 5; i++) expect((await rl.take('c', T0)).allowed).toBe(true);
    expect((await rl.take('c', T0 + 50)).allowed).toBe(false);
    expect((await rl.take('c', T0 + 100)).allowed).toBe(true);
    expect((await rl.take('c', T0 + 100)).allowed).toBe(false);
    expect((await rl.take('c', T0 + 350)).allowed).toBe(true); // 2.5 tokens back, one spent
    expect((await rl.take('c', T0 + 350)).allowed).toBe(true);
    expect((await rl.take('c', T0 + 350)).allowed).toBe(false);
  });

  it('keeps one bucket per client', async () => {
    const rl = limiter(1, 1);
    expect((await rl.take('a', T0)).allowed).toBe(true);
    expect((await rl.take('a', T0)).allowed).toBe(false);
    expect((await rl.take('b', T0)).allowed).toBe(true);
  });

  it('is atomic under concurrent takes', async () => {
    const rl = limiter(1, 3);
    const decisions = await Promise.all(Array.from({ length: 20 }, () => rl.take('c', T0)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
  });

  it('lets the bucket key expire once it would be full again', async () => {
    const prefix = `${t.config.QUEUE_PREFIX}:unit-ttl`;
    const rl = new RateLimiter(t.redis, prefix, 2, 4);
    await rl.take('c', Date.now());
    const ttl = await t.redis.pttl(`${prefix}:ratelimit:c`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual((4 * 1000) / 2 + 1000);
  });
});
