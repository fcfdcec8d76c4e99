import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushInstructionsToProvider } from '../../../src/cycle/instructions/provider-push-service.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { httpAdapterFactory } from '../../../src/directory/payroll-providers/http-adapter.ts';
import { employeePushRecordSchema } from '../../../src/directory/payroll-providers/reference-schemas.ts';
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

// The employee push the service sends a provider's API carries the payments the data request
// shows for that employee and pay date: the same reference and account, the employee's own amount,
// in major units. A fake provider API records every body exactly as it arrived over HTTP.

interface PaymentInformation {
  payment_reference: string;
  payment_amount: number;
  payment_account: { account_number: string; sort_code: string; account_holder_name: string };
}
interface PushedBody {
  pay_period: string;
  id: string;
  version: number;
  salary_deduction: { employee_id: string; deduction_amount: number; currency: string };
  requested_payments: Array<{ payment_information: PaymentInformation }>;
}
interface DataResponse {
  deduction_data_response: { deduction_data: Array<{ salary_deduction: { employee_id: string; requested_deduction_amount: number; payment_reference: string } }> };
  requested_payments: Array<{ payment_information: PaymentInformation }>;
}

const calendar = [
  { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
];

let t: TestApp;
let payrollId: string;
let providerHeaders: Record<string, string>;
const pushed: PushedBody[] = [];
let closeProvider: () => Promise<void>;
const adapterFor = httpAdapterFactory({ timeoutMs: 3_000, backoffBaseMs: 10 });
/** Employees by role: two billers' requests (a), one request (b), deducted on the first pay date only (c). */
const staff: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };

beforeAll(async () => {
  t = await startTestApp();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const record = JSON.parse(body) as PushedBody;
      pushed.push(record);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ...record, payroll_id: payrollId, requested_payments: undefined, outcome: 'Accepted' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeProvider = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });

  await createCollectionAccount(t.db);
  const provider = await createPayrollProvider(t.db);
  await t.db
    .updateTable('payroll_providers')
    .set({ api_base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
    .where('id', '=', provider.id)
    .execute();
  providerHeaders = await authHeaders(t.app, await createProviderClient(t.db, provider.id));
  const employer = await createEmployer(t.db, provider.id);
  payrollId = (await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar })).id;

  const billers = [await createBiller(t.db), await createBiller(t.db)];
  const request = async (billerIndex: number, employeeId: string, amount: number, payDate: string) => {
    const biller = billers[billerIndex]!;
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId, payrollId });
    await t.db
      .insertInto('payment_requests')
      .values({ biller_client_id: biller.clientId, mandate_id: mandate.id, payroll_id: payrollId, employee_id: employeeId, currency: 'GBP', amount, target_pay_date: payDate })
      .execute();
  };
  for (const role of ['a', 'b', 'c'] as const) staff[role] = (await createEmployee(t.db, { providerId: provider.id, payrollId, employerId: employer.id })).employee.id;
  await request(0, staff.a, 12_550, calendar[0]!.pay_date);
  await request(1, staff.a, 449, calendar[0]!.pay_date);
  await request(0, staff.b, 3_001, calendar[0]!.pay_date);
  await request(0, staff.c, 1_000, calendar[0]!.pay_date);
  // The second pay date: a and b asked other amounts (amend), c nothing (stop).
  await request(0, staff.a, 2_000, calendar[1]!.pay_date);
  await request(1, staff.b, 5, calendar[1]!.pay_date);
});
afterAll(async () => {
  await closeProvider();
  await t.close();
});

async function dataResponse(payDate: string): Promise<DataResponse> {
  const response = await t.app.inject({ method: 'GET', url: `/deductions/${payrollId}?pay_date=${payDate}`, headers: providerHeaders });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** What the data response shows for one employee, as a push's requested_payments: their amount, in its payments. */
function paymentsShownFor(data: DataResponse, employeeId: string) {
  const line = data.deduction_data_response.deduction_data.find((d) => d.salary_deduction.employee_id === employeeId);
  if (!line) return [];
  return data.requested_payments.map(({ payment_information: payment }) => ({
    payment_information: { ...payment, payment_amount: line.salary_deduction.requested_deduction_amount },
  }));
}

async function lockAndPush(payDate: string): Promise<PushedBody[]> {
  const before = pushed.length;
  await lockPayDate(t.db, payrollId, payDate);
  const counts = await pushInstructionsToProvider(t.db, adapterFor, payrollId, payDate);
  expect(counts.failed).toBe(0);
  const bodies = pushed.slice(before);
  expect(bodies).toHaveLength(counts.sent);
  // Every body is a push record as the interface defines it, strictly.
  for (const body of bodies) employeePushRecordSchema.parse(body);
  return bodies;
}

const bodyOf = (bodies: readonly PushedBody[], employeeId: string) => bodies.find((body) => body.salary_deduction.employee_id === employeeId)!;

describe('the employee push carries the requested payments of the data response', () => {
  it('gives each employee the data response payment, for their own amount in major units, to the collection account', async () => {
    const bodies = await lockAndPush(calendar[0]!.pay_date);
    const data = await dataResponse(calendar[0]!.pay_date);
    expect(bodies.map((body) => body.salary_deduction.employee_id).sort()).toEqual([staff.a, staff.b, staff.c].sort());

    for (const body of bodies) expect(body.requested_payments, body.salary_deduction.employee_id).toEqual(paymentsShownFor(data, body.salary_deduction.employee_id));
    // Spelled out for one of them: two billers' requests, one deduction, one part of the employer's transfer.
    const [remittance] = data.requested_payments;
    expect(remittance!.payment_information.payment_reference).toMatch(/^SDR261127P\d{8}$/);
    expect(bodyOf(bodies, staff.a).requested_payments).toEqual([
      {
        payment_information: {
          payment_reference: remittance!.payment_information.payment_reference,
          payment_amount: 129.99,
          payment_account: { account_number: '41234978', sort_code: '04-00-04', account_holder_name: 'Salary Deductions Collections Ltd' },
        },
      },
    ]);
    expect(bodyOf(bodies, staff.a).salary_deduction.deduction_amount).toBe(129.99);
    // Every employee was pushed (all new): their parts add up to the payment the data response asks for.
    const parts = bodies.reduce((sum, body) => sum + Math.round(body.requested_payments[0]!.payment_information.payment_amount * 100), 0);
    expect(parts).toBe(Math.round(remittance!.payment_information.payment_amount * 100));
    expect(parts).toBe(12_999 + 3_001 + 1_000);
  });

  it('gives an employee with nothing to deduct (a stop) no payments, and the others the new pay date’s', async () => {
    const bodies = await lockAndPush(calendar[1]!.pay_date);
    const data = await dataResponse(calendar[1]!.pay_date);
    const stop = bodyOf(bodies, staff.c);
    expect(stop.salary_deduction.deduction_amount).toBe(0);
    expect(stop.requested_payments).toEqual([]);
    expect(paymentsShownFor(data, staff.c)).toEqual([]);

    expect(bodyOf(bodies, staff.a).requested_payments).toEqual(paymentsShownFor(data, staff.a));
    expect(bodyOf(bodies, staff.b).requested_payments).toEqual([{ payment_information: { ...data.requested_payments[0]!.payment_information, payment_amount: 0.05 } }]);
    expect(data.requested_payments[0]!.payment_information.payment_reference).toMatch(/^SDR261224P\d{8}$/);
  });
});
