import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../../src/faces/http/app.ts';
import { HttpProblem, PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { defineRoute } from '../../../src/faces/http/route.ts';
import type { ProblemCode } from '../../../src/platform/shared/problem-codes.ts';
import { createBiller } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

const SECRET_MESSAGE = 'duplicate key value violates unique constraint "secret_internal_idx"';

const testRoutes: RouteModule = (app) => {
  defineRoute(app, {
    method: 'POST',
    url: '/test/widgets',
    operationId: 'test_widgets',
    summary: 'Test effect',
    description: 'A route of this test only.',
    tags: ['Test'],
    auth: { kind: 'both', scope: 'payments:write' },
    idempotencyKey: 'required',
    body: z.strictObject({
      name: z.string(),
      delay_ms: z.number().optional(),
      fail: z.enum(['422', '500']).optional(),
    }),
    responses: { 201: { description: 'Created' } },
    effect: async (ctx, trx) => {
      const row = await trx
        .insertInto('consumers')
        .values({ biller_client_id: ctx.caller.clientId, given_name: ctx.body.name, family_name: 'x' })
        .returning(['id'])
        .executeTakeFirstOrThrow();
      if (ctx.body.delay_ms) await sleep(ctx.body.delay_ms);
      if (ctx.body.fail === '422') throw new HttpProblem(422, 'widget-rejected' as ProblemCode, 'The widget was rejected'); // a code of this test only
      if (ctx.body.fail === '500') throw new Error(SECRET_MESSAGE);
      return { status: 201, body: { id: row.id, name: ctx.body.name, created_at: new Date().toISOString() } };
    },
  });
};

/** Asserts the RFC 9457 shape every error of this service has, and returns the parsed body. */
function expectProblem(response: LightMyRequestResponse, status: number, instance: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
  const problem = JSON.parse(response.body);
  expect(problem).toEqual(
    expect.objectContaining({
      type: expect.any(String),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      instance,
    }),
  );
  expect(() => new URL(problem.type)).not.toThrow();
  expect(problem.type.startsWith(PROBLEM_TYPE_BASE)).toBe(true);
  expect(problem.title.length).toBeGreaterThan(0);
  expect(problem.detail.length).toBeGreaterThan(0);
  expect(problem).not.toHaveProperty('stack');
  expect(response.body).not.toMatch(/\n\s+at /);
  expect(response.body).not.toMatch(/\.ts:\d+/);
  return problem;
}

let t: TestApp;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ env: { BODY_LIMIT_BYTES: '2048' }, routeModules: [testRoutes] });
  headers = await authHeaders(t.app, await createBiller(t.db));
});
afterAll(async () => t?.close());

const withKey = () => ({ ...headers, 'idempotency-key': randomUUID() });

