import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REQUEST_ID_LENGTH, requestIdOf } from '../../../src/faces/http/request-id.ts';
import { createBiller } from '../../support/factories.ts';
import { captureLogs } from '../../support/log-capture.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';

const logs = captureLogs('info');
let t: TestApp;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ logger: logs.logger });
  headers = await authHeaders(t.app, await createBiller(t.db));
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('security headers', () => {
  it('mark every authenticated answer no-store and nosniff, refusals included', async () => {
    const answers = [
      await t.app.inject({ method: 'GET', url: '/payments', headers }),
      await t.app.inject({ method: 'GET', url: `/payments/${crypto.randomUUID()}`, headers }),
      await t.app.inject({ method: 'GET', url: '/payments' }),
      await t.app.inject({ method: 'GET', url: '/payments?limit=0', headers }),
    ];
    expect(answers.map((response) => response.statusCode)).toEqual([200, 404, 401, 400]);
    for (const response of answers) {
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
      // Served over plain HTTP here (PUBLIC_BASE_URL is http): no HSTS.
      expect(response.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('leave the caching of public answers to them', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.headers['x-content-type-options']).toBe('nosniff');
    expect(health.headers['cache-control']).toBeUndefined();
    const jwks = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(jwks.headers['cache-control']).toBe('public, max-age=300');
    const unknown = await t.app.inject({ method: 'GET', url: '/no-such-route' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['x-content-type-options']).toBe('nosniff');
  });

  it('send HSTS when the public address is https', async () => {
    const overTls = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://deductions.example' }, databaseUrl: t.database.url });
    try {
      for (const url of ['/healthz', '/payments']) {
        const response = await overTls.app.inject({ method: 'GET', url });
        expect(response.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      }
    } finally {
      await overTls.close();
    }
  });
});

describe('x-request-id', () => {
  const idsLoggedFor = async (requestId: string | undefined) => {
    const marker = `/healthz?probe=${crypto.randomUUID()}`;
    await t.app.inject({ method: 'GET', url: marker, headers: requestId === undefined ? {} : { 'x-request-id': requestId } });
    const ids = logs.lines.filter((line) => JSON.stringify(line).includes(marker)).map((line) => line.reqId);
    expect(ids.length).toBeGreaterThan(0);
    return [...new Set(ids)];
  };

  it('carries a well-formed caller id into the logs', async () => {
    for (const id of ['3f2c1a9e-5b7d-4c8e-9f00-1a2b3c4d5e6f', 'Root=1-67891233-abcdef012345678912345678', 'req_01HZX.trace:span/1+2=']) {
      expect(await idsLoggedFor(id)).toEqual([id]);
    }
    expect(await idsLoggedFor('x'.repeat(MAX_REQUEST_ID_LENGTH))).toEqual(['x'.repeat(MAX_REQUEST_ID_LENGTH)]);
  });

  it('replaces an absent, overlong or oddly spelled id with a fresh UUID, without refusing the request', async () => {
    for (const id of [undefined, 'x'.repeat(MAX_REQUEST_ID_LENGTH + 1), 'two words', '{"level":60}', 'ünïcode', '']) {
      const ids = await idsLoggedFor(id);
      expect(ids).toHaveLength(1);
      expect(ids[0]).toMatch(UUID);
    }
    const response = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a'.repeat(8000) } });
    expect(response.statusCode).toBe(200);
  });

  it('takes no id from a header sent twice', () => {
    const id = requestIdOf({ headers: { 'x-request-id': ['a', 'b'] } } as never);
    expect(id).toMatch(UUID);
  });
});
