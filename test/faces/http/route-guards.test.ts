import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopes } from '../../../src/directory/auth/scopes.ts';
import type { RouteSpec } from '../../../src/faces/http/route.ts';
import { createBiller, createOperator, createProviderClient } from '../../support/factories.ts';
import { fetchToken, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let clients: Record<'biller' | 'payroll_provider' | 'operator', Credentials>;

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' } });
  // Every scope, so a token can be cut down to "everything but the one this route needs".
  clients = {
    biller: await createBiller(t.db, [...scopes]),
    payroll_provider: await createProviderClient(t.db),
    operator: await createOperator(t.db),
  };
  await t.db
    .updateTable('clients')
    .set({ scopes: [...scopes] })
    .execute();
});
afterAll(async () => t.close());

const protectedRoutes = () => t.app.routeSpecs.filter((spec) => spec.auth.kind !== 'none');

function concreteUrl(spec: RouteSpec): string {
  return spec.url.replace(/:([a-z_]+)/g, () => crypto.randomUUID());
}

function request(spec: RouteSpec, headers: Record<string, string>) {
  const hasBody = spec.method === 'POST' || spec.method === 'PUT';
  return t.app.inject({
    method: spec.method,
    url: concreteUrl(spec),
    headers: { ...headers, ...(hasBody ? { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() } : {}) },
    ...(hasBody ? { payload: '{}' } : {}),
  });
}

describe('every protected route', () => {
  it('exists in numbers (the guard below really iterates the API)', () => {
    expect(protectedRoutes().length).toBeGreaterThanOrEqual(23);
  });

  it('answers 401 problem+json without credentials', async () => {
    for (const spec of protectedRoutes()) {
      const response = await request(spec, {});
      expect(response.statusCode, `${spec.method} ${spec.url}`).toBe(401);
      expect(response.headers['content-type'], `${spec.method} ${spec.url}`).toContain('application/problem+json');
    }
  });

  it('answers 403 insufficient_scope to a token lacking the route’s scope', async () => {
    for (const spec of protectedRoutes()) {
      if (spec.auth.kind === 'none') continue;
      const role = spec.auth.roles?.[0] ?? 'biller';
      const credentials = clients[role];
      const otherScopes = scopes.filter((scope) => scope !== (spec.auth as { scope: string }).scope).join(' ');
      const token = await fetchToken(t.app, credentials, otherScopes);
      const response = await request(spec, { authorization: `Bearer ${token}`, 'x-api-key': credentials.apiKey });
      expect(response.statusCode, `${spec.method} ${spec.url}`).toBe(403);
      expect(response.headers['www-authenticate'], `${spec.method} ${spec.url}`).toContain('insufficient_scope');
    }
  });

  it('passes authentication with the right scope (whatever the route then answers)', async () => {
    for (const spec of protectedRoutes()) {
      if (spec.auth.kind === 'none') continue;
      const role = spec.auth.roles?.[0] ?? 'biller';
      const credentials = clients[role];
      const token = await fetchToken(t.app, credentials, spec.auth.scope);
      const response = await request(spec, { authorization: `Bearer ${token}`, 'x-api-key': credentials.apiKey });
      expect([401, 403], `${spec.method} ${spec.url} answered ${response.statusCode}: ${response.body}`).not.toContain(response.statusCode);
      expect(response.statusCode, `${spec.method} ${spec.url}: ${response.body}`).toBeLessThan(500);
    }
  });
});
