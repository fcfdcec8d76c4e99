import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../../src/faces/http/app.ts';
import { HttpProblem, PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { defineRoute } from '../../../src/faces/http/route.ts';
import { deleteExpiredKeys } from '../../../src/platform/idempotency/idempotency-repository.ts';
import { purgeExpiredIdempotencyKeys } from '../../../src/platform/idempotency/idempotency-service.ts';
import type { ProblemCode } from '../../../src/platform/shared/problem-codes.ts';
import { createBiller } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// ---------------------------------------------------------------------------------------------
// Test routes: business routes do not exist yet, so the runner is exercised through these.

/** Problem codes of these test routes only, cast past the catalogue's type. */
const WIDGET_REJECTED = 'widget-rejected' as ProblemCode;
const GADGET_REJECTED = 'gadget-rejected' as ProblemCode;

/** How often each effect really ran, by body.name (outside any transaction, so rollbacks keep it). */
const effectRuns = new Map<string, number>();
/** Names whose next effect throws a plain Error (a 500), once. */
const failOnceWith500 = new Set<string>();

const widgetBody = z.strictObject({
  name: z.string(),
  delay_ms: z.number().optional(),
  /** Like delay_ms, but spent in a statement of the effect's transaction (pg_sleep). */
  db_sleep_ms: z.number().optional(),
  fail: z.enum(['422', '500']).optional(),
  /** Lock the caller's client row (FOR NO KEY UPDATE) before the insert, after the key's claim. */
  row_lock_client: z.boolean().optional(),
});

const testRoutes: RouteModule = (app) => {
  for (const [url, idempotencyKey] of [
    ['/test/widgets', 'required'],
    ['/test/notes', 'optional'],
  ] as const) {
    defineRoute(app, {
      method: 'POST',
      url,
      operationId: `test_${url.split('/')[2]}`,
      summary: 'Test effect',
      description: 'A route of this test only.',
      tags: ['Test'],
      auth: { kind: 'both', scope: 'payments:write' },
      idempotencyKey,
      body: widgetBody,
      responses: { 201: { description: 'Created' } },
      effect: async (ctx, trx) => {
        const body = ctx.body;
        effectRuns.set(body.name, (effectRuns.get(body.name) ?? 0) + 1);
        if (body.row_lock_client) await sql`select 1 from clients where id = ${ctx.caller.clientId}::uuid for no key update`.execute(trx);
        const row = await trx
          .insertInto('consumers')
          .values({ biller_client_id: ctx.caller.clientId, given_name: body.name, family_name: 'x' })
          .returning(['id'])
          .executeTakeFirstOrThrow();
        // Hold the transaction (and so the claim) open: a duplicate arrives while this is in flight.
        if (body.delay_ms) await sleep(body.delay_ms);
        if (body.db_sleep_ms) await sql`select pg_sleep(${body.db_sleep_ms / 1000})`.execute(trx);
        if (body.fail === '422') throw new HttpProblem(422, WIDGET_REJECTED, `Widget ${body.name} was rejected`);
        if (body.fail === '500' || failOnceWith500.delete(body.name)) {
          throw new Error('relation "consumers" violates something secret');
        }
        return {
          status: 201,
          headers: { location: `${url}/${row.id}` },
          body: { id: row.id, name: body.name, created_at: new Date().toISOString() },
        };
      },
    });
  }

  // An effect that stores its response in its own write statement (responseInWrite), as POST /payments does.
  defineRoute(app, {
    method: 'POST',
    url: '/test/gadgets',
    operationId: 'test_gadgets',
    summary: 'Test effect storing its response in its write',
    description: 'A route of this test only.',
    tags: ['Test'],
    auth: { kind: 'both', scope: 'payments:write' },
    idempotencyKey: 'required',
    responseInWrite: true,
    body: gadgetBody,
    responses: { 201: { description: 'Created' } },
    effect: async (ctx, trx, storeResponse) => {
      const body = ctx.body;
      effectRuns.set(body.name, (effectRuns.get(body.name) ?? 0) + 1);
      if (body.fail === '422-before-write') throw new HttpProblem(422, GADGET_REJECTED, `Gadget ${body.name} was rejected`);
      if (body.lock_client_ms) {
        await sql`select 1 from clients where id = ${ctx.caller.clientId}::uuid for no key update`.execute(trx);
        await sleep(body.lock_client_ms);
      }
      const id = randomUUID();
      const result = { status: 201, headers: { location: `/test/gadgets/${id}` }, body: { id, name: body.name } };
      const alongside = body.answer === 'without-storing' ? undefined : storeResponse!(body.answer === 'differently' ? { ...result, body: { id } } : result);
      await sql`
        with ${alongside ? sql`alongside as (${alongside}),` : sql``} gadget as (
          insert into consumers (id, biller_client_id, given_name, family_name) values (${id}::uuid, ${ctx.caller.clientId}::uuid, ${body.name}, 'x')
        )
        select 1
      `.execute(trx);
      if (body.delay_ms) await sleep(body.delay_ms);
      if (body.fail === '422-after-write') throw new HttpProblem(422, GADGET_REJECTED, `Gadget ${body.name} was rejected`);
      return result;
    },
  });
};

const gadgetBody = z.strictObject({
  name: z.string(),
  delay_ms: z.number().optional(),
  fail: z.enum(['422-before-write', '422-after-write']).optional(),
  /** How the effect treats its response: stored in its write (default), not stored, or stored but another answered. */
  answer: z.enum(['without-storing', 'differently']).optional(),
  /** Lock the caller's client row (FOR NO KEY UPDATE) and hold it this long before the write. */
  lock_client_ms: z.number().optional(),
});

// ---------------------------------------------------------------------------------------------

let t: TestApp;
let headers: Record<string, string>;
let clientId: string;

beforeAll(async () => {
  t = await startTestApp({ routeModules: [testRoutes] });
  const biller = await createBiller(t.db);
  clientId = biller.clientId;
  headers = await authHeaders(t.app, biller);
  // A failure that only surfaces at COMMIT, after the effect has returned its 201 (a private clone).
  await sql`
    create function test_fail_at_commit() returns trigger language plpgsql as $$
    begin
      if new.given_name like 'fail-at-commit%' then raise exception 'deferred check failed'; end if;
      return null;
    end $$;
    create constraint trigger consumers_fail_at_commit after insert on consumers
      deferrable initially deferred for each row execute function test_fail_at_commit();
  `.execute(t.db);
});
afterAll(async () => t?.close());
beforeEach(() => {
  effectRuns.clear();
  failOnceWith500.clear();
});

let nameCounter = 0;
const uniqueName = () => `widget-${++nameCounter}-${randomUUID().slice(0, 8)}`;

function post(url: string, body: object, key?: string, extraHeaders: Record<string, string> = headers) {
  return injectJson(t.app, {
    method: 'POST',
    url,
    headers: { ...extraHeaders, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body,
  });
}

async function rowsNamed(name: string) {
  return t.db.selectFrom('consumers').selectAll().where('given_name', '=', name).execute();
}

async function keyRow(key: string, client = clientId) {
  return t.db.selectFrom('idempotency_keys').selectAll().where('client_id', '=', client).where('idempotency_key', '=', key).executeTakeFirst();
}

/** Until a session of this database sits idle in a transaction: an effect has written and now waits (delay_ms). */
async function untilATransactionWaits() {
  for (let i = 0; i < 200; i++) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'idle in transaction'
    `.execute(t.db);
    if (rows[0]!.n > 0) return;
    await sleep(10);
  }
  throw new Error('no transaction began to wait');
}

function expectProblem(response: LightMyRequestResponse, status: number, slug?: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json();
  expect(problem.status).toBe(status);
  if (slug) expect(problem.type).toBe(PROBLEM_TYPE_BASE + slug);
  return problem;
}

describe('idempotent effects', () => {
  it('replays the stored response byte for byte, with Idempotent-Replayed, and runs the effect once', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/widgets', { name }, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.json()).toMatchObject({ name });

    // A fresh execution would carry a different id and timestamp.
    await sleep(5);
    const replay = await post('/test/widgets', { name }, key);
    expect(replay.statusCode).toBe(first.statusCode);
    expect(replay.body).toBe(first.body);
    expect(replay.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(replay.headers.location).toBe(first.headers.location);
    expect(replay.headers['idempotent-replayed']).toBe('true');

    const rows = await rowsNamed(name);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe(first.json().id);
    expect(effectRuns.get(name)).toBe(1);

    // Stored, completed and kept for the retention period (30 days by default).
    const stored = await keyRow(key);
    expect(stored).toMatchObject({ status: 'completed', response_status: 201 });
    const retentionDays = (stored!.expires_at.getTime() - stored!.created_at.getTime()) / 86_400_000;
    expect(retentionDays).toBeGreaterThan(29.99);
    expect(retentionDays).toBeLessThan(30.01);
  });

  it('replays under the quoted form of the same key, and accepts a quoted key in the first place', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/widgets', { name }, `"${key}"`);
    expect(first.statusCode).toBe(201);
    const replay = await post('/test/widgets', { name }, key.toUpperCase());
    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await rowsNamed(name)).toHaveLength(1);
  });

  it('answers 422 for the same key with a different body or path, and keeps the original', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/widgets', { name }, key);
    expect(first.statusCode).toBe(201);

    const otherBody = await post('/test/widgets', { name: `${name}-changed` }, key);
    const problem = expectProblem(otherBody, 422, 'idempotency-key-reused');
    expect(problem.detail).toEqual(expect.any(String));
    expect(otherBody.headers['idempotent-replayed']).toBeUndefined();

    const otherPath = await post('/test/notes', { name }, key);
    expectProblem(otherPath, 422, 'idempotency-key-reused');

    expect(await rowsNamed(name)).toHaveLength(1);
    expect(await rowsNamed(`${name}-changed`)).toHaveLength(0);
    expect(effectRuns.get(name)).toBe(1);

    const replay = await post('/test/widgets', { name }, key);
    expect(replay.body).toBe(first.body);
  });

  it('lets exactly one of two concurrent requests with one key run; the other gets 409 at once', async () => {
    const name = uniqueName();
    const key = randomUUID();
    // Same body (a different one would be 422): whichever claims first holds its transaction 500 ms.
    const body = { name, delay_ms: 500 };
    const started = Date.now();
    const timed = () => post('/test/widgets', body, key).then((response) => ({ response, ms: Date.now() - started }));
    const results = await Promise.all([timed(), timed()]);
    const statuses = results.map((r) => r.response.statusCode).sort();
    expect(statuses).toEqual([201, 409]);

    const conflict = results.find((r) => r.response.statusCode === 409)!;
    const winner = results.find((r) => r.response.statusCode === 201)!;
    const problem = expectProblem(conflict.response, 409, 'idempotency-key-in-flight');
    expect(problem.detail).toEqual(expect.any(String));
    expect(conflict.response.headers['retry-after']).toBe('1');
    // The loser was told at once; it did not queue behind the winner's transaction.
    expect(winner.ms).toBeGreaterThanOrEqual(450);
    expect(conflict.ms).toBeLessThan(winner.ms - 200);

    expect(await rowsNamed(name)).toHaveLength(1);
    expect(effectRuns.get(name)).toBe(1);

    // Once the first finished, a retry replays its response.
    const retry = await post('/test/widgets', body, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.body).toBe(winner.response.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(effectRuns.get(name)).toBe(1);
  });

  it('never runs the effect twice under a burst of concurrent duplicates: one 201, the rest 409 or its replay', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const body = { name, delay_ms: 30 };
    // Staggered so that some duplicates arrive while the first runs and some after it committed.
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => sleep(i * 10).then(() => post('/test/widgets', body, key))));
    const fresh = responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const response of responses) {
      if (response === fresh[0]) continue;
      if (response.statusCode === 409) {
        expectProblem(response, 409, 'idempotency-key-in-flight');
      } else {
        expect(response.statusCode).toBe(201);
        expect(response.headers['idempotent-replayed']).toBe('true');
        expect(response.body).toBe(fresh[0]!.body);
      }
    }
    expect(effectRuns.get(name)).toBe(1);
    expect(await rowsNamed(name)).toHaveLength(1);
  });

  it('keeps the claim invisible until the effect commits: nothing is stored while a request runs', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const running = post('/test/widgets', { name, delay_ms: 400 }, key);
    await sleep(200);
    // Another session sees neither a claim nor the effect: they commit together or not at all.
    expect(await keyRow(key)).toBeUndefined();
    expect(await rowsNamed(name)).toHaveLength(0);
    const first = await running;
    expect(first.statusCode).toBe(201);
    expect(await keyRow(key)).toMatchObject({ status: 'completed', response_status: 201 });
    expect(await rowsNamed(name)).toHaveLength(1);
  });

  it('leaves nothing behind when a request dies mid-flight: the retry runs the effect', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const dying = post('/test/widgets', { name, db_sleep_ms: 5_000 }, key);
    // Kill the request's database session mid-effect, as the death of an API process would end it.
    let killed = 0;
    for (let i = 0; i < 100 && killed === 0; i++) {
      await sleep(20);
      const { rows } = await sql<{ killed: number }>`
        select count(*)::int as killed from (
          select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and query like 'select pg_sleep(%'
        ) t
      `.execute(t.db);
      killed = rows[0]!.killed;
    }
    expect(killed).toBe(1);
    // A terminated session (57P01) is the database going away: 503, and the retry below is safe.
    const died = await dying;
    expectProblem(died, 503, 'service-unavailable');
    expect(Number(died.headers['retry-after'])).toBeGreaterThan(0);
    expect(await keyRow(key)).toBeUndefined();
    expect(await rowsNamed(name)).toHaveLength(0);

    const retry = await post('/test/widgets', { name }, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(effectRuns.get(name)).toBe(2);
    expect(await rowsNamed(name)).toHaveLength(1);
    expect(await keyRow(key)).toMatchObject({ status: 'completed', response_status: 201 });

    const replay = await post('/test/widgets', { name }, key);
    expect(replay.body).toBe(retry.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('scopes keys per client: the same key from two clients gives two independent effects', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const other = await createBiller(t.db);
    const otherHeaders = await authHeaders(t.app, other);

    const mine = await post('/test/widgets', { name }, key);
    const theirs = await post('/test/widgets', { name }, key, otherHeaders);
    expect(mine.statusCode).toBe(201);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().id).not.toBe(mine.json().id);

    const rows = await rowsNamed(name);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.biller_client_id))).toEqual(new Set([clientId, other.clientId]));
    expect(effectRuns.get(name)).toBe(2);

    // A different body under the other client's key is still judged against that client's own request.
    const otherConflict = await post('/test/widgets', { name: `${name}-x` }, key, otherHeaders);
    expectProblem(otherConflict, 422, 'idempotency-key-reused');
  });

  it('requires the key where the route says so: 400 with a pointer to the header, effect not run', async () => {
    const name = uniqueName();
    const response = await post('/test/widgets', { name });
    const problem = expectProblem(response, 400, 'idempotency-key-required');
    expect(problem.errors[0].pointer).toBe('/headers/idempotency-key');
    expect(problem.errors[0].detail).toEqual(expect.any(String));
    expect(effectRuns.get(name)).toBeUndefined();
    expect(await rowsNamed(name)).toHaveLength(0);
  });

  it.each(['not-a-uuid', '12345678-1234-1234-1234-1234567890', '{0f8fad5b-d9cb-469f-a165-70867728950e}'])(
    'rejects the non-UUID key %j with 400 on both required and optional routes',
    async (badKey) => {
      const name = uniqueName();
      for (const url of ['/test/widgets', '/test/notes']) {
        const response = await post(url, { name }, badKey);
        const problem = expectProblem(response, 400, 'invalid-idempotency-key');
        expect(problem.errors[0].pointer).toBe('/headers/idempotency-key');
      }
      expect(effectRuns.get(name)).toBeUndefined();
      expect(await rowsNamed(name)).toHaveLength(0);
    },
  );

  it('stores a 4xx outcome and replays it without running the effect again', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const body = { name, fail: '422' };
    const first = await post('/test/widgets', body, key);
    const problem = expectProblem(first, 422, 'widget-rejected');
    expect(problem.detail).toBe(`Widget ${name} was rejected`);
    expect(problem.instance).toBe('/test/widgets');
    expect(effectRuns.get(name)).toBe(1);
    expect(await keyRow(key)).toMatchObject({ status: 'completed', response_status: 422 });

    const retry = await post('/test/widgets', body, key);
    expect(retry.statusCode).toBe(422);
    expect(retry.body).toBe(first.body);
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(effectRuns.get(name)).toBe(1);
    // The effect's insert was rolled back with the failure.
    expect(await rowsNamed(name)).toHaveLength(0);
  });

  it('does not store a 5xx: a retry with the same key runs the effect and succeeds', async () => {
    const name = uniqueName();
    const key = randomUUID();
    failOnceWith500.add(name);

    const first = await post('/test/widgets', { name }, key);
    expectProblem(first, 500, 'internal-error');
    expect(effectRuns.get(name)).toBe(1);
    expect(await rowsNamed(name)).toHaveLength(0);
    expect(await keyRow(key)).toBeUndefined();

    const retry = await post('/test/widgets', { name }, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(effectRuns.get(name)).toBe(2);
    expect(await rowsNamed(name)).toHaveLength(1);
    expect(await keyRow(key)).toMatchObject({ status: 'completed', response_status: 201 });

    const replay = await post('/test/widgets', { name }, key);
    expect(replay.body).toBe(retry.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it("stores the response in the effect's transaction: a failed commit leaves no stored response", async () => {
    const name = `fail-at-commit-${uniqueName()}`;
    const key = randomUUID();
    const first = await post('/test/widgets', { name }, key);
    expectProblem(first, 500, 'internal-error');
    expect(effectRuns.get(name)).toBe(1);
    expect(await rowsNamed(name)).toHaveLength(0);
    // Neither a completed 201 for an effect that never happened, nor a claim blocking the retry.
    expect(await keyRow(key)).toBeUndefined();

    const retry = await post('/test/widgets', { name }, key);
    expectProblem(retry, 500, 'internal-error');
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(effectRuns.get(name)).toBe(2);
  });

  it('runs an optional-key route every time when no key is sent', async () => {
    const name = uniqueName();
    const first = await post('/test/notes', { name });
    const second = await post('/test/notes', { name });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json().id).not.toBe(first.json().id);
    expect(await rowsNamed(name)).toHaveLength(2);
    expect(effectRuns.get(name)).toBe(2);
  });

  it('still honours a key sent to an optional-key route', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/notes', { name }, key);
    const replay = await post('/test/notes', { name }, key);
    expect(first.statusCode).toBe(201);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await rowsNamed(name)).toHaveLength(1);
  });
});

describe("responses stored by the effect's own write (responseInWrite)", () => {
  it("stores the response in the effect's statement, with no claim of its own, and replays it byte for byte", async () => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/gadgets', { name }, key);
    expect(first.statusCode).toBe(201);
    const stored = await keyRow(key);
    expect(stored).toMatchObject({ status: 'completed', response_status: 201, response_headers: { location: first.headers.location } });
    expect(stored!.response_body!.toString('utf8')).toBe(first.body);

    const replay = await post('/test/gadgets', { name }, key);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await rowsNamed(name)).toHaveLength(1);
    // The duplicate ran up to its write, which failed on the key and rolled back.
    expect(effectRuns.get(name)).toBe(2);
  });

  it('answers every one of a burst of concurrent duplicates with the one response that was stored', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const body = { name, delay_ms: 30 };
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => sleep(i * 10).then(() => post('/test/gadgets', body, key))));
    const fresh = responses.filter((r) => r.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    // A duplicate of a request still running waits for it (the key's uncommitted row), then replays.
    for (const response of responses) {
      expect(response.statusCode).toBe(201);
      expect(response.body).toBe(fresh[0]!.body);
    }
    expect(await rowsNamed(name)).toHaveLength(1);
  });

  it('refuses the same key with a different body while the first runs, once it has committed: 422, one effect', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const running = post('/test/gadgets', { name, delay_ms: 300 }, key);
    await untilATransactionWaits();
    const other = await post('/test/gadgets', { name: `${name}-other` }, key);
    expectProblem(other, 422, 'idempotency-key-reused');
    expect((await running).statusCode).toBe(201);
    expect(await rowsNamed(name)).toHaveLength(1);
    expect(await rowsNamed(`${name}-other`)).toHaveLength(0);
  });

  it.each(['422-before-write', '422-after-write'] as const)('stores a refusal thrown %s and replays it; the write rolled back', async (fail) => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/gadgets', { name, fail }, key);
    expectProblem(first, 422, 'gadget-rejected');
    expect(await keyRow(key)).toMatchObject({ status: 'completed', response_status: 422 });
    expect(await rowsNamed(name)).toHaveLength(0);

    // The retry runs the effect again (no claim first) and is answered from the stored refusal.
    const retry = await post('/test/gadgets', { name, fail }, key);
    expect(retry.body).toBe(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(effectRuns.get(name)).toBe(2);
    expect(await rowsNamed(name)).toHaveLength(0);
  });

  it('stores the answer of an effect that wrote without storing it, after the effect, in its transaction', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/gadgets', { name, answer: 'without-storing' }, key);
    expect(first.statusCode).toBe(201);
    expect(await keyRow(key)).toMatchObject({ status: 'completed', response_status: 201 });
    const replay = await post('/test/gadgets', { name, answer: 'without-storing' }, key);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // The duplicate's own write was rolled back when its key turned out taken.
    expect(await rowsNamed(name)).toHaveLength(1);
  });

  it('answers 409 concurrent-request, not 500, when a key sent to two routes at once deadlocks them', async () => {
    // The gadget locks a row and then stores its key; the widget claims the key first and then wants
    // that row. PostgreSQL rolls one back (40P01); the other completes.
    const name = uniqueName();
    const key = randomUUID();
    const gadget = post('/test/gadgets', { name, lock_client_ms: 300 }, key);
    await untilATransactionWaits();
    const widget = post('/test/widgets', { name: `${name}-widget`, row_lock_client: true }, key);
    const [g, w] = await Promise.all([gadget, widget]);
    expect([g.statusCode, w.statusCode].sort()).toEqual([201, 409]);
    const refused = g.statusCode === 409 ? g : w;
    expectProblem(refused, 409, 'concurrent-request');
    expect(refused.headers['retry-after']).toBe('1');
    expect((await rowsNamed(name)).length + (await rowsNamed(`${name}-widget`)).length).toBe(1);
    expect(await keyRow(key)).toMatchObject({ status: 'completed', response_status: 201 });
  });

  it('fails (500), storing nothing, an effect that answers otherwise than it stored', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const response = await post('/test/gadgets', { name, answer: 'differently' }, key);
    expectProblem(response, 500, 'internal-error');
    expect(await keyRow(key)).toBeUndefined();
    expect(await rowsNamed(name)).toHaveLength(0);
  });
});

describe('purging expired keys', () => {
  async function insertKey(client: string, key: string, expiresAt: string) {
    await sql`
      insert into idempotency_keys (client_id, idempotency_key, fingerprint, status, response_status,
                                    response_headers, response_body, expires_at)
      values (${client}, ${key}, 'f', 'completed', 201, '{}'::jsonb, '\\x7b7d'::bytea, ${expiresAt}::timestamptz)
    `.execute(t.db);
  }

  it('deletes only the keys whose expiry has passed', async () => {
    const purger = await createBiller(t.db);
    const expired = [randomUUID(), randomUUID(), randomUUID()];
    const live = [randomUUID(), randomUUID()];
    for (const key of expired) await insertKey(purger.clientId, key, new Date(Date.now() - 86_400_000).toISOString());
    for (const key of live) await insertKey(purger.clientId, key, new Date(Date.now() + 3_600_000).toISOString());
    // A key stored through the API, expiring in 30 days, survives too.
    const apiName = uniqueName();
    const apiKey = randomUUID();
    expect((await post('/test/widgets', { name: apiName }, apiKey)).statusCode).toBe(201);
    const before = await t.db
      .selectFrom('idempotency_keys')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();

    const purged = await purgeExpiredIdempotencyKeys(t.db);
    expect(purged).toBe(3);

    const remaining = await t.db.selectFrom('idempotency_keys').select('idempotency_key').where('client_id', '=', purger.clientId).execute();
    expect(remaining.map((r) => r.idempotency_key).sort()).toEqual([...live].sort());
    expect(await keyRow(apiKey)).toBeDefined();
    const after = await t.db
      .selectFrom('idempotency_keys')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n - 3);

    // Nothing left to purge.
    expect(await purgeExpiredIdempotencyKeys(t.db)).toBe(0);
  });

  it('purges relative to the given instant', async () => {
    const purger = await createBiller(t.db);
    const key = randomUUID();
    await insertKey(purger.clientId, key, new Date(Date.now() + 3_600_000).toISOString());
    expect(await purgeExpiredIdempotencyKeys(t.db, new Date(Date.now() + 7_200_000))).toBeGreaterThanOrEqual(1);
    expect(await keyRow(key, purger.clientId)).toBeUndefined();
  });

  it('works through a backlog larger than one batch', async () => {
    const purger = await createBiller(t.db);
    const past = new Date(Date.now() - 86_400_000).toISOString();
    for (let i = 0; i < 5; i++) await insertKey(purger.clientId, randomUUID(), past);
    expect(await deleteExpiredKeys(t.db, new Date(), 2)).toBe(5);
    const left = await t.db.selectFrom('idempotency_keys').select('idempotency_key').where('client_id', '=', purger.clientId).execute();
    expect(left).toHaveLength(0);
  });

  it('lets a purged key be used again as a new request', async () => {
    const name = uniqueName();
    const key = randomUUID();
    const first = await post('/test/widgets', { name }, key);
    expect(first.statusCode).toBe(201);
    await sql`update idempotency_keys set expires_at = now() - interval '1 second'
              where client_id = ${clientId} and idempotency_key = ${key}`.execute(t.db);
    expect(await purgeExpiredIdempotencyKeys(t.db)).toBe(1);

    const again = await post('/test/widgets', { name }, key);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json().id).not.toBe(first.json().id);
    expect(await rowsNamed(name)).toHaveLength(2);
  });
});