describe('problem details on every error status', () => {
  it('400: malformed JSON', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/widgets',
      headers: { ...withKey(), 'content-type': 'application/json' },
      payload: '{"name": "unterminated',
    });
    const problem = expectProblem(response, 400, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}malformed-json`);
  });

  it('400: a missing required Idempotency-Key names the header in errors[]', async () => {
    const response = await injectJson(t.app, { method: 'POST', url: '/test/widgets', headers, body: { name: 'a' } });
    const problem = expectProblem(response, 400, '/test/widgets');
    expect(problem.errors).toEqual([{ pointer: '/headers/idempotency-key', detail: expect.any(String) }]);
  });

  it('401: no credentials', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: { 'idempotency-key': randomUUID() },
      body: { name: 'a' },
    });
    expectProblem(response, 401, '/test/widgets');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('401: an invalid bearer token', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: { ...withKey(), authorization: 'Bearer not.a.jwt' },
      body: { name: 'a' },
    });
    expectProblem(response, 401, '/test/widgets');
    expect(response.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('403: a token without the required scope', async () => {
    const reader = await createBiller(t.db, ['payments:read']);
    const readerHeaders = await authHeaders(t.app, reader);
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: { ...readerHeaders, 'idempotency-key': randomUUID() },
      body: { name: 'a' },
    });
    const problem = expectProblem(response, 403, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}insufficient-scope`);
    expect(response.headers['www-authenticate']).toMatch(/error="insufficient_scope"/);
  });

  it('404: unknown route (instance keeps the query, detail does not)', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/no/such/route?x=1', headers });
    const problem = expectProblem(response, 404, '/no/such/route?x=1');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}not-found`);
    expect(problem.detail).toContain('/no/such/route');
  });

  it('409: the same Idempotency-Key while the first request is in flight', async () => {
    const keyed = withKey();
    const body = { name: 'slow', delay_ms: 400 };
    const responses = await Promise.all([
      injectJson(t.app, { method: 'POST', url: '/test/widgets', headers: keyed, body }),
      injectJson(t.app, { method: 'POST', url: '/test/widgets', headers: keyed, body }),
    ]);
    expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    const problem = expectProblem(
      responses.find((r) => r.statusCode === 409)!,
      409,
      '/test/widgets',
    );
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}idempotency-key-in-flight`);
  });

  it('413: a body over the configured limit', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: withKey(),
      body: { name: 'x'.repeat(4096) },
    });
    const problem = expectProblem(response, 413, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}body-too-large`);
  });

  it('415: a text/plain body sent to a JSON route', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/widgets',
      headers: { ...withKey(), 'content-type': 'text/plain' },
      payload: '{"name":"a"}',
    });
    const problem = expectProblem(response, 415, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}unsupported-media-type`);
  });

  it('415: a form-encoded body sent to a JSON route (the form parser exists for /oauth2/token only)', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/widgets',
      headers: { ...withKey(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=a',
    });
    const problem = expectProblem(response, 415, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}unsupported-media-type`);
  });

  it('415: an unknown media type sent to a JSON route', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/test/widgets',
      headers: { ...withKey(), 'content-type': 'application/xml' },
      payload: '<name>a</name>',
    });
    const problem = expectProblem(response, 415, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}unsupported-media-type`);
  });

  it('422: an unknown field, with a JSON pointer to it', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: withKey(),
      body: { name: 'a', colour: 'red' },
    });
    const problem = expectProblem(response, 422, '/test/widgets');
    expect(problem.errors).toEqual([{ pointer: '/colour', detail: expect.any(String) }]);
    expect(problem.errors[0].detail.length).toBeGreaterThan(0);
  });

  it('422: a wrong type and a missing field, with JSON pointers', async () => {
    const wrongType = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: withKey(),
      body: { name: 5 },
    });
    const problem = expectProblem(wrongType, 422, '/test/widgets');
    expect(problem.errors).toEqual([{ pointer: '/name', detail: expect.any(String) }]);
    expect(problem.errors[0].detail.length).toBeGreaterThan(0);

    const wrongEnum = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: withKey(),
      body: { fail: 'maybe' },
    });
    const both = expectProblem(wrongEnum, 422, '/test/widgets');
    expect(both.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/fail', '/name']);
  });

  it('422: a problem thrown by the effect', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: withKey(),
      body: { name: 'a', fail: '422' },
    });
    const problem = expectProblem(response, 422, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}widget-rejected`);
  });

  it('500: an unexpected error leaks neither its message nor a stack', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/test/widgets',
      headers: withKey(),
      body: { name: 'a', fail: '500' },
    });
    const problem = expectProblem(response, 500, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}internal-error`);
    expect(response.body).not.toContain('secret_internal_idx');
    expect(response.body).not.toContain('duplicate key');
    expect(response.body).not.toContain('Error:');
    expect(Object.keys(problem).sort()).toEqual(['detail', 'instance', 'status', 'title', 'type']);
  });
});

describe('problem details when rate limited', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' }, routeModules: [testRoutes] });
  });
  afterAll(async () => limited?.close());

  it('429 with Retry-After once the burst is spent', async () => {
    const limitedHeaders = await authHeaders(limited.app, await createBiller(limited.db));
    const send = () =>
      injectJson(limited.app, {
        method: 'POST',
        url: '/test/widgets',
        headers: { ...limitedHeaders, 'idempotency-key': randomUUID() },
        body: { name: 'a' },
      });
    const first = await send();
    expect(first.statusCode).toBe(201);
    const second = await send();
    const problem = expectProblem(second, 429, '/test/widgets');
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}rate-limited`);
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(second.headers['ratelimit-limit']).toBe('1');
  });
});
