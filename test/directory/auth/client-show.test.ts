import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { knownProblem } from '../../../src/faces/http/plugins/errors.ts';
import { createBiller, createOperator } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let operator: IssuedCredentials;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  operator = await createOperator(t.db);
  headers = await authHeaders(t.app, operator);
});
afterAll(async () => t?.close());

const get = (url: string, as = headers) => t.app.inject({ method: 'GET', url, headers: as });

describe('GET /clients/{client_id}', () => {
  it('shows one client with its key prefixes and never a secret or key', async () => {
    const biller = await createBiller(t.db);
    const response = await get(`/clients/${biller.clientId}`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().client).toMatchObject({
      id: biller.clientId,
      role: 'biller',
      disabled_at: null,
      secret_version: 1,
      api_keys: [{ key_prefix: expect.any(String) }],
    });
    expect(response.body).not.toContain(biller.clientSecret);
    expect(response.body).not.toContain(biller.apiKey);
  });

  it('answers 404 for an unknown or malformed id, and 403 to a biller', async () => {
    expect((await get(`/clients/${randomUUID()}`)).statusCode).toBe(404);
    expect((await get('/clients/nope')).statusCode).toBe(404);
    const biller = await createBiller(t.db);
    expect((await get(`/clients/${biller.clientId}`, await authHeaders(t.app, biller))).statusCode).toBe(403);
  });
});

describe('creating a client', () => {
  it('refuses a payroll provider that does not exist, naming the field', async () => {
    const refusal = await createClient(t.db, { name: 'P', role: 'payroll_provider', payrollProviderId: randomUUID() }).catch((error: unknown) => error);
    expect(knownProblem(refusal)).toMatchObject({ status: 422, slug: 'unknown-payroll-provider', errors: [{ pointer: '/payroll_provider_id' }] });
  });

  it('is audited when an actor is given, without the secret or key', async () => {
    const issued = await t.db.transaction().execute((trx) => createClient(trx, { name: 'Audited Ltd', role: 'biller' }, cliActor('alice')));
    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', issued.clientId).execute();
    expect(audit).toMatchObject([{ action: 'client.created', actor_kind: 'cli', actor: 'alice', after: { name: 'Audited Ltd', role: 'biller' } }]);
    expect(JSON.stringify(audit)).not.toContain(issued.clientSecret);
    expect(JSON.stringify(audit)).not.toContain(issued.apiKey);
  });
});
