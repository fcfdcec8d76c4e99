import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { loadHolidays } from '../../../src/directory/calendars/bank-holiday-repository.ts';
import { lockDate } from '../../../src/directory/calendars/lock-date.ts';
import { createEmployer, createOperator, createPayrollProvider } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// A payroll belongs to an employer, and through it to the employer's payroll provider; its calendar
// follows a region's bank holidays, its provider's unless it says otherwise.

let t: TestApp;
let operator: IssuedCredentials;
let headers: Record<string, string>;
let scottishProvider: string;
let employerId: string;

beforeAll(async () => {
  t = await startTestApp();
  operator = await createOperator(t.db);
  headers = await authHeaders(t.app, operator);
  scottishProvider = (await createPayrollProvider(t.db)).id;
  await t.db.updateTable('payroll_providers').set({ region: 'scotland' }).where('id', '=', scottishProvider).execute();
  employerId = (await createEmployer(t.db, scottishProvider)).id;
});
afterAll(async () => t?.close());

const post = (url: string, body: object) => injectJson(t.app, { method: 'POST', url, headers: { ...headers, 'idempotency-key': randomUUID() }, body });
const get = (url: string) => t.app.inject({ method: 'GET', url, headers });
let n = 0;
const newPayroll = (overrides: Record<string, unknown> = {}) => ({
  employer_id: employerId,
  external_id: `PAY-${++n}`,
  name: `Payroll ${n}`,
  payment_run_frequency: 'monthly',
  ...overrides,
});

describe('creating a payroll', () => {
  it('takes its provider from the employer and its bank-holiday region from the provider, in GBP unless told; audited', async () => {
    const response = await post('/admin/payrolls', newPayroll());
    expect(response.statusCode, response.body).toBe(201);
    const payroll = response.json().payroll;
    expect(payroll).toEqual({
      id: expect.any(String),
      employer_id: employerId,
      payroll_provider_id: scottishProvider,
      external_id: `PAY-${n}`,
      name: `Payroll ${n}`,
      payment_run_frequency: 'monthly',
      currency: 'GBP',
      bank_holiday_region: 'scotland',
      // Not live until its first calendar (or an operator) gives it a go-live date.
      go_live_date: null,
      calendar_synced_at: null,
      created_at: expect.any(String),
    });
    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', payroll.id).execute();
    expect(audit).toMatchObject([{ action: 'payroll.created', actor: operator.clientId, after: { bank_holiday_region: 'scotland' } }]);
  });

  it('keeps a region and currency it is given', async () => {
    const payroll = (await post('/admin/payrolls', newPayroll({ bank_holiday_region: 'northern-ireland', currency: 'EUR', payment_run_frequency: 'weekly' }))).json().payroll;
    expect(payroll).toMatchObject({ bank_holiday_region: 'northern-ireland', currency: 'EUR', payment_run_frequency: 'weekly' });
  });

  it("makes a UUID external id the payroll's id, as the reference interface names payrolls by the provider's UUID", async () => {
    const providerUuid = randomUUID().toUpperCase();
    const payroll = (await post('/admin/payrolls', newPayroll({ external_id: providerUuid }))).json().payroll;
    expect(payroll).toMatchObject({ id: providerUuid.toLowerCase(), external_id: providerUuid });
  });

  it('answers 422 naming employer_id for an unknown employer, and 409 for an external id the provider already uses', async () => {
    const unknown = await post('/admin/payrolls', newPayroll({ employer_id: randomUUID() }));
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().errors).toEqual([expect.objectContaining({ pointer: '/employer_id' })]);

    const first = newPayroll();
    expect((await post('/admin/payrolls', first)).statusCode).toBe(201);
    const otherEmployer = (await createEmployer(t.db, scottishProvider)).id;
    const duplicate = await post('/admin/payrolls', { ...first, employer_id: otherEmployer, name: 'Same id, other employer' });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json().errors).toEqual([expect.objectContaining({ pointer: '/external_id' })]);

    // The same external id at another provider is another payroll.
    const elsewhere = (await createPayrollProvider(t.db)).id;
    const elsewhereEmployer = (await createEmployer(t.db, elsewhere)).id;
    expect((await post('/admin/payrolls', { ...first, employer_id: elsewhereEmployer })).statusCode).toBe(201);

    for (const [change, pointer] of [
      [{ payment_run_frequency: 'daily' }, '/payment_run_frequency'],
      [{ currency: 'XYZ' }, '/currency'],
      [{ bank_holiday_region: 'wales' }, '/bank_holiday_region'],
      [{ payroll_provider_id: scottishProvider }, '/payroll_provider_id'],
    ] as const) {
      const refused = await post('/admin/payrolls', newPayroll(change));
      expect(refused.statusCode, JSON.stringify(change)).toBe(422);
      expect(refused.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
  });
});

