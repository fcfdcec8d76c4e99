import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { upsertEmployer } from '../../../src/directory/payrolls/directory-repository.ts';
import { createOperator, createPayrollProvider } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// An employer's opt-in status decides whether its employees can be offered salary deductions, so
// every move of it is kept: who moved it (an operator, or the provider's own word), when and why.

let t: TestApp;
let operator: IssuedCredentials;
let headers: Record<string, string>;
let providerId: string;

beforeAll(async () => {
  t = await startTestApp();
  operator = await createOperator(t.db);
  headers = await authHeaders(t.app, operator);
  providerId = (await createPayrollProvider(t.db)).id;
});
afterAll(async () => t?.close());

const post = (url: string, body: object) => injectJson(t.app, { method: 'POST', url, headers: { ...headers, 'idempotency-key': randomUUID() }, body });
const get = (url: string) => t.app.inject({ method: 'GET', url, headers });
let n = 0;
const newEmployer = (overrides: Record<string, unknown> = {}) => ({ payroll_provider_id: providerId, external_id: `EMP-${++n}`, name: `Employer ${n} Ltd`, ...overrides });

describe('creating an employer', () => {
  it('keeps its details and opens its opt-in history with its first status; the creation is audited', async () => {
    const response = await post('/admin/employers', newEmployer({ sic_code: '47110', industry_name: 'Retail', salary_deduction_opt_in_status: 'opted_in' }));
    expect(response.statusCode, response.body).toBe(201);
    const employer = response.json().employer;
    expect(employer).toMatchObject({
      payroll_provider_id: providerId,
      sic_code: '47110',
      industry_name: 'Retail',
      salary_deduction_opt_in_status: 'opted_in',
      opt_in_history: [{ from_status: null, to_status: 'opted_in', changed_by: `client ${operator.clientId}`, reason: null, changed_at: expect.any(String) }],
    });
    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', employer.id).execute();
    expect(audit).toMatchObject([{ action: 'employer.created', actor: operator.clientId, resource_type: 'employer' }]);
  });

  it('starts pending unless told otherwise', async () => {
    const response = await post('/admin/employers', newEmployer());
    expect(response.json().employer).toMatchObject({ salary_deduction_opt_in_status: 'pending', sic_code: null, industry_name: null });
  });

  it('answers 409 for an external id the provider already uses, and 422 naming the field for an unknown provider or bad input', async () => {
    const first = newEmployer();
    expect((await post('/admin/employers', first)).statusCode).toBe(201);
    const duplicate = await post('/admin/employers', { ...first, name: 'Another name' });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json().errors).toEqual([expect.objectContaining({ pointer: '/external_id' })]);

    const unknown = await post('/admin/employers', newEmployer({ payroll_provider_id: randomUUID() }));
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().errors).toEqual([expect.objectContaining({ pointer: '/payroll_provider_id' })]);

    for (const [change, pointer] of [
      [{ payroll_provider_id: 'not-a-uuid' }, '/payroll_provider_id'],
      [{ salary_deduction_opt_in_status: 'maybe' }, '/salary_deduction_opt_in_status'],
      [{ sic_code: 'ABC' }, '/sic_code'],
      [{ name: '' }, '/name'],
    ] as const) {
      const refused = await post('/admin/employers', newEmployer(change));
      expect(refused.statusCode, JSON.stringify(change)).toBe(422);
      expect(refused.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
  });
});

