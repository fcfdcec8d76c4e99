import type { Queue } from 'bullmq';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { ConsoleBrowser, signedInAs } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let payDates: Queue;

beforeAll(async () => {
  t = await startTestApp();
  payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
});
afterAll(async () => {
  await payDates?.close();
  await t?.close();
});

/** A call as bull-board's page makes it: fetch with the session cookie, JSON, no form token. */
function boardCall(browser: ConsoleBrowser, method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method, url, cookies: browser.cookies, headers: { accept: 'application/json', ...headers }, ...(method === 'GET' ? {} : { payload: {} }) });
}

const sameOrigin = { 'sec-fetch-site': 'same-origin' };

describe('console queues board', () => {
  it('sends a signed-out visitor to sign in, and refuses a signed-out API call', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console/queues/' });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe(`/console/sign-in?next=${encodeURIComponent('/console/queues/')}`);
    const api = await t.app.inject({ method: 'GET', url: '/console/queues/api/queues' });
    expect(api.statusCode).toBe(303);
    const pause = await t.app.inject({ method: 'PUT', url: `/console/queues/api/queues/${queueNames.payDates}/pause`, headers: sameOrigin, payload: {} });
    expect(pause.statusCode).toBe(401);
    expect(await payDates.isPaused()).toBe(false);
  });

  it('gives an operator the full board, its API, and acts on a queue only from its own origin', async () => {
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const page = await browser.get('/console/queues/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('<base href="/console/queues/"');
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/https?:/);
    const script = page.body.match(/<script defer src="(static\/js\/main[^"]+)"/)?.[1];
    expect(script).toBeDefined();
    expect((await browser.get(`/console/queues/${script}`)).statusCode).toBe(200);

    await payDates.add('probe', { n: 1 });
    const api = await boardCall(browser, 'GET', '/console/queues/api/queues');
    expect(api.statusCode).toBe(200);
    const names = (api.json().queues as { name: string; readOnlyMode: boolean; counts: Record<string, number> }[]).map((queue) => queue.name);
    expect(names).toEqual(expect.arrayContaining(Object.values(queueNames)));
    const listed = (api.json().queues as { name: string; readOnlyMode: boolean; counts: Record<string, number> }[]).find((queue) => queue.name === queueNames.payDates)!;
    expect(listed.readOnlyMode).toBe(false);
    expect(listed.counts.waiting).toBeGreaterThanOrEqual(1);

    const pauseUrl = `/console/queues/api/queues/${queueNames.payDates}/pause`;
    expect((await boardCall(browser, 'PUT', pauseUrl)).statusCode).toBe(403);
    expect((await boardCall(browser, 'PUT', pauseUrl, { 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    expect((await boardCall(browser, 'PUT', pauseUrl, { origin: 'https://elsewhere.example' })).statusCode).toBe(403);
    expect(await payDates.isPaused()).toBe(false);

    const paused = await boardCall(browser, 'PUT', pauseUrl, sameOrigin);
    expect(paused.statusCode, paused.body).toBe(200);
    expect(await payDates.isPaused()).toBe(true);
    const resumed = await boardCall(browser, 'PUT', `/console/queues/api/queues/${queueNames.payDates}/resume`, { origin: 'http://localhost:80' });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(await payDates.isPaused()).toBe(false);
  });

  it('gives finance and viewers the read-only board and refuses them the full board’s actions', async () => {
    for (const role of ['finance', 'viewer'] as const) {
      const { browser } = await signedInAs(t.app, t.db, role);
      const redirected = await browser.get('/console/queues/queue/pay-dates');
      expect(redirected.statusCode).toBe(303);
      expect(redirected.headers.location).toBe('/console/queues-read-only/queue/pay-dates');
      expect((await browser.get('/console/queues')).headers.location).toBe('/console/queues-read-only/');

      const page = await browser.get('/console/queues-read-only/');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<base href="/console/queues-read-only/"');
      const api = await boardCall(browser, 'GET', '/console/queues-read-only/api/queues');
      expect(api.statusCode).toBe(200);
      const queues = api.json().queues as { name: string; readOnlyMode: boolean }[];
      expect(queues.length).toBe(Object.values(queueNames).length);
      expect(queues.every((queue) => queue.readOnlyMode)).toBe(true);

      const waitingBefore = await payDates.getWaitingCount();
      const actions = [
        ['POST', `api/queues/${queueNames.payDates}/add`],
        ['PUT', `api/queues/${queueNames.payDates}/pause`],
      ] as const;
      for (const [method, path] of actions) {
        const full = await boardCall(browser, method, `/console/queues/${path}`, sameOrigin);
        expect(full.statusCode).toBe(403);
        const readOnly = await boardCall(browser, method, `/console/queues-read-only/${path}`, sameOrigin);
        expect(readOnly.statusCode).toBe(403);
      }
      expect(await payDates.getWaitingCount()).toBe(waitingBefore);
      expect(await payDates.isPaused()).toBe(false);
    }
  });
});
