import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBiller, createOperator } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { secretBoxFor } from '../../../src/platform/shared/secret-box.ts';
import { openEndpointSecrets } from '../../../src/faces/webhooks/webhook-endpoint-service.ts';
import { webhookEndpointRoutes } from '../../../src/faces/http/routes/webhook-routes.ts';
import { systemResolver, type HostResolver } from '../../../src/faces/webhooks/webhook-target.ts';

let t: TestApp;
/** Private targets forbidden, and a DNS server the test controls (other names go to the real one). */
let strict: TestApp;
const dns: Record<string, Array<{ address: string; family: 4 | 6 }>> = {
  'hooks.biller.test': [{ address: '93.184.216.34', family: 4 }],
  'mixed.biller.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.5', family: 4 },
  ],
  'rebind.biller.test': [{ address: '127.0.0.1', family: 4 }],
  'orchid.biller.test': [{ address: '2001:20::1', family: 6 }],
};
const resolveHost: HostResolver = async (hostname) => dns[hostname] ?? systemResolver(hostname);

beforeAll(async () => {
  [t, strict] = await Promise.all([startTestApp(), startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'false' }, routeModules: [webhookEndpointRoutes({ resolveHost })] })]);
});
afterAll(async () => Promise.all([t?.close(), strict?.close()]));

async function billerHeaders(app: TestApp) {
  return authHeaders(app.app, await createBiller(app.db));
}

describe('POST /webhook-endpoints', () => {
  it('registers an endpoint and shows its whsec_ secret once; reads never show it', async () => {
    const headers = await billerHeaders(t);
    const created = await injectJson(t.app, {
      method: 'POST',
      url: '/webhook-endpoints',
      headers,
      body: { url: 'http://127.0.0.1:9/hooks', event_types: ['mandate.created', 'payout.created'], description: 'Ledger sync' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const endpoint = created.json().webhook_endpoint;
    expect(created.headers.location).toBe(`/webhook-endpoints/${endpoint.id}`);
    expect(endpoint).toMatchObject({
      url: 'http://127.0.0.1:9/hooks',
      description: 'Ledger sync',
      event_types: ['mandate.created', 'payout.created'],
      status: 'enabled',
      disabled_reason: null,
      failing_since: null,
      previous_secret_expires_at: null,
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const one = await injectJson(t.app, { method: 'GET', url: `/webhook-endpoints/${endpoint.id}`, headers });
    expect(one.statusCode).toBe(200);
    expect(one.json().webhook_endpoint).toEqual({ ...endpoint, secret: undefined });
    expect(one.body).not.toContain(endpoint.secret.slice(6));

    const list = await injectJson(t.app, { method: 'GET', url: '/webhook-endpoints', headers });
    expect(list.statusCode).toBe(200);
    expect(list.json().webhook_endpoints.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    expect(list.json().paging).toEqual({ limit: 50, after: null, before: null });
    expect(list.body).not.toContain(endpoint.secret.slice(6));
  });

  it('takes every event type when event_types is left out', async () => {
    const response = await injectJson(t.app, { method: 'POST', url: '/webhook-endpoints', headers: await billerHeaders(t), body: { url: 'http://127.0.0.1:9/all' } });
    expect(response.statusCode).toBe(201);
    expect(response.json().webhook_endpoint).toMatchObject({ event_types: [], description: null });
  });

  it('answers 422 with pointers for unknown event types and unknown fields', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/webhook-endpoints',
      headers: await billerHeaders(t),
      body: { url: 'http://127.0.0.1:9/x', event_types: ['mandate.exploded'], colour: 'red' },
    });
    expect(response.statusCode).toBe(422);
    const pointers = response.json().errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/event_types/0', '/colour']));
  });
});

describe('endpoints per biller (WEBHOOK_ENDPOINTS_PER_BILLER, 10 by default; issue 31, item 2)', () => {
  const register = (headers: Record<string, string>, n: number) =>
    injectJson(t.app, { method: 'POST', url: '/webhook-endpoints', headers, body: { url: `http://127.0.0.1:9/limit-${n}` } });

  it('refuses the 11th with 409 and the limit in a member; a deleted endpoint frees its place; other billers are not counted', async () => {
    expect(t.config.WEBHOOK_ENDPOINTS_PER_BILLER).toBe(10);
    const headers = await billerHeaders(t);
    const ids: string[] = [];
    for (let n = 0; n < 10; n += 1) {
      const created = await register(headers, n);
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.json().webhook_endpoint.id);
    }
    const refused = await register(headers, 10);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ status: 409, webhook_endpoint_limit: 10 });
    expect(refused.json().type).toMatch(/\/webhook-endpoint-limit-reached$/);
    expect(refused.json().detail).toContain('delete one');
    expect((await injectJson(t.app, { method: 'GET', url: '/webhook-endpoints?limit=50', headers })).json().webhook_endpoints).toHaveLength(10);

    // Another biller has its own 10.
    expect((await register(await billerHeaders(t), 11)).statusCode).toBe(201);
    // A disabled endpoint still counts (it can be deleted); a deleted one does not.
    await t.db.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: 'The receiver answered 410 Gone' }).where('id', '=', ids[0]!).execute();
    expect((await register(headers, 12)).statusCode).toBe(409);
    expect((await injectJson(t.app, { method: 'DELETE', url: `/webhook-endpoints/${ids[0]}`, headers })).statusCode).toBe(204);
    expect((await register(headers, 13)).statusCode).toBe(201);
    expect((await register(headers, 14)).statusCode).toBe(409);
  });

  it('holds under registrations at the same moment: 6 at once with 7 registered make 10, not 13', async () => {
    const headers = await billerHeaders(t);
    for (let n = 0; n < 7; n += 1) expect((await register(headers, n)).statusCode).toBe(201);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, n) => register(headers, 100 + n)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 201, 201, 409, 409, 409]);
    expect((await injectJson(t.app, { method: 'GET', url: '/webhook-endpoints?limit=50', headers })).json().webhook_endpoints).toHaveLength(10);
  });
});

