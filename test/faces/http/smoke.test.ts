import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createBiller } from '../../support/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('smoke', () => {
  it('answers readyz and issues a token', async () => {
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
    const biller = await createBiller(t.db);
    const headers = await authHeaders(t.app, biller);
    expect(headers.authorization).toMatch(/^Bearer ey/);
    const spec = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(spec.json().paths['/oauth2/token'].post.operationId).toBe('issue_token');
  });
});
