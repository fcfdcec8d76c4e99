import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../../src/faces/http/app.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { defineRoute } from '../../../src/faces/http/route.ts';
import { composition } from '../../../bin/composition.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { captureLogs } from '../../support/log-capture.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

/** Routes that fail the ways a gap in validation or an outage would, below a valid request. */
const probeRoutes: RouteModule = (app, deps) => {
  const probe = (url: string, handler: () => Promise<unknown>) =>
    defineRoute(app, {
      method: 'GET',
      url,
      operationId: url.slice(1).replaceAll('/', '_'),
      summary: 'Test probe',
      description: 'A route of this test only.',
      tags: ['Test'],
      auth: { kind: 'none' },
      responses: { 200: { description: 'OK' } },
      handler: async () => ({ status: 200, body: await handler() }),
    });
  probe('/test/impossible-date', () => sql`select ${'2026-02-30'}::date`.execute(deps.db));
  probe('/test/bigint-overflow', () => sql`select ${'9223372036854775808'}::bigint`.execute(deps.db));
  probe('/test/admin-shutdown', async () => {
    const error = new pg.DatabaseError('terminating connection due to administrator command', 0, 'error');
    error.code = '57P01';
    throw error;
  });
  probe('/test/connection-refused', async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED', syscall: 'connect' });
  });
  defineRoute(app, {
    method: 'GET',
    url: '/test/broken-stream',
    operationId: 'test_broken_stream',
    summary: 'A download that fails after its first chunk',
    description: 'A route of this test only.',
    tags: ['Test'],
    auth: { kind: 'none' },
    responses: { 200: { description: 'OK' } },
    handler: async ({ reply }) => {
      const body = new Readable({ read() {} });
      body.push('first,line\n');
      setTimeout(() => body.destroy(new Error('the database went away mid-download')), 20);
      return reply.code(200).header('content-type', 'text/csv').send(body);
    },
  });
};

function expectProblem(response: LightMyRequestResponse, status: number, slug: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json();
  expect(problem).toMatchObject({ type: PROBLEM_TYPE_BASE + slug, title: expect.any(String), status });
  return problem as { errors?: Array<{ pointer: string; detail: string }>; detail: string };
}

let t: TestApp;
let headers: Record<string, string>;
let mandateId: string;
const logs = captureLogs('warn');

