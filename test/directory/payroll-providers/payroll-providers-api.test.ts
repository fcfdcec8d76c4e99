import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { openProviderClientSecret } from '../../../src/directory/payroll-providers/provider-credentials.ts';
import { isSealed, secretBoxFor } from '../../../src/platform/shared/secret-box.ts';
import { loadHolidays } from '../../../src/directory/calendars/bank-holiday-repository.ts';
import { lockDate } from '../../../src/directory/calendars/lock-date.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { createBiller, createEmployer, createOperator, createPayroll } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Operators onboard live payroll providers over the API. The client secret we present to a provider
// is ours to keep: sealed at rest, never in an answer or the audit log.

let t: TestApp;
let operator: IssuedCredentials;
let headers: Record<string, string>;

beforeAll(async () => {
  // Not the schema's old fixed 2: a provider created without a lead time takes the installation's.
  t = await startTestApp({ env: { DEFAULT_PROVIDER_LEAD_DAYS: '4' } });
  operator = await createOperator(t.db);
  headers = await authHeaders(t.app, operator);
});
afterAll(async () => t?.close());

const SECRET = 'provider-issued-s3cret-value';
const apiConnection = {
  kind: 'reference_api',
  base_url: 'https://payroll.acme.example/api',
  token_url: 'https://payroll.acme.example/oauth2/token',
  client_id: 'salary-deductions',
  client_secret: SECRET,
};

const post = (url: string, body: object, extra: Record<string, string> = { 'idempotency-key': randomUUID() }) =>
  injectJson(t.app, { method: 'POST', url, headers: { ...headers, ...extra }, body });
const get = (url: string) => t.app.inject({ method: 'GET', url, headers });
const auditOf = (id: string) => t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', id).orderBy('at').orderBy('id').execute();
const stored = (id: string) => t.db.selectFrom('payroll_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('creating a payroll provider', () => {
  it('reached through its API: the secret is sealed at rest, and neither the answer nor the audit log holds it', async () => {
    const response = await post('/admin/payroll-providers', { name: 'Acme Payroll', region: 'scotland', lead_time_working_days: 3, connection: apiConnection });
    expect(response.statusCode, response.body).toBe(201);
    const provider = response.json().payroll_provider;
    expect(provider).toEqual({
      id: expect.any(String),
      name: 'Acme Payroll',
      region: 'scotland',
      lead_time_working_days: 3,
      sandbox: false,
      connection: {
        kind: 'reference_api',
        base_url: apiConnection.base_url,
        token_url: apiConnection.token_url,
        client_id: 'salary-deductions',
        client_secret_set: true,
      },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(response.body).not.toContain(SECRET);

    const row = await stored(provider.id);
    expect(isSealed(row.api_client_secret!)).toBe(true);
    expect(openProviderClientSecret(row.api_client_secret, secretBoxFor(t.config), row.id)).toBe(SECRET);

    const audit = await auditOf(provider.id);
    expect(audit).toMatchObject([{ action: 'payroll_provider.created', actor_kind: 'client', actor: operator.clientId, resource_type: 'payroll_provider' }]);
    expect(JSON.stringify(audit)).not.toContain(SECRET);
    expect((await get(`/admin/payroll-providers/${provider.id}`)).body).not.toContain(SECRET);
  });

  it('served by files only, with the defaults: England and Wales, the lead time DEFAULT_PROVIDER_LEAD_DAYS says', async () => {
    const response = await post('/admin/payroll-providers', { name: 'Files Payroll', connection: { kind: 'files' } });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().payroll_provider).toMatchObject({ region: 'england-and-wales', lead_time_working_days: 4, connection: { kind: 'files' }, sandbox: false });
    expect(await stored(response.json().payroll_provider.id)).toMatchObject({ api_base_url: null, api_client_secret: null });
  });

  it.each([
    [{ name: 'X', connection: { kind: 'files' }, lead_time_working_days: 31 }, '/lead_time_working_days'],
    [{ name: 'X', connection: { kind: 'files' }, lead_time_working_days: -1 }, '/lead_time_working_days'],
    [{ name: 'X', connection: { kind: 'files' }, lead_time_working_days: 1.5 }, '/lead_time_working_days'],
    [{ name: 'X', connection: { kind: 'files' }, region: 'wales' }, '/region'],
    [{ name: ' ', connection: { kind: 'files' } }, '/name'],
    [{ name: 'X' }, '/connection'],
    [{ name: 'X', connection: { ...apiConnection, client_secret: undefined } }, '/connection/client_secret'],
    [{ name: 'X', connection: { ...apiConnection, base_url: 'ftp://payroll.example' } }, '/connection/base_url'],
    [{ name: 'X', connection: { kind: 'files', base_url: 'https://a.example' } }, '/connection/base_url'],
    [{ name: 'X', connection: { kind: 'files' }, sandbox: true }, '/sandbox'],
  ])('refuses %o with 422 naming %s', async (body, pointer) => {
    const response = await post('/admin/payroll-providers', body);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  });

  it('needs an Idempotency-Key, and a replay creates nothing more', async () => {
    expect((await post('/admin/payroll-providers', { name: 'No key', connection: { kind: 'files' } }, {})).statusCode).toBe(400);
    const key = randomUUID();
    const first = await post('/admin/payroll-providers', { name: 'Once Payroll', connection: { kind: 'files' } }, { 'idempotency-key': key });
    const again = await post('/admin/payroll-providers', { name: 'Once Payroll', connection: { kind: 'files' } }, { 'idempotency-key': key });
    expect(again.json()).toEqual(first.json());
    expect(await t.db.selectFrom('payroll_providers').select('id').where('name', '=', 'Once Payroll').execute()).toHaveLength(1);
  });
});