describe("changing an employer's opt-in status", () => {
  it('writes the move, with who and why, to its history and the audit log; GET shows the history oldest first', async () => {
    const employer = (await post('/admin/employers', newEmployer())).json().employer;
    const optedIn = await post(`/admin/employers/${employer.id}/opt-in-status`, { salary_deduction_opt_in_status: 'opted_in', reason: 'signed form 2026-11-20' });
    expect(optedIn.statusCode, optedIn.body).toBe(200);
    expect(optedIn.json().employer.salary_deduction_opt_in_status).toBe('opted_in');
    await post(`/admin/employers/${employer.id}/opt-in-status`, { salary_deduction_opt_in_status: 'opted_out', reason: 'withdrew, letter 2026-12-01' });

    const shown = (await get(`/admin/employers/${employer.id}`)).json().employer;
    expect(shown.salary_deduction_opt_in_status).toBe('opted_out');
    expect(shown.opt_in_history.map((c: Record<string, unknown>) => [c.from_status, c.to_status, c.changed_by, c.reason])).toEqual([
      [null, 'pending', `client ${operator.clientId}`, null],
      ['pending', 'opted_in', `client ${operator.clientId}`, 'signed form 2026-11-20'],
      ['opted_in', 'opted_out', `client ${operator.clientId}`, 'withdrew, letter 2026-12-01'],
    ]);
    const audit = await t.db
      .selectFrom('audit_log')
      .selectAll()
      .where('resource_id', '=', employer.id)
      .where('action', '=', 'employer.opt_in_changed')
      .orderBy('at')
      .execute();
    expect(audit).toMatchObject([
      { reason: 'signed form 2026-11-20', before: { salary_deduction_opt_in_status: 'pending' }, after: { salary_deduction_opt_in_status: 'opted_in' } },
      { reason: 'withdrew, letter 2026-12-01', before: { salary_deduction_opt_in_status: 'opted_in' }, after: { salary_deduction_opt_in_status: 'opted_out' } },
    ]);
  });

  it('refuses the status it already has (409), a change without a reason (422) and an unknown employer (404), writing nothing', async () => {
    const employer = (await post('/admin/employers', newEmployer({ salary_deduction_opt_in_status: 'opted_in' }))).json().employer;
    const same = await post(`/admin/employers/${employer.id}/opt-in-status`, { salary_deduction_opt_in_status: 'opted_in', reason: 'again' });
    expect(same.statusCode).toBe(409);
    const noReason = await post(`/admin/employers/${employer.id}/opt-in-status`, { salary_deduction_opt_in_status: 'opted_out', reason: '  ' });
    expect(noReason.statusCode).toBe(422);
    expect(noReason.json().errors).toEqual([expect.objectContaining({ pointer: '/reason' })]);
    expect((await post(`/admin/employers/${randomUUID()}/opt-in-status`, { salary_deduction_opt_in_status: 'opted_out', reason: 'x' })).statusCode).toBe(404);
    expect((await get(`/admin/employers/${employer.id}`)).json().employer.opt_in_history).toHaveLength(1);
  });
});

describe("the provider's own word (directory sync)", () => {
  it('writes a new employer and every change of its opt-in status to the history as the provider sync, and nothing when the status stays', async () => {
    const externalId = `SYNC-${++n}`;
    const details = (optIn: 'pending' | 'opted_in' | 'opted_out', name = 'Synced Ltd') => ({ externalId, name, sicCode: null, industryName: null, optIn });
    const sync = (optIn: 'pending' | 'opted_in' | 'opted_out', name?: string) => t.db.transaction().execute((trx) => upsertEmployer(trx, providerId, details(optIn, name)));
    const id = await sync('pending');
    expect(await sync('pending', 'Synced Renamed Ltd')).toBe(id);
    await sync('opted_in');
    await t.db.transaction().execute((trx) => upsertEmployer(trx, providerId, details('opted_out'), `client ${operator.clientId}`));

    const shown = (await get(`/admin/employers/${id}`)).json().employer;
    expect(shown.salary_deduction_opt_in_status).toBe('opted_out');
    expect(shown.opt_in_history.map((c: Record<string, unknown>) => [c.from_status, c.to_status, c.changed_by])).toEqual([
      [null, 'pending', 'provider sync'],
      ['pending', 'opted_in', 'provider sync'],
      ['opted_in', 'opted_out', `client ${operator.clientId}`],
    ]);
  });
});

describe('listing employers', () => {
  it('lists newest first, of one provider when asked, without their history', async () => {
    const otherProvider = (await createPayrollProvider(t.db)).id;
    const mine = (await post('/admin/employers', newEmployer({ payroll_provider_id: otherProvider }))).json().employer;
    const listed = (await get(`/admin/employers?payroll_provider_id=${otherProvider}`)).json();
    const { opt_in_history: history, ...listedForm } = mine;
    expect(history).toHaveLength(1);
    expect(listed.employers).toEqual([listedForm]);
    expect((await get('/admin/employers?limit=500')).json().employers.length).toBeGreaterThan(1);
    expect((await get('/admin/employers?payroll_provider_id=nope')).statusCode).toBe(400);
    expect((await get(`/admin/employers/${randomUUID()}`)).statusCode).toBe(404);
  });
});