beforeAll(async () => {
  t = await startTestApp({ routeModules: [...composition.routes, probeRoutes], logger: logs.logger });
  const world = await createEmploymentWorld(t.db);
  const biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
  mandateId = (await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
});
afterAll(async () => t?.close());

const createPayment = (record: Record<string, unknown>) =>
  injectJson(t.app, {
    method: 'POST',
    url: '/payments',
    headers: { ...headers, 'idempotency-key': randomUUID() },
    body: { payment_record: { mandate_id: mandateId, amount: 1000, ...record } },
  });

const paymentCount = async () =>
  Number(
    (
      await t.db
        .selectFrom('payment_requests')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('text PostgreSQL cannot store is refused at the edge, with a pointer to it', () => {
  it('NUL in a JSON string: 422, pointing at the field; nothing stored', async () => {
    const before = await paymentCount();
    const response = await createPayment({ metadata: { note: 'a\u0000b' } });
    const problem = expectProblem(response, 422, 'validation-failed');
    expect(problem.errors).toEqual([{ pointer: '/payment_record/metadata/note', detail: 'must not contain the NUL character (U+0000)' }]);
    expect(await paymentCount()).toBe(before);
  });

  it('NUL in a member name and an unpaired surrogate in a value: 422 for each', async () => {
    const response = await createPayment({ metadata: { 'a\u0000b': 1, other: 'x\ud800' } });
    const problem = expectProblem(response, 422, 'validation-failed');
    expect(problem.errors).toEqual([
      { pointer: '/payment_record/metadata/a\u0000b', detail: 'has a name containing the NUL character (U+0000)' },
      { pointer: '/payment_record/metadata/other', detail: expect.stringContaining('unpaired UTF-16 surrogate') },
    ]);
  });

  it('nesting deeper than any resource: 422, not a stack overflow', async () => {
    const deep = '['.repeat(5_000) + ']'.repeat(5_000);
    const response = await t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: { ...headers, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      payload: `{"payment_record":{"mandate_id":"${mandateId}","amount":1000,"metadata":{"deep":${deep}}}}`,
    });
    const problem = expectProblem(response, 422, 'validation-failed');
    expect(problem.errors?.[0]?.detail).toMatch(/nested deeper than \d+ levels/);
  });

  it('NUL in a query or path parameter: 422, pointing at /query or /path', async () => {
    const query = await t.app.inject({ method: 'GET', url: '/payments?status=paid%00', headers });
    expect(expectProblem(query, 422, 'validation-failed').errors).toEqual([{ pointer: '/query/status', detail: 'must not contain the NUL character (U+0000)' }]);
    const path = await t.app.inject({ method: 'GET', url: `/payments/${randomUUID()}%00`, headers });
    expect(expectProblem(path, 422, 'validation-failed').errors).toEqual([{ pointer: '/path/payment_id', detail: 'must not contain the NUL character (U+0000)' }]);
  });

  it('year 0000 is no date: 422 at the field instead of a PostgreSQL error', async () => {
    const problem = expectProblem(await createPayment({ due_date: '0000-01-01' }), 422, 'validation-failed');
    expect(problem.errors?.map((e) => e.pointer)).toEqual(['/payment_record/due_date']);
  });
});

describe('requests the router or the token endpoint reject keep their documented shapes', () => {
  it('a path parameter over the router limit: 414 problem', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/payments/${'a'.repeat(10_000)}`, headers });
    expectProblem(response, 414, 'uri-too-long');
  });

  it('a malformed percent-encoding in the path: 400 problem', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/payments/%zz', headers }), 400, 'bad-url');
  });

  it('malformed JSON to the token endpoint: RFC 6749 invalid_request, like any other malformed token request', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/json' }, payload: '{' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });
});

describe('errors below validation', () => {
  it('a data exception (SQLSTATE class 22) that slips through is 422, logged at warn to be closed', async () => {
    for (const url of ['/test/impossible-date', '/test/bigint-overflow']) {
      const problem = expectProblem(await t.app.inject({ method: 'GET', url }), 422, 'invalid-value');
      expect(problem.detail).not.toMatch(/2026-02-30|bigint|field value/i);
    }
    expect(logs.lines.filter((line) => line.msg.includes('PostgreSQL refused a value')).map((line) => line.sqlState)).toEqual(['22008', '22003']);
  });

  it('a lost or refused database connection is 503 with Retry-After, naming the dependency but not its address', async () => {
    for (const url of ['/test/admin-shutdown', '/test/connection-refused']) {
      const response = await t.app.inject({ method: 'GET', url });
      const problem = expectProblem(response, 503, 'service-unavailable');
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(problem).toMatchObject({ dependency: 'postgres' });
      expect(response.body).not.toContain('10.0.0.7');
      expect(response.body).not.toContain('administrator');
    }
  });

  it('a download that fails after its headers is cut short, and logs neither an error nor a second answer', async () => {
    const linesBefore = logs.lines.length;
    await expect(t.app.inject({ method: 'GET', url: '/test/broken-stream' })).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const logged = logs.lines.slice(linesBefore);
    expect(logged.filter((line) => line.level >= 50)).toEqual([]);
    // Fastify's own line for a stream that fails mid-way, once; before, the route layer went on to
    // answer a second time ("unhandled error", ERR_HTTP_HEADERS_SENT).
    expect(logged.map((line) => [line.level, line.msg])).toEqual([[40, 'response terminated with an error with headers already sent']]);
  });

  it('a streamed download that succeeds, over a real socket, logs nothing at warn or above', async () => {
    // Before, the route layer awaited the reply (a thenable) the handler returned, got undefined once
    // the download had ended, and failed on it: "Promise errored, but reply.sent = true was set".
    const reader = await authHeaders(t.app, await createBiller(t.db, ['reports:read']));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const linesBefore = logs.lines.length;
    const response = await fetch(`http://127.0.0.1:${port}/reports/reconciliation?pay_date=2026-11-27`, { headers: reader });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    expect((await response.text()).split('\n')[0]).toContain('pay_date');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(logs.lines.slice(linesBefore)).toEqual([]);
  });
});