describe('changing a payroll provider', () => {
  it('changes what is named and keeps the rest: a rotated secret is sealed, the URLs and secret survive a lead-time change', async () => {
    const created = (await post('/admin/payroll-providers', { name: 'Change Me', connection: apiConnection })).json().payroll_provider;
    const leadTime = await post(`/admin/payroll-providers/${created.id}`, { lead_time_working_days: 5, reason: 'provider asked, OPS-7' });
    expect(leadTime.statusCode, leadTime.body).toBe(200);
    expect(leadTime.json().payroll_provider).toMatchObject({ name: 'Change Me', lead_time_working_days: 5, connection: created.connection });
    const sealedBefore = (await stored(created.id)).api_client_secret;

    const rotated = await post(`/admin/payroll-providers/${created.id}`, { connection: { kind: 'reference_api', client_secret: 'rotated-secret-2' } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().payroll_provider.connection).toEqual(created.connection);
    const row = await stored(created.id);
    expect(row.api_client_secret).not.toBe(sealedBefore);
    expect(openProviderClientSecret(row.api_client_secret, secretBoxFor(t.config), row.id)).toBe('rotated-secret-2');

    const audit = await auditOf(created.id);
    expect(audit.map((entry) => [entry.action, entry.reason])).toEqual([
      ['payroll_provider.created', null],
      ['payroll_provider.updated', 'provider asked, OPS-7'],
      ['payroll_provider.updated', null],
    ]);
    expect(audit[1]).toMatchObject({ before: { lead_time_working_days: 4 }, after: { lead_time_working_days: 5 } });
    expect(audit[2]!.after).toMatchObject({ client_secret_replaced: true });
    expect(JSON.stringify(audit)).not.toMatch(/rotated-secret-2|provider-issued/);

    const toFiles = await post(`/admin/payroll-providers/${created.id}`, { connection: { kind: 'files' }, region: 'northern-ireland' });
    expect(toFiles.json().payroll_provider).toMatchObject({ region: 'northern-ireland', connection: { kind: 'files' } });
    expect(await stored(created.id)).toMatchObject({ api_base_url: null, api_token_url: null, api_client_id: null, api_client_secret: null });
  });

  it('refuses a files-only provider moving to its API without every field (422 naming each), an empty change, and an unknown id (404)', async () => {
    const created = (await post('/admin/payroll-providers', { name: 'Files First', connection: { kind: 'files' } })).json().payroll_provider;
    const incomplete = await post(`/admin/payroll-providers/${created.id}`, { connection: { kind: 'reference_api', base_url: 'https://x.example' } });
    expect(incomplete.statusCode).toBe(422);
    expect(incomplete.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/connection/token_url', '/connection/client_id', '/connection/client_secret']);
    expect((await post(`/admin/payroll-providers/${created.id}`, {})).statusCode).toBe(422);
    expect((await post(`/admin/payroll-providers/${randomUUID()}`, { name: 'Nobody' })).statusCode).toBe(404);
    expect((await post('/admin/payroll-providers/not-a-uuid', { name: 'Nobody' })).statusCode).toBe(404);
    expect((await auditOf(created.id)).map((entry) => entry.action)).toEqual(['payroll_provider.created']);
  });
});

describe("a new lead time moves its payrolls' lock dates", () => {
  it('2 -> 10 working days: an unlocked pay date gets what lockDate() gives, a locked one keeps its own; audited with the count', async () => {
    const created = (await post('/admin/payroll-providers', { name: 'Lead Time Payroll', lead_time_working_days: 2, connection: { kind: 'files' } })).json().payroll_provider;
    const employer = await createEmployer(t.db, created.id);
    // Cut-offs in a Scottish payroll whose region's holidays (St Andrew's Day, Christmas) the new lock dates must skip.
    const payroll = await createPayroll(t.db, {
      providerId: created.id,
      employerId: employer.id,
      payDates: [
        { pay_date: '2031-11-28', payroll_cutoff_date: '2031-11-21', pay_period: '8-2031', lock_date: '2031-11-19' },
        { pay_date: '2031-12-31', payroll_cutoff_date: '2031-12-29', pay_period: '9-2031', lock_date: '2031-12-24' },
      ],
    });
    await t.db.updateTable('payrolls').set({ bank_holiday_region: 'scotland' }).where('id', '=', payroll.id).execute();
    await t.db.updateTable('pay_dates').set({ locked_at: new Date() }).where('payroll_id', '=', payroll.id).where('pay_date', '=', '2031-11-28').execute();

    const response = await post(`/admin/payroll-providers/${created.id}`, { lead_time_working_days: 10, reason: 'provider needs two weeks, OPS-9' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ payroll_provider: { lead_time_working_days: 10 }, lock_dates_changed: 1 });

    const expected = lockDate('2031-12-29', 10, await loadHolidays(t.db, 'scotland'));
    expect(expected).not.toBe('2031-12-24');
    const rows = await t.db.selectFrom('pay_dates').select(['pay_date', 'lock_date']).where('payroll_id', '=', payroll.id).orderBy('pay_date').execute();
    expect(rows).toEqual([
      { pay_date: '2031-11-28', lock_date: '2031-11-19' },
      { pay_date: '2031-12-31', lock_date: expected },
    ]);

    const audit = await auditOf(created.id);
    expect(audit.map((entry) => [entry.action, entry.reason])).toEqual([
      ['payroll_provider.created', null],
      ['payroll_provider.updated', 'provider needs two weeks, OPS-9'],
    ]);
    expect(audit[1]).toMatchObject({ before: { lead_time_working_days: 2 }, after: { lead_time_working_days: 10, lock_dates_changed: 1 } });
  });
});

describe('a sandbox provider', () => {
  it('refuses any connection change with 409 sandbox-provider, and nothing is stored or audited', async () => {
    const sandbox = await t.db
      .insertInto('payroll_providers')
      .values({ name: 'Sandbox Payroll', sandbox: true, api_base_url: null, api_token_url: null, api_client_id: null, api_client_secret: null, lead_time_working_days: 2 })
      .returningAll()
      .executeTakeFirstOrThrow();
    for (const connection of [apiConnection, { kind: 'files' }]) {
      const refused = await post(`/admin/payroll-providers/${sandbox.id}`, { connection, name: 'Now live?' });
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}sandbox-provider`, detail: expect.stringMatching(/simulated and never reached/) });
    }
    expect(await stored(sandbox.id)).toMatchObject({ name: 'Sandbox Payroll', api_base_url: null, api_client_secret: null });
    expect(await auditOf(sandbox.id)).toEqual([]);
  });
});

describe('reading payroll providers', () => {
  it('shows one, lists them newest first in pages, and answers 404 for an unknown id', async () => {
    const a = (await post('/admin/payroll-providers', { name: 'List A', connection: { kind: 'files' } })).json().payroll_provider;
    const b = (await post('/admin/payroll-providers', { name: 'List B', connection: { kind: 'files' } })).json().payroll_provider;
    expect((await get(`/admin/payroll-providers/${a.id}`)).json()).toEqual({ payroll_provider: a });
    expect((await get(`/admin/payroll-providers/${randomUUID()}`)).statusCode).toBe(404);
    expect((await get('/admin/payroll-providers/nope')).statusCode).toBe(404);
    const page = (await get('/admin/payroll-providers?limit=2')).json();
    expect(page.payroll_providers.map((p: { id: string }) => p.id)).toEqual([b.id, a.id]);
    expect(page.paging.after).toEqual(expect.any(String));
    const next = (await get(`/admin/payroll-providers?limit=2&after=${page.paging.after}`)).json();
    expect(next.payroll_providers.map((p: { id: string }) => p.id)).not.toContain(a.id);
  });
});

describe('who may', () => {
  it('billers may not; an operator with admin:read only may read and not write', async () => {
    const biller = await createBiller(t.db);
    const billerHeaders = await authHeaders(t.app, biller);
    expect((await t.app.inject({ method: 'GET', url: '/admin/payroll-providers', headers: billerHeaders })).statusCode).toBe(403);
    const reader = await createClient(t.db, { name: 'Reader', role: 'operator', scopes: ['admin:read'] });
    const readerHeaders = await authHeaders(t.app, reader);
    expect((await t.app.inject({ method: 'GET', url: '/admin/payroll-providers', headers: readerHeaders })).statusCode).toBe(200);
    const refused = await injectJson(t.app, {
      method: 'POST',
      url: '/admin/payroll-providers',
      headers: { ...readerHeaders, 'idempotency-key': randomUUID() },
      body: { name: 'Not allowed', connection: { kind: 'files' } },
    });
    expect(refused.statusCode).toBe(403);
  });
});
