import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDescription } from '../../../src/faces/sandbox/sandbox-setup-service.ts';
import { createBiller, createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { callerOf, makeSandbox, mandateBody, sandboxCredentials, type Call } from './sandbox-api.ts';

// A sandbox biller drives payments from creation to payout through the API and the simulation
// operations only, as an integrator would: nothing here waits for a calendar or runs a job by hand.

let t: TestApp;
let sandbox: SandboxDescription;
let call: Call;

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  const live = await createBiller(t.db);
  sandbox = await makeSandbox(t.db, t.config, live.clientId, { employers: 4, employees: 8 });
  call = await callerOf(t.app, sandboxCredentials(sandbox));
});
afterAll(async () => t?.close());

async function ok(method: 'GET' | 'POST', url: string, body?: unknown, status = [200, 201]) {
  const response = await call(method, url, body);
  expect(status, `${method} ${url}: ${JSON.stringify(response.json())}`).toContain(response.statusCode);
  return response.json();
}

/** Availability, mandate, enablement and a payment request for one person, as a biller's onboarding does. */
async function enrol(
  person: { national_registration_number: string | null; family_name: string; given_name: string; date_of_birth: string | null },
  amount: number,
  reference: string,
  allowPostDueDateDeduction = true,
  /** The payroll to enrol on, for a person the directory may also employ elsewhere; else the first fit. */
  onPayroll?: string,
) {
  const check = await ok('POST', '/deductions/availability/full', {
    availability_check: {
      national_registration_number: person.national_registration_number,
      given_name: person.given_name,
      family_name: person.family_name,
      date_of_birth: person.date_of_birth,
      currency: 'GBP',
    },
  });
  expect(check.availability_check.availability_status).toBe('confirmed');
  const job = check.availability_check.employments
    .map((e: any) => e.employment)
    .find(
      (e: any) =>
        e.employer.salary_deduction_opt_in_status === 'opted_in' &&
        e.payrolls.some((p: any) => p.payroll.employment_status === 'active' && (onPayroll === undefined || p.payroll.id === onPayroll)),
    );
  const payrollId: string = job.payrolls.find((p: any) => p.payroll.employment_status === 'active' && (onPayroll === undefined || p.payroll.id === onPayroll)).payroll.id;
  const { mandate } = await ok('POST', '/mandates', mandateBody({ ...person, employee_id: job.employee_id, payroll_id: payrollId }, reference));
  expect(mandate.status).toBe('pending_enablement');
  const { enablement } = await ok('POST', '/deductions/enablement', { enablement: { employee_id: job.employee_id, payroll_id: payrollId, mandate_id: mandate.id } });
  expect(enablement.status).toBe('enabled');
  const { payment } = await ok('POST', '/payments', {
    payment_record: { mandate_id: mandate.id, amount, currency: 'GBP', due_date: null, allow_post_due_date_deduction: allowPostDueDateDeduction },
  });
  expect(payment.status).toBe('pending');
  return { employeeId: job.employee_id as string, payrollId, mandateId: mandate.id as string, payment };
}

/**
 * Two confirmed people whose jobs are all active, on a payroll of an opted-in employer that has no mandate
 * yet. Either may hold a second job elsewhere (the directory gives some people two), so enrol them on this one.
 */
async function twoColleagues() {
  const taken = await t.db.selectFrom('mandates').select('payroll_id').execute();
  const rows = await t.db
    .selectFrom('employments')
    .innerJoin('employees', 'employees.id', 'employments.employee_id')
    .innerJoin('employers', 'employers.id', 'employments.employer_id')
    .select(['employments.payroll_id', 'employees.id', 'employees.national_registration_number', 'employees.given_name', 'employees.family_name', 'employees.date_of_birth'])
    .where('employees.payroll_provider_id', '=', sandbox.payroll_provider.id)
    .where('employers.salary_deduction_opt_in_status', '=', 'opted_in')
    .where('employments.employment_status', '=', 'active')
    .where('employees.id', 'not in', (eb) => eb.selectFrom('employments as other').select('other.employee_id').where('other.employment_status', '!=', 'active'))
    .orderBy('employments.payroll_id')
    .orderBy('employments.payroll_reference')
    .execute();
  const free = rows.filter((row) => !taken.some((m) => m.payroll_id === row.payroll_id));
  const payrollId = free.find((row, i) => free.findIndex((other, j) => j !== i && other.payroll_id === row.payroll_id) >= 0)!.payroll_id;
  return free.filter((row) => row.payroll_id === payrollId).slice(0, 2);
}

