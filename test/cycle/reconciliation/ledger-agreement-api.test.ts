import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { composition } from '../../../bin/composition.ts';
import {
  createBiller,
  createCollectionAccount,
  createEmployee,
  createEmployer,
  createMandateRow,
  createOperator,
  createPayroll,
  createPayrollProvider,
  createProviderClient,
  futureMonthlyPayDates,
} from '../../support/factories.ts';
import { readInstructionFile } from '../../support/instruction-file.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Issue 11 item 10, end to end through the public API and the operator CLI: what GET /payments, the
// latest event, the data request, the instruction file, the reconciliation CSV and summary, and the
// payout say must agree after payouts and after a re-run of a reconciled pay date.

const run = promisify(execFile);
const payDates = futureMonthlyPayDates(3);
const first = payDates[0]!;
/** A week after the first pay date: its collections are settled by then, whatever the weekday. */
const payoutDate = new Date(Date.parse(`${first.pay_date}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10);

let t: TestApp;
let host: WorkerHost;
let operator: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' } });
  await createCollectionAccount(t.db);
  operator = await authHeaders(t.app, await createOperator(t.db));
  host = await composition.startWorkers(runtimeOf(t), { schedule: false });
});
afterAll(async () => {
  await host?.close();
  await t?.close();
});

async function deductions(...args: string[]): Promise<string> {
  // What the ledger promises, not cash: payouts follow payroll's report here (test/settlement/cash has the bank side).
  const env = {
    ...process.env,
    DATABASE_URL: t.database.url,
    REDIS_URL: t.config.REDIS_URL,
    QUEUE_PREFIX: t.config.QUEUE_PREFIX,
    LOG_LEVEL: 'silent',
    PAYOUT_FUNDING: 'deducted',
  };
  const { stdout } = await run(process.execPath, ['bin/deductions.mjs', ...args], { env, cwd: process.cwd() });
  return stdout;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`not reached within ${timeoutMs} ms; last ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One employee on a payroll of its own, a biller with a beneficiary account and an active mandate. */
async function oneEmployeePayroll() {
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates });
  const { employee, employment } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
  const billerCredentials = await createBiller(t.db);
  await t.db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: billerCredentials.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Agreement Lending Ltd' })
    .execute();
  const mandate = await createMandateRow(t.db, { billerClientId: billerCredentials.clientId, employeeId: employee.id, payrollId: payroll.id });
  return {
    payrollId: payroll.id,
    employeeId: employee.id,
    payrollReference: employment.payroll_reference,
    mandateId: mandate.id,
    biller: await authHeaders(t.app, billerCredentials),
    provider: await authHeaders(t.app, await createProviderClient(t.db, provider.id)),
  };
}

type World = Awaited<ReturnType<typeof oneEmployeePayroll>>;

