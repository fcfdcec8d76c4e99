import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { recordEvents, type EventToRecord } from '../../../src/platform/events/outbox.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { createBiller } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let billerA: IssuedCredentials;
let billerB: IssuedCredentials;
let headersA: Record<string, string>;
let headersB: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  billerA = await createBiller(t.db);
  billerB = await createBiller(t.db);
  headersA = await authHeaders(t.app, billerA);
  headersB = await authHeaders(t.app, billerB);
});
afterAll(async () => t?.close());

function expectProblem(response: LightMyRequestResponse, status: number, slug: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json().type).toBe(PROBLEM_TYPE_BASE + slug);
}

const get = (url: string, headers: Record<string, string>) => injectJson(t.app, { method: 'GET', url, headers });

function mandateEvent(billerClientId: string, type: 'mandate.created' | 'mandate.updated', mandateId = randomUUID()): EventToRecord {
  return {
    type,
    billerClientId,
    resourceType: 'mandate',
    resourceId: mandateId,
    data: { id: mandateId, status: type === 'mandate.created' ? 'pending_enablement' : 'active', version: type === 'mandate.created' ? 1 : 2 },
  };
}

async function storedEvents(billerClientId: string) {
  return t.db.selectFrom('events').selectAll().where('biller_client_id', '=', billerClientId).execute();
}

describe('GET /events/:event_id', () => {
  it('returns the stored webhook payload', async () => {
    const mandateId = randomUUID();
    await recordEvents(t.db, [mandateEvent(billerA.clientId, 'mandate.created', mandateId)]);
    const [row] = (await storedEvents(billerA.clientId)).filter((e) => e.resource_id === mandateId);
    const response = await get(`/events/${row!.id}`, headersA);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ event: row!.payload });
    expect(response.json().event).toMatchObject({
      id: row!.id,
      type: 'mandate.created',
      created_at: row!.created_at.toISOString(),
      data: { id: mandateId, status: 'pending_enablement', version: 1 },
    });
  });

  it("answers 404 for an unknown id, a non-UUID id and another biller's event", async () => {
    const mandateId = randomUUID();
    await recordEvents(t.db, [mandateEvent(billerA.clientId, 'mandate.updated', mandateId)]);
    const [row] = (await storedEvents(billerA.clientId)).filter((e) => e.resource_id === mandateId);
    expectProblem(await get(`/events/${row!.id}`, headersB), 404, 'not-found');
    expectProblem(await get(`/events/${randomUUID()}`, headersA), 404, 'not-found');
    expectProblem(await get('/events/42', headersA), 404, 'not-found');
  });
});

describe('GET /events', () => {
  let billerC: IssuedCredentials;
  let headersC: Record<string, string>;
  const firstMandate = randomUUID();

  beforeAll(async () => {
    billerC = await createBiller(t.db);
    headersC = await authHeaders(t.app, billerC);
    // One transaction's events share created_at: paging must still order them (by id) without loss.
    await recordEvents(t.db, [
      mandateEvent(billerC.clientId, 'mandate.created', firstMandate),
      mandateEvent(billerC.clientId, 'mandate.updated', firstMandate),
      mandateEvent(billerC.clientId, 'mandate.created'),
      mandateEvent(billerC.clientId, 'mandate.created'),
      mandateEvent(billerC.clientId, 'mandate.updated'),
    ]);
  });

  it('pages through every event once with after, and back with before', async () => {
    const all = await storedEvents(billerC.clientId);
    expect(all).toHaveLength(5);
    const pages: string[][] = [];
    let body: { events: Array<{ id: string; type: string; data: unknown }>; paging: { after: string | null; before: string | null } };
    let after: string | null = null;
    do {
      const response = await get(`/events?limit=2${after ? `&after=${after}` : ''}`, headersC);
      expect(response.statusCode, response.body).toBe(200);
      body = response.json();
      pages.push(body.events.map((e) => e.id));
      after = body.paging.after;
      if (pages.length > 5) throw new Error('paging does not end');
    } while (after);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(new Set(pages.flat()).size).toBe(5);
    expect(pages.flat().sort()).toEqual(all.map((e) => e.id).sort());

    const back: string[][] = [];
    let before = body.paging.before;
    while (before) {
      const response = await get(`/events?limit=2&before=${before}`, headersC);
      body = response.json();
      back.unshift(body.events.map((e) => e.id));
      before = body.paging.before;
      if (back.length > 5) throw new Error('paging does not end');
    }
    expect(back).toEqual(pages.slice(0, -1));
  });

  it('filters by type and by resource', async () => {
    const created = (await get('/events?type=mandate.created', headersC)).json().events;
    expect(created).toHaveLength(3);
    expect(created.every((e: { type: string }) => e.type === 'mandate.created')).toBe(true);

    const ofFirst = (await get(`/events?resource_id=${firstMandate}`, headersC)).json().events;
    expect(ofFirst.map((e: { type: string }) => e.type).sort()).toEqual(['mandate.created', 'mandate.updated']);
    expect(ofFirst.every((e: { data: { id: string } }) => e.data.id === firstMandate)).toBe(true);

    expectProblem(await get('/events?type=mandate.deleted', headersC), 400, 'validation-failed');
  });

  it("never lists another biller's events", async () => {
    await recordEvents(t.db, [mandateEvent(billerB.clientId, 'mandate.created')]);
    const listed = (await get('/events?limit=500', headersB)).json().events.map((e: { id: string }) => e.id);
    const own = (await storedEvents(billerB.clientId)).map((e) => e.id);
    expect(own).toHaveLength(1);
    expect(listed.sort()).toEqual(own.sort());
    const ofC = (await get(`/events?resource_id=${firstMandate}`, headersB)).json().events;
    expect(ofC).toEqual([]);
  });
});

describe('authentication and scopes', () => {
  it('answers 401 without credentials and 403 without events:read', async () => {
    const mandateId = randomUUID();
    await recordEvents(t.db, [mandateEvent(billerA.clientId, 'mandate.created', mandateId)]);
    const [row] = (await storedEvents(billerA.clientId)).filter((e) => e.resource_id === mandateId);
    const noScope = await authHeaders(t.app, billerA, 'mandates:read');
    for (const url of [`/events/${row!.id}`, '/events']) {
      expect((await get(url, {})).statusCode).toBe(401);
      expectProblem(await get(url, noScope), 403, 'insufficient-scope');
    }
  });
});