describe('URL rules at registration (WEBHOOK_ALLOW_PRIVATE=false)', () => {
  async function register(url: string) {
    return injectJson(strict.app, { method: 'POST', url: '/webhook-endpoints', headers: await billerHeaders(strict), body: { url } });
  }

  it.each([
    ['a host whose DNS answer is 127.0.0.1', 'https://rebind.biller.test/hooks', '127.0.0.1'],
    ['localhost (real DNS)', 'https://localhost:8443/hooks', 'Loopback'],
    ['a private IP literal', 'https://10.1.2.3/hooks', 'Private-Use'],
    ['a loopback IPv6 literal', 'https://[::1]/hooks', 'Loopback Address'],
    ['the cloud metadata address', 'https://169.254.169.254/latest', 'Link Local'],
    ['an IPv4-translated loopback literal', 'https://[::ffff:0:7f00:1]/hooks', 'Loopback 127.0.0.0/8 inside IPv4-translated Address'],
    ['a host whose DNS answer is in ORCHIDv2 (2001:20::/28)', 'https://orchid.biller.test/hooks', 'ORCHIDv2 2001:20::/28'],
    ['a host with one private answer among public ones', 'https://mixed.biller.test/hooks', '10.0.0.5'],
    ['plain http', 'http://hooks.biller.test/hooks', 'https'],
    ['a host that does not resolve', 'https://no-such-host.invalid/hooks', 'does not resolve'],
  ])('refuses %s', async (_case, url, mention) => {
    const response = await register(url);
    expect(response.statusCode, response.body).toBe(422);
    const problem = response.json();
    expect(problem.type).toMatch(/\/webhook-url-not-allowed$/);
    expect(problem.detail).toContain(mention);
    expect(problem.errors).toEqual([{ pointer: '/url', detail: problem.detail }]);
    expect(await strict.db.selectFrom('webhook_endpoints').select('id').where('url', '=', url).execute()).toEqual([]);
  });

  it('accepts an https URL whose host resolves to public addresses only', async () => {
    const response = await register('https://hooks.biller.test/hooks');
    expect(response.statusCode, response.body).toBe(201);
  });
});