describe('a sandbox biller, through the API and the simulation operations only', () => {
  it('takes a payment from creation to payout: lock, provider pull, confirmation in full, payout paid', async () => {
    const person = sandbox.example_employees.find((p) => p.availability_status === 'confirmed')!;
    const { employeeId, payrollId, payment } = await enrol(person, 12_550, 'SANDBOX-FULL');

    const { lock } = await ok('POST', `/sandbox/payrolls/${payrollId}/pay-dates/next/lock`);
    expect(lock).toMatchObject({
      payroll_id: payrollId,
      pay_date: payment.target_pay_date,
      created: true,
      employee_count: 1,
      payments_instructed: 1,
      total_amount: 12_550,
      currency: 'GBP',
    });
    expect(lock.instruction_file.file_name).toMatch(/\.csv$/);
    expect((await ok('GET', `/payments/${payment.id}`)).payment.status).toBe('instructed');
    // Locking again finds it locked.
    expect((await ok('POST', `/sandbox/payrolls/${payrollId}/pay-dates/${lock.pay_date}/lock`)).lock).toMatchObject({
      created: false,
      deduction_data_id: lock.deduction_data_id,
    });

    const pulled = await ok('POST', `/sandbox/payrolls/${payrollId}/pay-dates/${lock.pay_date}/provider-pull`);
    expect(pulled.deduction_data_response).toMatchObject({ id: lock.deduction_data_id, payroll_id: payrollId, employee_count: 1, total_amount: 125.5, currency: 'GBP' });
    expect(pulled.deduction_data_response.deduction_data).toEqual([
      { salary_deduction: expect.objectContaining({ employee_id: employeeId, requested_deduction_amount: 125.5 }) },
    ]);

    const confirmed = await ok('POST', `/sandbox/payrolls/${payrollId}/pay-dates/${lock.pay_date}/confirmation`);
    expect(confirmed.outcomes).toEqual({ [employeeId]: 'full' });
    expect(confirmed.confirmation).toMatchObject({ deduction_data_id: lock.deduction_data_id, total_amount: 125.5, employee_count: 1 });
    expect(confirmed.reconciliation).toMatchObject({ snapshot_status: 'reconciled', employees: 1, collected: 12_550 });
    expect(confirmed.payment_requests).toEqual([expect.objectContaining({ id: payment.id, status: 'collected', collected_amount: 12_550 })]);
    // Confirming the same figures again (a retry with a new key) changes nothing.
    const repeated = await ok('POST', `/sandbox/payrolls/${payrollId}/pay-dates/${lock.pay_date}/confirmation`);
    expect(repeated.payment_requests).toEqual(confirmed.payment_requests);
    expect(repeated.reconciliation).toMatchObject({ snapshot_status: 'reconciled', collected: 12_550 });

    const paid = await ok('POST', '/sandbox/payouts');
    expect(paid.settled_through).toBe(lock.pay_date);
    expect(paid.payout_date > lock.pay_date).toBe(true);
    expect(paid.not_paid_out).toEqual([]);
    expect(paid.payouts).toEqual([expect.objectContaining({ status: 'paid', amount: 12_550, currency: 'GBP', payout_date: paid.payout_date })]);

    const payout = (await ok('GET', `/payouts/${paid.payouts[0].id}`)).payout;
    expect(payout).toMatchObject({ status: 'paid', amount: 12_550, items: [{ payment_request_id: payment.id, kind: 'payment_collected', amount: 12_550 }] });
    expect((await ok('GET', `/payments/${payment.id}`)).payment).toMatchObject({ status: 'paid_out', collected_amount: 12_550, paid_out_amount: 12_550 });

    // Events fire as they do live: the biller's webhooks and event feed see the payment move and the payout.
    const events = (await ok('GET', `/events?resource_id=${payment.id}`)).events.map((e: any) => e.data.status);
    expect(events).toEqual(expect.arrayContaining(['pending', 'instructed', 'collected', 'paid_out']));
    expect((await ok('GET', '/events?type=payout.created')).events).toHaveLength(1);

    // Each simulation operation is in the audit log with who asked.
    const audited = await t.db.selectFrom('audit_log').select(['action', 'actor']).where('action', 'like', 'sandbox.%').orderBy('id').execute();
    expect(audited.map((a) => a.action)).toEqual(
      expect.arrayContaining(['sandbox.created', 'sandbox.pay_date_locked', 'sandbox.provider_pulled', 'sandbox.confirmed', 'sandbox.paid_out']),
    );
    expect(audited.filter((a) => a.action !== 'sandbox.created').every((a) => a.actor === sandbox.biller.client_id)).toBe(true);
  });

  it('confirms partial and leaver outcomes per employee: half collected and paid out, the rest of both carried to the next pay date', async () => {
    // Two people with one active job each, on one opted-in payroll, so one pay date answers for both.
    const [partly, leaver] = await twoColleagues();
    const a = await enrol(partly!, 10_001, 'SANDBOX-PARTIAL', true, partly!.payroll_id);
    const b = await enrol(leaver!, 8_000, 'SANDBOX-LEAVER', true, leaver!.payroll_id);
    expect(b.payrollId).toBe(a.payrollId);

    const { lock } = await ok('POST', `/sandbox/payrolls/${a.payrollId}/pay-dates/next/lock`);
    expect(lock).toMatchObject({ employee_count: 2, payments_instructed: 2, total_amount: 18_001 });
    const confirmed = await ok('POST', `/sandbox/payrolls/${a.payrollId}/pay-dates/${lock.pay_date}/confirmation`, {
      outcomes: { [a.employeeId]: 'partial', [b.employeeId]: 'leaver' },
    });
    expect(confirmed.outcomes).toEqual({ [a.employeeId]: 'partial', [b.employeeId]: 'leaver' });
    expect(confirmed.confirmation).toMatchObject({ total_amount: 50, employee_count: 2 });
    // These payment requests allow deduction after their due date, so what payroll did not deduct is
    // carried to the payroll's next open pay date, exactly as reconciliation does live.
    expect(confirmed.reconciliation).toMatchObject({ snapshot_status: 'reconciled', employees: 2, collected: 5_000, carried: 2, failed: 0 });
    expect(confirmed.payment_requests).toHaveLength(2);
    expect(confirmed.payment_requests).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: a.payment.id, status: 'pending', collected_amount: 5_000 }),
        expect.objectContaining({ id: b.payment.id, status: 'pending', collected_amount: 0 }),
      ]),
    );

    const { payouts } = await ok('POST', '/sandbox/payouts');
    expect(payouts).toEqual([expect.objectContaining({ status: 'paid', amount: 5_000 })]);
    const partial = (await ok('GET', `/payments/${a.payment.id}`)).payment;
    const left = (await ok('GET', `/payments/${b.payment.id}`)).payment;
    expect(partial).toMatchObject({ status: 'pending', collected_amount: 5_000, paid_out_amount: 5_000, attempts: 1 });
    expect(left).toMatchObject({ status: 'pending', collected_amount: 0, paid_out_amount: 0, attempts: 1 });
    expect(partial.target_pay_date > lock.pay_date && left.target_pay_date > lock.pay_date).toBe(true);
  });

  it('ends them partially_collected and failed when the requests do not allow deduction after their due date', async () => {
    const [partly, leaver] = await twoColleagues();
    const a = await enrol(partly!, 6_000, 'SANDBOX-PARTIAL-ONCE', false, partly!.payroll_id);
    const b = await enrol(leaver!, 7_000, 'SANDBOX-LEAVER-ONCE', false, leaver!.payroll_id);
    const { lock } = await ok('POST', `/sandbox/payrolls/${a.payrollId}/pay-dates/next/lock`);
    const confirmed = await ok('POST', `/sandbox/payrolls/${a.payrollId}/pay-dates/${lock.pay_date}/confirmation`, {
      default_outcome: 'leaver',
      outcomes: { [a.employeeId]: 'partial' },
    });
    expect(confirmed.outcomes).toEqual({ [a.employeeId]: 'partial', [b.employeeId]: 'leaver' });
    expect(confirmed.reconciliation).toMatchObject({ collected: 3_000, carried: 0, failed: 1, partially: 1 });
    const { payouts } = await ok('POST', '/sandbox/payouts');
    expect(payouts).toEqual([expect.objectContaining({ status: 'paid', amount: 3_000 })]);
    expect((await ok('GET', `/payments/${a.payment.id}`)).payment).toMatchObject({ status: 'partially_collected', collected_amount: 3_000, paid_out_amount: 3_000 });
    expect((await ok('GET', `/payments/${b.payment.id}`)).payment).toMatchObject({ status: 'failed', collected_amount: 0 });
  });

  it('answers 422 for outcomes of employees not in the deduction data, and 409 for a pay date not locked yet', async () => {
    const payrollId = sandbox.employers[0]!.payrolls[0]!.id;
    const calendar = (await ok('GET', `/payrolls/${payrollId}`)).payroll.pay_dates.map((d: any) => d.pay_date);
    const unlocked = calendar.at(-1);
    const notLocked = await call('POST', `/sandbox/payrolls/${payrollId}/pay-dates/${unlocked}/provider-pull`);
    expect(notLocked.statusCode).toBe(409);
    const { lock } = await ok('POST', `/sandbox/payrolls/${payrollId}/pay-dates/${unlocked}/lock`);
    const stranger = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    const response = await call('POST', `/sandbox/payrolls/${payrollId}/pay-dates/${lock.pay_date}/confirmation`, { outcomes: { [stranger]: 'leaver' } });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([expect.objectContaining({ pointer: `/outcomes/${stranger}` })]);
  });
});
