import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { calendarDateOf } from '../../../src/cycle/deduction-data/deduction-data-service.ts';
import {
  createBiller,
  createCollectionAccount,
  createEmployee,
  createEmployer,
  createMandateRow,
  createPayroll,
  createPayrollProvider,
  createProviderClient,
} from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';

// Written from the salary-deduction interface's "Salary deduction data response", independently
// of the service's own schema.
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const interfaceDocumentShape = z.strictObject({
  deduction_data_response: z.strictObject({
    payroll_id: uuid,
    pay_date: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)$/),
    id: uuid,
    total_amount: z.number(),
    employee_count: z.number().int(),
    currency: z.string().regex(/^[A-Z]{3}$/),
    deduction_data: z.array(
      z.strictObject({
        salary_deduction: z.strictObject({
          employee_id: z.string(),
          requested_deduction_amount: z.number(),
          payment_reference: z.string(),
        }),
      }),
    ),
  }),
  requested_payments: z.array(
    z.strictObject({
      payment_information: z.strictObject({
        payment_reference: z.string(),
        payment_amount: z.number(),
        payment_account: z.strictObject({
          account_number: z.string(),
          sort_code: z.string().regex(/^\d{2}-\d{2}-\d{2}$/),
          account_holder_name: z.string(),
        }),
      }),
    }),
  ),
});

let t: TestApp;
let provider: { id: string };
let payrollId: string;
let providerCredentials: Awaited<ReturnType<typeof createProviderClient>>;

const calendar = [
  { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
];

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  provider = await createPayrollProvider(t.db);
  providerCredentials = await createProviderClient(t.db, provider.id);
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
  payrollId = payroll.id;
  const biller = await createBiller(t.db);
  const amounts = [12_550, 3_001];
  for (const amount of amounts) {
    const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId, employerId: employer.id });
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId });
    await t.db
      .insertInto('payment_requests')
      .values({
        biller_client_id: biller.clientId,
        mandate_id: mandate.id,
        payroll_id: payrollId,
        employee_id: employee.id,
        currency: 'GBP',
        amount,
        target_pay_date: '2026-11-27',
      })
      .execute();
  }
  await lockPayDate(t.db, payrollId, '2026-11-27');
});
afterAll(async () => t.close());

const url = (id: string, query: string) => `/deductions/${id}?${query}`;

describe('GET /deductions/{payroll_id}', () => {
  it('serves the locked snapshot in exactly the interface shape, money in exact major units', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: url(payrollId, 'pay_date=2026-11-27T00:00:00Z&pay_period=8-2026'),
      headers: await authHeaders(t.app, providerCredentials),
    });
    expect(response.statusCode).toBe(200);
    const body = interfaceDocumentShape.parse(response.json());
    expect(body.deduction_data_response).toMatchObject({
      payroll_id: payrollId,
      pay_date: '2026-11-27T00:00:00+00:00',
      total_amount: 155.51,
      employee_count: 2,
      currency: 'GBP',
    });
    expect(body.deduction_data_response.deduction_data.map((d) => d.salary_deduction.requested_deduction_amount).sort()).toEqual([125.5, 30.01]);
    expect(response.body).toContain('"requested_deduction_amount":125.5');
    expect(body.requested_payments).toHaveLength(1);
    expect(body.requested_payments[0]!.payment_information).toMatchObject({
      payment_amount: 155.51,
      payment_account: { sort_code: '04-00-04', account_number: '41234978' },
    });
  });

  it('accepts the API key alone or the bearer token alone', async () => {
    const byKey = await t.app.inject({ method: 'GET', url: url(payrollId, 'pay_date=2026-11-27'), headers: { 'x-api-key': providerCredentials.apiKey } });
    expect(byKey.statusCode).toBe(200);
    const { authorization } = await authHeaders(t.app, providerCredentials);
    const byToken = await t.app.inject({ method: 'GET', url: url(payrollId, 'pay_date=2026-11-27'), headers: { authorization } });
    expect(byToken.statusCode).toBe(200);
    const neither = await t.app.inject({ method: 'GET', url: url(payrollId, 'pay_date=2026-11-27') });
    expect(neither.statusCode).toBe(401);
  });

  it('answers 409 before the lock and says when it will be final', async () => {
    const response = await t.app.inject({ method: 'GET', url: url(payrollId, 'pay_date=2026-12-24'), headers: { 'x-api-key': providerCredentials.apiKey } });
    expect(response.statusCode).toBe(409);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json().detail).toContain('2026-12-15');
    expect(response.json().lock_date).toBe('2026-12-15');
  });

  it('answers 404 for an unknown payroll, an unknown pay date and another provider’s payroll', async () => {
    const headers = { 'x-api-key': providerCredentials.apiKey };
    const unknownPayroll = await t.app.inject({ method: 'GET', url: url(crypto.randomUUID(), 'pay_date=2026-11-27'), headers });
    expect(unknownPayroll.statusCode).toBe(404);
    const notUuid = await t.app.inject({ method: 'GET', url: url('payroll-1', 'pay_date=2026-11-27'), headers });
    expect(notUuid.statusCode).toBe(404);
    const unknownDate = await t.app.inject({ method: 'GET', url: url(payrollId, 'pay_date=2026-11-28'), headers });
    expect(unknownDate.statusCode).toBe(404);
    const otherProvider = await createProviderClient(t.db);
    const foreign = await t.app.inject({ method: 'GET', url: url(payrollId, 'pay_date=2026-11-27'), headers: { 'x-api-key': otherProvider.apiKey } });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).not.toContain(payrollId.slice(0, 8) + '"');
  });

  it('answers 422 for a pay period that does not match the calendar, naming the right one', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: url(payrollId, 'pay_date=2026-11-27&pay_period=9-2026'),
      headers: { 'x-api-key': providerCredentials.apiKey },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[0]).toMatchObject({ pointer: '/query/pay_period' });
    expect(response.json().detail).toContain('8-2026');
  });

  it('is closed to billers (403) and needs the scope', async () => {
    const biller = await createBiller(t.db);
    const response = await t.app.inject({ method: 'GET', url: url(payrollId, 'pay_date=2026-11-27'), headers: await authHeaders(t.app, biller) });
    expect(response.statusCode).toBe(403);
  });
});

describe('calendarDateOf', () => {
  it.each([
    ['2026-11-27', '2026-11-27'],
    ['2026-11-27T00:00:00Z', '2026-11-27'],
    ['2026-06-26T23:30:00Z', '2026-06-27'],
    ['2026-11-27T00:00:00+01:00', '2026-11-26'],
    ['2026-11-27T23:59:59+00:00', '2026-11-27'],
  ])('%s is %s in London', (value, expected) => {
    expect(calendarDateOf(value, 'Europe/London')).toBe(expected);
  });

  it('rejects non-dates', () => {
    expect(calendarDateOf('tomorrow', 'Europe/London')).toBeNull();
    expect(calendarDateOf('2026-02-30', 'Europe/London')).toBeNull();
  });
});