describe('GET, DELETE, rotate', () => {
  it('deletes an endpoint: 204, then 404 for reads and a second delete', async () => {
    const headers = await billerHeaders(t);
    const id = (await injectJson(t.app, { method: 'POST', url: '/webhook-endpoints', headers, body: { url: 'http://127.0.0.1:9/d' } })).json().webhook_endpoint.id;
    const deleted = await injectJson(t.app, { method: 'DELETE', url: `/webhook-endpoints/${id}`, headers });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await injectJson(t.app, { method: 'GET', url: `/webhook-endpoints/${id}`, headers })).statusCode).toBe(404);
    expect((await injectJson(t.app, { method: 'DELETE', url: `/webhook-endpoints/${id}`, headers })).statusCode).toBe(404);
    expect((await injectJson(t.app, { method: 'GET', url: '/webhook-endpoints', headers })).json().webhook_endpoints).toEqual([]);
  });

  it('rotates the secret: a new one is shown, the old one stays valid for 24 hours', async () => {
    const headers = await billerHeaders(t);
    const created = (await injectJson(t.app, { method: 'POST', url: '/webhook-endpoints', headers, body: { url: 'http://127.0.0.1:9/r' } })).json().webhook_endpoint;
    const before = Date.now();
    const rotated = await injectJson(t.app, { method: 'POST', url: `/webhook-endpoints/${created.id}/rotate-secret`, headers });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const endpoint = rotated.json().webhook_endpoint;
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(endpoint.secret).not.toBe(created.secret);
    const graceEnds = Date.parse(endpoint.previous_secret_expires_at);
    expect(graceEnds - before).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000);
    expect(graceEnds - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);
    const row = await t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    // Stored sealed, and each opens to the secret shown.
    expect(openEndpointSecrets(row, secretBoxFor(t.config))).toMatchObject({ secret: endpoint.secret, previous_secret: created.secret });
    expect(row.secret).not.toContain(endpoint.secret.slice(6));
  });

  it("never shows, deletes or rotates another biller's endpoint (404), nor a non-UUID id", async () => {
    const owner = await billerHeaders(t);
    const other = await billerHeaders(t);
    const created = (await injectJson(t.app, { method: 'POST', url: '/webhook-endpoints', headers: owner, body: { url: 'http://127.0.0.1:9/o' } })).json().webhook_endpoint;
    for (const [method, url] of [
      ['GET', `/webhook-endpoints/${created.id}`],
      ['DELETE', `/webhook-endpoints/${created.id}`],
      ['POST', `/webhook-endpoints/${created.id}/rotate-secret`],
      ['GET', '/webhook-endpoints/not-a-uuid'],
    ] as const) {
      const response = await injectJson(t.app, { method, url, headers: other });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await injectJson(t.app, { method: 'GET', url: '/webhook-endpoints', headers: other })).json().webhook_endpoints).toEqual([]);
    const row = await t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(openEndpointSecrets(row, secretBoxFor(t.config))).toMatchObject({ deleted_at: null, secret: created.secret, previous_secret: null });
  });
});

describe('authentication', () => {
  it('answers 401 without credentials and 403 without the webhooks:manage scope or the biller role', async () => {
    const anonymous = await injectJson(t.app, { method: 'GET', url: '/webhook-endpoints' });
    expect(anonymous.statusCode).toBe(401);

    const biller = await createBiller(t.db);
    const narrow = await authHeaders(t.app, biller, 'mandates:read');
    const noScope = await injectJson(t.app, { method: 'POST', url: '/webhook-endpoints', headers: narrow, body: { url: 'http://127.0.0.1:9/x' } });
    expect(noScope.statusCode).toBe(403);
    expect(noScope.headers['www-authenticate']).toContain('insufficient_scope');

    const operator = await createOperator(t.db);
    await t.db
      .updateTable('clients')
      .set({ scopes: ['webhooks:manage'] })
      .where('id', '=', operator.clientId)
      .execute();
    const wrongRole = await injectJson(t.app, { method: 'GET', url: '/webhook-endpoints', headers: await authHeaders(t.app, operator) });
    expect(wrongRole.statusCode).toBe(403);
    expect(await t.db.selectFrom('webhook_endpoints').select('id').where('url', '=', 'http://127.0.0.1:9/x').execute()).toEqual([]);
  });
});
