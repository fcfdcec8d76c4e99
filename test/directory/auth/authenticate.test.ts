import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { TokenIssuer } from '../../../src/directory/auth/token-issuer.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { loggerOptions } from '../../../src/platform/shared/logger.ts';
import { defineRoute } from '../../../src/faces/http/route.ts';
import { authHeaders, fetchToken, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createBiller, createOperator, createProviderClient } from '../../support/factories.ts';

function testRoutes(app: FastifyInstance): void {
  const echo = async (ctx: { caller: { clientId: string; role: string; scopes: readonly string[] } }) => ({
    status: 200,
    body: { clientId: ctx.caller.clientId, role: ctx.caller.role, scopes: ctx.caller.scopes },
  });
  defineRoute(app, {
    method: 'GET',
    url: '/test/protected',
    operationId: 'test_protected',
    summary: 'test',
    description: 'A route of this test only.',
    tags: [],
    auth: { kind: 'both', scope: 'payments:read' },
    responses: { 200: { description: 'ok' } },
    handler: echo,
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
    handler: echo,
  });
  defineRoute(app, {
    method: 'GET',
    url: '/test/either-provider-only',
    operationId: 'test_either_provider_only',
    summary: 'test',
    description: 'A route of this test only.',
    tags: [],
    auth: { kind: 'either', scope: 'deduction_data:request', roles: ['payroll_provider'] },
    responses: { 200: { description: 'ok' } },
    handler: echo,
  });
  defineRoute(app, {
    method: 'GET',
    url: '/test/biller-only',
    operationId: 'test_biller_only',
    summary: 'test',
    description: 'A route of this test only.',
    tags: [],
    auth: { kind: 'both', scope: 'reports:read', roles: ['biller'] },
    responses: { 200: { description: 'ok' } },
    handler: echo,
  });
}

let t: TestApp;
let billerA: IssuedCredentials;
let billerB: IssuedCredentials;
let provider: IssuedCredentials;
let providerB: IssuedCredentials;

beforeAll(async () => {
  t = await startTestApp({ routeModules: [testRoutes] });
  billerA = await createBiller(t.db);
  billerB = await createBiller(t.db);
  provider = await createProviderClient(t.db);
  providerB = await createProviderClient(t.db);
});
afterAll(async () => t.close());

function get(url: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers });
}

/** RFC 9457 body of every auth failure: all members present, status agrees, nothing leaked. */
function expectProblem(response: LightMyRequestResponse, status: number, slug?: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = response.json();
  expect(typeof body.type).toBe('string');
  expect(body.type.startsWith(PROBLEM_TYPE_BASE)).toBe(true);
  if (slug) expect(body.type.endsWith(slug)).toBe(true);
  expect(typeof body.title).toBe('string');
  expect(body.title.length).toBeGreaterThan(0);
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe('string');
  expect(typeof body.instance).toBe('string');
  expect(body).not.toHaveProperty('stack');
  expect(response.body).not.toMatch(/\bat .+\(.+:\d+:\d+\)/);
  expect(response.body).not.toContain('clientId');
  return body;
}

function expectInvalidToken(response: LightMyRequestResponse) {
  expectProblem(response, 401);
  expect(response.headers['www-authenticate']).toMatch(/^Bearer\b/);
  expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
}