describe('reading payrolls', () => {
  it('shows one (404 for an unknown id) and lists them by employer or provider', async () => {
    const employer = (await createEmployer(t.db, scottishProvider)).id;
    const a = (await post('/admin/payrolls', newPayroll({ employer_id: employer }))).json().payroll;
    const b = (await post('/admin/payrolls', newPayroll({ employer_id: employer }))).json().payroll;
    expect((await get(`/admin/payrolls/${a.id}`)).json()).toEqual({ payroll: a });
    expect((await get(`/admin/payrolls/${randomUUID()}`)).statusCode).toBe(404);
    expect((await get('/admin/payrolls/PAY-1')).statusCode).toBe(404);
    expect((await get(`/admin/payrolls?employer_id=${employer}`)).json().payrolls).toEqual([b, a]);
    const ofProvider = (await get(`/admin/payrolls?payroll_provider_id=${scottishProvider}&limit=500`)).json().payrolls;
    expect(ofProvider.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(ofProvider.every((p: { payroll_provider_id: string }) => p.payroll_provider_id === scottishProvider)).toBe(true);
  });
});

describe('changing a payroll', () => {
  it("moves its unlocked lock dates to a new region's working days, keeps locked ones, and audits it", async () => {
    const payroll = (await post('/admin/payrolls', newPayroll())).json().payroll;
    expect(payroll.bank_holiday_region).toBe('scotland');
    const { lead_time_working_days: lead } = await t.db
      .selectFrom('payroll_providers')
      .select('lead_time_working_days')
      .where('id', '=', scottishProvider)
      .executeTakeFirstOrThrow();
    // St Andrew's Day, Tuesday 30 November 2027, is a Scottish bank holiday only: the lock before a
    // 1 December cut-off moves when the payroll's region changes.
    const scotland = await loadHolidays(t.db, 'scotland');
    const england = await loadHolidays(t.db, 'england-and-wales');
    const cutoff = '2027-12-01';
    expect(lockDate(cutoff, lead, scotland)).not.toBe(lockDate(cutoff, lead, england));
    await t.db
      .insertInto('pay_dates')
      .values([
        { payroll_id: payroll.id, pay_date: '2027-12-10', payroll_cutoff_date: cutoff, pay_period: '9-2027', lock_date: lockDate(cutoff, lead, scotland) },
        { payroll_id: payroll.id, pay_date: '2027-11-12', payroll_cutoff_date: '2027-11-03', pay_period: '8-2027', lock_date: '2027-10-01', locked_at: new Date() },
      ])
      .execute();

    const response = await post(`/admin/payrolls/${payroll.id}`, { bank_holiday_region: 'england-and-wales', name: 'Renamed', reason: 'run from Leeds now' });

    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ payroll: { id: payroll.id, bank_holiday_region: 'england-and-wales', name: 'Renamed' }, lock_dates_changed: 1 });
    const stored = await t.db.selectFrom('pay_dates').select(['pay_date', 'lock_date']).where('payroll_id', '=', payroll.id).orderBy('pay_date').execute();
    expect(stored).toEqual([
      { pay_date: '2027-11-12', lock_date: '2027-10-01' },
      { pay_date: '2027-12-10', lock_date: lockDate(cutoff, lead, england) },
    ]);
    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', payroll.id).where('action', '=', 'payroll.updated').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      reason: 'run from Leeds now',
      before: { bank_holiday_region: 'scotland' },
      after: { bank_holiday_region: 'england-and-wales', lock_dates_changed: 1 },
    });
  });

  it('answers 404 for an unknown payroll and 422 when nothing is named', async () => {
    expect((await post(`/admin/payrolls/${randomUUID()}`, { name: 'X' })).statusCode).toBe(404);
    const payroll = (await post('/admin/payrolls', newPayroll())).json().payroll;
    const nothing = await post(`/admin/payrolls/${payroll.id}`, { reason: 'just because' });
    expect(nothing.statusCode).toBe(422);
    expect(nothing.json().type).toMatch(/nothing-to-change$/);
  });
});