async function createPayment(w: World, amount: number) {
  const response = await injectJson(t.app, {
    method: 'POST',
    url: '/payments',
    headers: { ...w.biller, 'idempotency-key': crypto.randomUUID() },
    body: { payment_record: { mandate_id: w.mandateId, amount } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().payment as { id: string; target_pay_date: string };
}

async function pushDeducted(w: World, majorUnits: number) {
  const response = await injectJson(t.app, {
    method: 'POST',
    url: `/deductions/payroll/${w.payrollId}`,
    headers: w.provider,
    body: {
      pay_period: first.pay_period,
      id: `REC-${crypto.randomUUID()}`,
      version: 1,
      salary_deduction: { employee_id: w.employeeId, deduction_amount: majorUnits, currency: 'GBP' },
    },
  });
  expect(response.statusCode, response.body).toBe(200);
}

async function getPayment(w: World, id: string) {
  const response = await injectJson(t.app, { method: 'GET', url: `/payments/${id}`, headers: w.biller });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().payment as Record<string, unknown> & { status: string; version: number };
}

async function latestPaymentEvent(w: World, id: string) {
  const response = await injectJson(t.app, { method: 'GET', url: `/events?resource_id=${id}&limit=500`, headers: w.biller });
  expect(response.statusCode, response.body).toBe(200);
  const events = response.json().events as Array<{ type: string; data: { version: number } }>;
  return events.filter((e) => e.type.startsWith('payment_request.')).reduce((a, b) => (b.data.version > a.data.version ? b : a)).data;
}

describe('events, re-runs and reports agree with the ledger', () => {
  it('a payout that leaves the status alone still makes a new version, and the latest event says what GET says', async () => {
    const w = await oneEmployeePayroll();
    const payment = await createPayment(w, 10_000);
    expect(payment.target_pay_date).toBe(first.pay_date);
    await deductions('nightly', '--date', first.lock_date);
    await pushDeducted(w, 50);
    const reconciled = await until(
      () => getPayment(w, payment.id),
      (p) => p.status === 'partially_collected',
    );
    expect(await latestPaymentEvent(w, payment.id)).toEqual(reconciled);

    await deductions('payouts', 'run', '--date', payoutDate);
    const paid = await getPayment(w, payment.id);
    expect(paid).toMatchObject({ status: 'partially_collected', collected_amount: 5_000, paid_out_amount: 5_000, version: reconciled.version + 1 });
    expect(await latestPaymentEvent(w, payment.id)).toEqual(paid);
  }, 120_000);

  it('a re-run of a reconciled pay date keeps its deduction data, and the data request, file, CSV, summary and payout agree', async () => {
    const w = await oneEmployeePayroll();
    const payment = await createPayment(w, 10_000);
    await deductions('nightly', '--date', first.lock_date);
    await pushDeducted(w, 100);
    await until(
      () => getPayment(w, payment.id),
      (p) => p.status === 'collected',
    );

    const rerun = await deductions(
      'rerun',
      '--payroll',
      w.payrollId,
      '--pay-date',
      first.pay_date,
      '--reason',
      'employer fixed a payroll reference',
      '--by',
      'ops',
      '--force',
    );
    expect(rerun).toMatch(/version 2/);

    const data = await injectJson(t.app, { method: 'GET', url: `/deductions/${w.payrollId}?pay_date=${first.pay_date}&pay_period=${first.pay_period}`, headers: w.provider });
    expect(data.statusCode, data.body).toBe(200);
    const body = data.json();
    expect(body.deduction_data_response).toMatchObject({ total_amount: 100, employee_count: 1 });
    expect(body.deduction_data_response.deduction_data).toEqual([
      { salary_deduction: expect.objectContaining({ employee_id: w.employeeId, requested_deduction_amount: 100 }) },
    ]);
    expect(body.requested_payments).toEqual([{ payment_information: expect.objectContaining({ payment_amount: 100 }) }]);

    const file = await injectJson(t.app, { method: 'GET', url: `/deductions/${w.payrollId}/instruction-file?pay_date=${first.pay_date}`, headers: w.provider });
    expect(file.statusCode, file.body).toBe(200);
    const { items, trailer } = readInstructionFile(file.body);
    expect(items.map((item) => [item.payroll_reference, item.amount])).toEqual([[w.payrollReference, '100.00']]);
    expect(trailer).toMatchObject({ line_count: '1', total_amount: '100.00' });

    // Reconciled again against the new version: the debounced request the re-run made.
    const csv = await until(
      async () => (await injectJson(t.app, { method: 'GET', url: `/reports/reconciliation?pay_date=${first.pay_date}&payroll_id=${w.payrollId}`, headers: operator })).body,
      (text) => text.split('\n').length > 2,
    );
    const rows = parse(csv, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => [row.payment_id, row.requested, row.deducted, row.collected, row.status])).toEqual([[payment.id, '100.00', '100.00', '100.00', 'collected']]);

    const summary = parse(await deductions('export', 'reconciliation', '--pay-date', first.pay_date, '--payroll', w.payrollId, '--summary'), { columns: true });
    expect(summary).toEqual([
      expect.objectContaining({
        requested: '100.00',
        reported: '100.00',
        collected: '100.00',
        held_over_deductions: '0.00',
        held_unexpected_employees: '0.00',
        unaccounted: '0.00',
        exceptions: '0',
      }),
    ]);

    await deductions('payouts', 'run', '--date', payoutDate);
    const payouts = await injectJson(t.app, { method: 'GET', url: '/payouts', headers: w.biller });
    expect(payouts.json().payouts.map((p: { amount: number }) => p.amount)).toEqual([10_000]);
    const paid = await getPayment(w, payment.id);
    expect(paid).toMatchObject({ status: 'paid_out', paid_out_amount: 10_000 });
    expect(await latestPaymentEvent(w, payment.id)).toEqual(paid);
  }, 120_000);
});