describe("auth kind 'both'", () => {
  it('lets in a valid token and API key of one client, with the granted scopes', async () => {
    const response = await get('/test/protected', await authHeaders(t.app, billerA));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ clientId: billerA.clientId, role: 'biller' });
    expect([...response.json().scopes].sort()).toEqual([...billerA.scopes].sort());
  });

  it('carries only the scopes the token was issued for', async () => {
    const response = await get('/test/protected', await authHeaders(t.app, billerA, 'payments:read'));
    expect(response.statusCode).toBe(200);
    expect(response.json().scopes).toEqual(['payments:read']);
  });

  it('accepts a lower-case bearer scheme', async () => {
    const token = await fetchToken(t.app, billerA);
    const response = await get('/test/protected', { authorization: `bearer ${token}`, 'x-api-key': billerA.apiKey });
    expect(response.statusCode).toBe(200);
  });

  it('refuses an expired token with 401 invalid_token', async () => {
    const expired = await t.tokens.issue({ clientId: billerA.clientId, scopes: ['payments:read'] }, new Date(Date.now() - 2 * 3600_000));
    const response = await get('/test/protected', { authorization: `Bearer ${expired}`, 'x-api-key': billerA.apiKey });
    expectInvalidToken(response);
  });

  it('refuses a token signed by another key with the same issuer and audience', async () => {
    const stranger = await TokenIssuer.generate({
      issuer: t.config.AUTH_ISSUER,
      audience: t.config.AUTH_AUDIENCE,
      ttlSeconds: 600,
    });
    const forged = await stranger.issue({ clientId: billerA.clientId, scopes: ['payments:read'] });
    const response = await get('/test/protected', { authorization: `Bearer ${forged}`, 'x-api-key': billerA.apiKey });
    expectInvalidToken(response);
  });

  it('refuses a tampered token (payload changed, signature kept)', async () => {
    const token = await fetchToken(t.app, billerA, 'mandates:read');
    const [header, , signature] = token.split('.');
    const payload = Buffer.from(JSON.stringify({ sub: billerA.clientId, client_id: billerA.clientId, scope: 'payments:read' })).toString('base64url');
    const response = await get('/test/protected', {
      authorization: `Bearer ${header}.${payload}.${signature}`,
      'x-api-key': billerA.apiKey,
    });
    expectInvalidToken(response);
  });

  it('refuses garbage in place of a token', async () => {
    const response = await get('/test/protected', { authorization: 'Bearer not.a.jwt', 'x-api-key': billerA.apiKey });
    expectInvalidToken(response);
  });

  it('refuses a token of client A with the API key of client B', async () => {
    const token = await fetchToken(t.app, billerA);
    const response = await get('/test/protected', { authorization: `Bearer ${token}`, 'x-api-key': billerB.apiKey });
    expectProblem(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('refuses a valid token without an API key', async () => {
    const token = await fetchToken(t.app, billerA);
    const response = await get('/test/protected', { authorization: `Bearer ${token}` });
    expectProblem(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('refuses a valid API key without a token', async () => {
    const response = await get('/test/protected', { 'x-api-key': billerA.apiKey });
    expectProblem(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('refuses a request without any credential', async () => {
    const response = await get('/test/protected');
    expectProblem(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('refuses an unknown API key with a valid token', async () => {
    const token = await fetchToken(t.app, billerA);
    const response = await get('/test/protected', { authorization: `Bearer ${token}`, 'x-api-key': 'ak_unknown' });
    expectProblem(response, 401, 'unauthorized');
  });

  it('refuses the client secret presented as the API key', async () => {
    const token = await fetchToken(t.app, billerA);
    const response = await get('/test/protected', {
      authorization: `Bearer ${token}`,
      'x-api-key': billerA.clientSecret,
    });
    expectProblem(response, 401, 'unauthorized');
  });

  it('refuses a malformed Authorization header with 401 invalid_token', async () => {
    const token = await fetchToken(t.app, billerA);
    for (const authorization of [
      token, // scheme missing
      `Basic ${Buffer.from(`${billerA.clientId}:${billerA.clientSecret}`).toString('base64')}`,
      'Bearer',
      `Bearer ${token} extra`,
    ]) {
      const response = await get('/test/protected', { authorization, 'x-api-key': billerA.apiKey });
      expectInvalidToken(response);
    }
  });

  it('refuses insufficient scope with 403 insufficient_scope', async () => {
    const headers = await authHeaders(t.app, billerA, 'mandates:read');
    const response = await get('/test/protected', headers);
    const body = expectProblem(response, 403);
    expect(body.type.endsWith('insufficient-scope')).toBe(true);
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(response.headers['www-authenticate']).toContain('scope="payments:read"');
  });

  it('refuses a client whose scopes do not cover the route even with a full token', async () => {
    // A payroll provider holds no payments:read at all.
    const response = await get('/test/protected', await authHeaders(t.app, provider));
    expectProblem(response, 403, 'insufficient-scope');
  });

  it('refuses a token carrying a scope its client does not hold', async () => {
    // The token endpoint would never mint this; the scope check must still intersect with the client.
    const token = await t.tokens.issue({ clientId: provider.clientId, scopes: ['payments:read'] });
    const response = await get('/test/protected', { authorization: `Bearer ${token}`, 'x-api-key': provider.apiKey });
    expectProblem(response, 403, 'insufficient-scope');
  });

  it('refuses a client of the wrong role with 403', async () => {
    const operator = await createOperator(t.db); // holds reports:read, but is no biller
    const response = await get('/test/biller-only', await authHeaders(t.app, operator));
    expectProblem(response, 403, 'forbidden-role');
    expect((await get('/test/biller-only', await authHeaders(t.app, billerA))).statusCode).toBe(200);
  });

  it('refuses a disabled client: no token, and its API key and existing token stop working', async () => {
    const client = await createBiller(t.db);
    const token = await fetchToken(t.app, client);
    await t.db.updateTable('clients').set({ disabled_at: new Date() }).where('id', '=', client.clientId).execute();
    await expect(fetchToken(t.app, client)).rejects.toThrow(/401/);
    // Never authenticated before, so the short client cache holds nothing for it.
    const response = await get('/test/protected', { authorization: `Bearer ${token}`, 'x-api-key': client.apiKey });
    expectProblem(response, 401);
  });

  it('refuses a revoked API key', async () => {
    const client = await createBiller(t.db);
    await t.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('client_id', '=', client.clientId).execute();
    const response = await get('/test/protected', await authHeaders(t.app, client));
    expectProblem(response, 401, 'unauthorized');
  });
});

describe('verified-token cache', () => {
  /** Counts TokenIssuer.verify calls made by the app while `work` runs. */
  async function countingVerifications(work: () => Promise<void>): Promise<number> {
    const verify = t.tokens.verify;
    let calls = 0;
    t.tokens.verify = (token: string) => {
      calls += 1;
      return verify.call(t.tokens, token);
    };
    try {
      await work();
    } finally {
      t.tokens.verify = verify;
    }
    return calls;
  }

  it('verifies a token once, then lets the same token in from the cache', async () => {
    const token = await fetchToken(t.app, billerA, 'payments:read');
    const headers = { authorization: `Bearer ${token}`, 'x-api-key': billerA.apiKey };
    const calls = await countingVerifications(async () => {
      for (let i = 0; i < 3; i++) {
        const response = await get('/test/protected', headers);
        expect(response.statusCode).toBe(200);
        expect(response.json()).toMatchObject({ clientId: billerA.clientId, scopes: ['payments:read'] });
      }
    });
    expect(calls).toBe(1);
  });

  it('stops letting a cached token in once it expires', async () => {
    // Issued so that it expires about 1.5 s from now (exp has whole seconds).
    const ttlMs = t.tokens.ttlSeconds * 1000;
    const token = await t.tokens.issue({ clientId: billerA.clientId, scopes: ['payments:read'] }, new Date(Date.now() - ttlMs + 1500));
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    const headers = { authorization: `Bearer ${token}`, 'x-api-key': billerA.apiKey };
    expect((await get('/test/protected', headers)).statusCode).toBe(200);
    expect((await get('/test/protected', headers)).statusCode).toBe(200);
    await sleep(exp * 1000 - Date.now() + 50);
    expectInvalidToken(await get('/test/protected', headers));
  });

  it('refuses a tampered copy of a token that is in the cache', async () => {
    const token = await fetchToken(t.app, billerA, 'payments:read');
    expect((await get('/test/protected', { authorization: `Bearer ${token}`, 'x-api-key': billerA.apiKey })).statusCode).toBe(200);
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const widened = Buffer.from(JSON.stringify({ ...claims, scope: 'payments:read reports:read' })).toString('base64url');
    const response = await get('/test/biller-only', { authorization: `Bearer ${header}.${widened}.${signature}`, 'x-api-key': billerA.apiKey });
    expectInvalidToken(response);
  });
});

describe("auth kind 'either'", () => {
  it('lets in an API key alone', async () => {
    const response = await get('/test/either', { 'x-api-key': provider.apiKey });
    expect(response.statusCode).toBe(200);
    expect(response.json().clientId).toBe(provider.clientId);
  });

  it('lets in a token alone', async () => {
    const token = await fetchToken(t.app, provider, 'deduction_data:request');
    const response = await get('/test/either', { authorization: `Bearer ${token}` });
    expect(response.statusCode).toBe(200);
    expect(response.json().clientId).toBe(provider.clientId);
    expect(response.json().scopes).toEqual(['deduction_data:request']);
  });

  it('lets in both of one client', async () => {
    const response = await get('/test/either', await authHeaders(t.app, provider));
    expect(response.statusCode).toBe(200);
  });

  it('refuses a disabled client by API key alone and by token alone', async () => {
    const byKey = await createProviderClient(t.db);
    const byToken = await createProviderClient(t.db);
    const token = await fetchToken(t.app, byToken);
    await t.db.updateTable('clients').set({ disabled_at: new Date() }).where('id', 'in', [byKey.clientId, byToken.clientId]).execute();
    // Neither client has authenticated before, so the short client cache holds nothing for them.
    expectProblem(await get('/test/either', { 'x-api-key': byKey.apiKey }), 401, 'unauthorized');
    expectInvalidToken(await get('/test/either', { authorization: `Bearer ${token}` }));
  });

  it('refuses a token and an API key of different clients', async () => {
    const token = await fetchToken(t.app, provider);
    const response = await get('/test/either', { authorization: `Bearer ${token}`, 'x-api-key': providerB.apiKey });
    expectProblem(response, 401, 'unauthorized');
  });

  it('refuses neither credential', async () => {
    const response = await get('/test/either');
    expectProblem(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('refuses a bad token even next to a good API key', async () => {
    const expired = await t.tokens.issue({ clientId: provider.clientId, scopes: ['deduction_data:request'] }, new Date(Date.now() - 2 * 3600_000));
    const response = await get('/test/either', { authorization: `Bearer ${expired}`, 'x-api-key': provider.apiKey });
    expectInvalidToken(response);
  });

  it('refuses a bad API key even next to a good token', async () => {
    const token = await fetchToken(t.app, provider);
    const response = await get('/test/either', { authorization: `Bearer ${token}`, 'x-api-key': 'ak_nope' });
    expectProblem(response, 401);
  });

  it('refuses a token lacking the scope with 403', async () => {
    const token = await fetchToken(t.app, provider, 'availability:check');
    const response = await get('/test/either', { authorization: `Bearer ${token}` });
    expectProblem(response, 403, 'insufficient-scope');
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
  });

  it('refuses an API key whose client lacks the scope with 403', async () => {
    const response = await get('/test/either', { 'x-api-key': billerA.apiKey });
    expectProblem(response, 403, 'insufficient-scope');
  });

  it('refuses a client of another role with 403, whichever credential it uses', async () => {
    // A biller granted the scope explicitly still is not a payroll provider.
    const odd = await createBiller(t.db, ['deduction_data:request']);
    const byKey = await get('/test/either-provider-only', { 'x-api-key': odd.apiKey });
    expectProblem(byKey, 403, 'forbidden-role');
    const token = await fetchToken(t.app, odd);
    const byToken = await get('/test/either-provider-only', { authorization: `Bearer ${token}` });
    expectProblem(byToken, 403, 'forbidden-role');
    const allowed = await get('/test/either-provider-only', { 'x-api-key': provider.apiKey });
    expect(allowed.statusCode).toBe(200);
  });
});

describe('routes without auth', () => {
  it('ignores credentials on public routes', async () => {
    const response = await get('/healthz', { authorization: 'garbage', 'x-api-key': 'nope' });
    expect(response.statusCode).toBe(200);
  });

  it('answers an unknown route with a problem, not an auth error', async () => {
    const response = await get('/test/nowhere');
    expectProblem(response, 404, 'not-found');
  });
});

describe('logs', () => {
  function capture() {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    return { lines, logger: pino(loggerOptions({ LOG_LEVEL: 'info' }), stream) };
  }

  it('redacts credentials in logged headers and bodies', async () => {
    const { lines, logger } = capture();
    const secret = billerA.clientSecret;
    const apiKey = billerA.apiKey;
    const token = await fetchToken(t.app, billerA);
    logger.info({ req: { headers: { authorization: `Bearer ${token}`, 'x-api-key': apiKey, cookie: 'sid=1' } } }, 'request');
    logger.info({ headers: { authorization: `Basic ${secret}`, 'x-api-key': apiKey } }, 'outbound');
    logger.info({ body: { client_secret: secret, access_token: token }, credentials: { apiKey, clientSecret: secret } }, 'form');
    const output = lines.join('');
    expect(lines).toHaveLength(3);
    for (const value of [secret, apiKey, token, 'sid=1']) expect(output).not.toContain(value);
    expect(output).toContain('[redacted]');
  });

  it('keeps credentials out of the request log of a real request', async () => {
    const { lines, logger } = capture();
    const app = Fastify({ loggerInstance: logger });
    app.get('/x', async () => ({ ok: true }));
    await app.ready();
    const headers = await authHeaders(t.app, billerA);
    await app.inject({ method: 'GET', url: '/x', headers });
    await app.close();
    const output = lines.join('');
    expect(output).toContain('incoming request');
    expect(output).not.toContain(billerA.apiKey);
    expect(output).not.toContain(headers.authorization.slice('Bearer '.length));
  });
});
