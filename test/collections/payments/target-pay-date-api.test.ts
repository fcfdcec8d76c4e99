import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { createBiller, createEmployee, createEmployer, createMandateRow, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// The target pay date rule  seen through POST /payments, on a calendar
// whose lock dates are stated relative to the service's today.

let t: TestApp;
let headers: Record<string, string>;
let billerId: string;
let today: string;

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function payDate(payInDays: number, lockInDays: number, period: number) {
  return {
    pay_date: addDays(today, payInDays),
    payroll_cutoff_date: addDays(today, Math.max(lockInDays, payInDays - 3)),
    lock_date: addDays(today, lockInDays),
    pay_period: `${period}-2099`,
  };
}

/** A mandate on a payroll with exactly these pay dates. */
async function mandateOnCalendar(payDates: ReturnType<typeof payDate>[]) {
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates });
  const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
  const mandate = await createMandateRow(t.db, { billerClientId: billerId, employeeId: employee.id, payrollId: payroll.id });
  return { mandate, payroll };
}

function createPayment(record: Record<string, unknown>) {
  return injectJson(t.app, {
    method: 'POST',
    url: '/payments',
    headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
    body: { payment_record: record },
  });
}

async function paymentAndEventCounts(mandateId: string) {
  const payments = await t.db.selectFrom('payment_requests').select(t.db.fn.countAll<string>().as('n')).where('mandate_id', '=', mandateId).executeTakeFirstOrThrow();
  const events = await t.db
    .selectFrom('events')
    .innerJoin('payment_requests', 'payment_requests.id', 'events.resource_id')
    .select(t.db.fn.countAll<string>().as('n'))
    .where('payment_requests.mandate_id', '=', mandateId)
    .executeTakeFirstOrThrow();
  return { payments: Number(payments.n), events: Number(events.n) };
}

// Pay dates: P0 locks today (closed), P1..P3 open.
let p0: string;
let p1: string;
let p2: string;
let p3: string;
let mandateId: string;

beforeAll(async () => {
  t = await startTestApp();
  today = serviceToday(new Date(), t.config.SERVICE_TIME_ZONE);
  const biller = await createBiller(t.db);
  billerId = biller.clientId;
  headers = await authHeaders(t.app, biller);
  const calendar = [payDate(5, 0, 1), payDate(20, 12, 2), payDate(50, 42, 3), payDate(80, 72, 4)];
  [p0, p1, p2, p3] = calendar.map((d) => d.pay_date) as [string, string, string, string];
  mandateId = (await mandateOnCalendar(calendar)).mandate.id;
});
afterAll(async () => t?.close());

describe('target pay date on POST /payments', () => {
  it('targets the latest open pay date on or before the due date', async () => {
    const response = await createPayment({ mandate_id: mandateId, amount: 5000, due_date: addDays(today, 60) });
    expect(response.statusCode).toBe(201);
    expect(response.json().payment.target_pay_date).toBe(p2);
    const due = await createPayment({ mandate_id: mandateId, amount: 5000, due_date: p3 });
    expect(due.json().payment.target_pay_date).toBe(p3);
  });

  it('rejects a due date before the first open pay date, naming the expected pay date, and writes nothing', async () => {
    const before = await paymentAndEventCounts(mandateId);
    const dueDate = addDays(today, 10);
    const response = await createPayment({ mandate_id: mandateId, amount: 5000, due_date: dueDate, allow_post_due_date_deduction: false });
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toContain('application/problem+json');
    const body = response.json();
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}due-date-unreachable`);
    expect(body.type.endsWith('/due-date-unreachable')).toBe(true);
    expect(body.expected_pay_date).toBe(p1);
    expect(body.due_date).toBe(dueDate);
    expect(body.detail).toBe(
      `The earliest pay date this payment can be deducted on is ${p1}, after the due date ${dueDate}; ` +
        'set allow_post_due_date_deduction to true to accept a deduction after the due date',
    );
    expect(body.errors).toEqual([{ pointer: '/payment_record/due_date', detail: body.detail }]);
    expect(await paymentAndEventCounts(mandateId)).toEqual(before);
  });

  it('accepts a post-due deduction when allowed, on the first open pay date after the due date', async () => {
    const response = await createPayment({
      mandate_id: mandateId,
      amount: 5000,
      due_date: addDays(today, 10),
      allow_post_due_date_deduction: true,
    });
    expect(response.statusCode).toBe(201);
    expect(response.json().payment).toMatchObject({ target_pay_date: p1, allow_post_due_date_deduction: true });
  });

  it('targets the first open pay date when there is no due date', async () => {
    const response = await createPayment({ mandate_id: mandateId, amount: 5000, due_date: null });
    expect(response.statusCode).toBe(201);
    expect(response.json().payment).toMatchObject({ target_pay_date: p1, due_date: null });
  });

  it('skips a pay date whose lock date has arrived, even when it is on or before the due date', async () => {
    // P0 is before the due date but locks today: the only candidate on or before the due date is closed.
    const dueDate = addDays(today, 6);
    expect(p0 <= dueDate).toBe(true);
    const rejected = await createPayment({ mandate_id: mandateId, amount: 5000, due_date: dueDate });
    expect(rejected.statusCode).toBe(422);
    expect(rejected.json().expected_pay_date).toBe(p1);
    const allowed = await createPayment({ mandate_id: mandateId, amount: 5000, due_date: dueDate, allow_post_due_date_deduction: true });
    expect(allowed.json().payment.target_pay_date).toBe(p1);
  });

  it('skips a pay date the nightly run has already locked', async () => {
    const calendar = [payDate(20, 12, 1), payDate(50, 42, 2)];
    const { mandate, payroll } = await mandateOnCalendar(calendar);
    await t.db.updateTable('pay_dates').set({ locked_at: new Date() }).where('payroll_id', '=', payroll.id).where('pay_date', '=', calendar[0]!.pay_date).execute();
    const response = await createPayment({ mandate_id: mandate.id, amount: 5000 });
    expect(response.json().payment.target_pay_date).toBe(calendar[1]!.pay_date);
  });

  it('rejects with no-open-pay-date when every pay date is closed', async () => {
    const { mandate } = await mandateOnCalendar([payDate(3, 0, 1)]);
    const response = await createPayment({ mandate_id: mandate.id, amount: 5000, allow_post_due_date_deduction: true });
    expect(response.statusCode).toBe(422);
    expect(response.json().type).toBe(`${PROBLEM_TYPE_BASE}no-open-pay-date`);
    expect(await paymentAndEventCounts(mandate.id)).toEqual({ payments: 0, events: 0 });
  });

  it('rejects a due date in the past', async () => {
    const response = await createPayment({ mandate_id: mandateId, amount: 5000, due_date: addDays(today, -1), allow_post_due_date_deduction: true });
    expect(response.statusCode).toBe(422);
    expect(response.json().type).toBe(`${PROBLEM_TYPE_BASE}due-date-in-past`);
    expect(response.json().errors[0].pointer).toBe('/payment_record/due_date');
  });
});
