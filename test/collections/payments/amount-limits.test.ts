import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/platform/config/config.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { amountLimitsOf, payDatesOverMandateLimit, paymentAmountsOverLimit, type AmountLimits } from '../../../src/collections/payments/amount-limits.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

// The review's hostile biller posted ten payment requests of 999,999,999,999,999 on one mandate and
// stopped the payroll's lock for everyone. Amounts are now limited per request and per mandate and
// pay date (configuration, defaults GBP 1,000,000.00 each), refused with 422 naming the limit.

const LIMIT = 100_000_000;
const OVER_LIMIT = `${PROBLEM_TYPE_BASE}amount-over-limit`;

let t: TestApp;
let biller: Credentials;
let headers: Record<string, string>;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;
let payDates: string[];

beforeAll(async () => {
  t = await startTestApp();
  biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
  world = await createEmploymentWorld(t.db);
  payDates = (await t.db.selectFrom('pay_dates').select('pay_date').where('payroll_id', '=', world.payroll.id).orderBy('pay_date').execute()).map((p) => p.pay_date);
});
afterAll(async () => t?.close());

async function newMandate() {
  return (await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
}

function postPayment(record: Record<string, unknown>, app = t.app, as = headers) {
  return injectJson(app, {
    method: 'POST',
    url: '/payments',
    headers: { ...as, 'idempotency-key': crypto.randomUUID() },
    body: { payment_record: record },
  });
}

function postSchedule(record: Record<string, unknown>) {
  return injectJson(t.app, {
    method: 'POST',
    url: '/schedules',
    headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
    body: { schedule_record: record },
  });
}

async function storedFor(mandateId: string) {
  const { rows } = await sql<{ payments: number; events: number; schedules: number }>`
    select (select count(*)::int from payment_requests where mandate_id = ${mandateId}) as payments,
           (select count(*)::int from events e join payment_requests p on p.id = e.resource_id where p.mandate_id = ${mandateId}) as events,
           (select count(*)::int from schedules where mandate_id = ${mandateId}) as schedules
  `.execute(t.db);
  return rows[0]!;
}

describe('POST /payments amount limits', () => {
  it('refuses the review’s 999,999,999,999,999 with 422 naming MAX_PAYMENT_AMOUNT_MINOR, and stores nothing', async () => {
    const mandateId = await newMandate();
    const response = await postPayment({ mandate_id: mandateId, amount: 999_999_999_999_999 });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({
      type: OVER_LIMIT,
      title: 'Amount over limit',
      status: 422,
      detail: 'The amount £9,999,999,999,999.99 is more than £1,000,000.00, the most a payment request may be',
      errors: [{ pointer: '/payment_record/amount', detail: 'must be at most £1,000,000.00 (MAX_PAYMENT_AMOUNT_MINOR)' }],
      limit: { name: 'MAX_PAYMENT_AMOUNT_MINOR', amount: LIMIT, currency: 'GBP' },
    });
    expect(await storedFor(mandateId)).toEqual({ payments: 0, events: 0, schedules: 0 });
  });

  it('accepts exactly the limit and refuses one minor unit more', async () => {
    const over = await postPayment({ mandate_id: await newMandate(), amount: LIMIT + 1 });
    expect(over.statusCode).toBe(422);
    expect(over.json().limit.name).toBe('MAX_PAYMENT_AMOUNT_MINOR');
    const at = await postPayment({ mandate_id: await newMandate(), amount: LIMIT });
    expect(at.statusCode, at.body).toBe(201);
    expect(at.json().payment).toMatchObject({ amount: LIMIT, status: 'pending', status_reason: null });
  });

  it('refuses a mandate asking more than MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR on one pay date, counting only what is pending there', async () => {
    const mandateId = await newMandate();
    const first = await postPayment({ mandate_id: mandateId, amount: 70_000_000 });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().payment.target_pay_date).toBe(payDates[0]);

    const second = await postPayment({ mandate_id: mandateId, amount: 30_000_001 });
    expect(second.statusCode).toBe(422);
    expect(second.json()).toMatchObject({
      type: OVER_LIMIT,
      detail:
        `Mandate ${mandateId} may ask payroll for at most £1,000,000.00 on one pay date: ` +
        `on pay date ${payDates[0]} it already asks £700,000.00 and this would add £300,000.01`,
      errors: [
        {
          pointer: '/payment_record/amount',
          detail:
            `the mandate may ask at most £1,000,000.00 on pay date ${payDates[0]} (MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR); ` +
            `on pay date ${payDates[0]} it already asks £700,000.00 and this would add £300,000.01`,
        },
      ],
      limit: { name: 'MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR', amount: LIMIT, currency: 'GBP' },
      pay_dates_over_limit: [payDates[0]],
    });

    // Up to the limit on that pay date, and a full limit's worth on the next one.
    expect((await postPayment({ mandate_id: mandateId, amount: 30_000_000 })).statusCode).toBe(201);
    const nextPayDate = await postPayment({ mandate_id: mandateId, amount: LIMIT, due_date: payDates[1] });
    expect(nextPayDate.statusCode, nextPayDate.body).toBe(201);
    expect(nextPayDate.json().payment.target_pay_date).toBe(payDates[1]);

    // A cancelled request asks nothing any more.
    const cancelled = await injectJson(t.app, { method: 'POST', url: `/payments/${first.json().payment.id}/cancel`, headers });
    expect(cancelled.statusCode).toBe(200);
    expect((await postPayment({ mandate_id: mandateId, amount: 70_000_000 })).statusCode).toBe(201);
    expect((await storedFor(mandateId)).payments).toBe(4);
  });

  it('lets only one of two concurrent requests take the last of a pay date’s room', async () => {
    const mandateIds = [await newMandate(), await newMandate(), await newMandate(), await newMandate()];
    const responses = await Promise.all(
      mandateIds.flatMap((mandateId) => [postPayment({ mandate_id: mandateId, amount: 60_000_000 }), postPayment({ mandate_id: mandateId, amount: 60_000_000 })]),
    );
    for (const [i, mandateId] of mandateIds.entries()) {
      expect(
        responses
          .slice(2 * i, 2 * i + 2)
          .map((r) => r.statusCode)
          .sort(),
      ).toEqual([201, 422]);
      expect((await storedFor(mandateId)).payments).toBe(1);
    }
  });

  it('counts amounts stored before the limits existed exactly, past 2^53', async () => {
    const mandateId = await newMandate();
    const mandate = await t.db.selectFrom('mandates').selectAll().where('id', '=', mandateId).executeTakeFirstOrThrow();
    await sql`
      insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, target_pay_date)
      select ${mandate.biller_client_id}, ${mandate.id}, ${mandate.payroll_id}, ${mandate.employee_id}, 'GBP', 999999999999999, ${payDates[0]}::date
      from generate_series(1, 10)
    `.execute(t.db);
    const response = await postPayment({ mandate_id: mandateId, amount: 1 });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toContain(`it already asks £99,999,999,999,999.90 and this would add £0.01`);
  });
});

describe('POST /schedules amount limits', () => {
  it('refuses an instalment over MAX_PAYMENT_AMOUNT_MINOR, pointing at it', async () => {
    const mandateId = await newMandate();
    const response = await postSchedule({
      mandate_id: mandateId,
      instalments: [
        { amount: 5_000, due_date: payDates[0] },
        { amount: LIMIT + 1, due_date: payDates[1] },
      ],
    });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json()).toMatchObject({
      type: OVER_LIMIT,
      errors: [{ pointer: '/schedule_record/instalments/1/amount', detail: 'must be at most £1,000,000.00 (MAX_PAYMENT_AMOUNT_MINOR)' }],
      limit: { name: 'MAX_PAYMENT_AMOUNT_MINOR', amount: LIMIT, currency: 'GBP' },
    });
    expect(await storedFor(mandateId)).toEqual({ payments: 0, events: 0, schedules: 0 });
  });

  it('refuses the generated form once for its one amount', async () => {
    const mandateId = await newMandate();
    const response = await postSchedule({ mandate_id: mandateId, amount: 999_999_999_999_999, count: 3, interval: 'monthly', start_date: payDates[0] });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json().errors).toEqual([{ pointer: '/schedule_record/amount', detail: 'must be at most £1,000,000.00 (MAX_PAYMENT_AMOUNT_MINOR)' }]);
    expect(await storedFor(mandateId)).toEqual({ payments: 0, events: 0, schedules: 0 });
  });

  it('adds instalments that land on one pay date, with what is pending there, against the per-pay-date limit', async () => {
    const mandateId = await newMandate();
    // Two instalments due in the same pay period target the same pay date.
    const sameDay = {
      mandate_id: mandateId,
      instalments: [
        { amount: 60_000_000, due_date: payDates[1] },
        { amount: 40_000_001, due_date: payDates[1] },
      ],
    };
    const over = await postSchedule(sameDay);
    expect(over.statusCode, over.body).toBe(422);
    expect(over.json()).toMatchObject({
      type: OVER_LIMIT,
      limit: { name: 'MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR', amount: LIMIT, currency: 'GBP' },
      pay_dates_over_limit: [payDates[1]],
    });
    expect(over.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/schedule_record/instalments/0/amount', '/schedule_record/instalments/1/amount']);

    const at = await postSchedule({
      ...sameDay,
      instalments: [
        { amount: 60_000_000, due_date: payDates[1] },
        { amount: 40_000_000, due_date: payDates[1] },
      ],
    });
    expect(at.statusCode, at.body).toBe(201);
    expect(at.json().schedule).toMatchObject({ total_amount: LIMIT, instalment_count: 2 });

    // That pay date is now full for the mandate; the one after is not.
    const full = await postSchedule({ mandate_id: mandateId, instalments: [{ amount: 1, due_date: payDates[1] }] });
    expect(full.statusCode).toBe(422);
    expect(full.json().detail).toContain(`on pay date ${payDates[1]} it already asks £1,000,000.00 and this would add £0.01`);
    const later = await postSchedule({ mandate_id: mandateId, instalments: [{ amount: LIMIT, due_date: payDates[2] }] });
    expect(later.statusCode, later.body).toBe(201);
  });
});

describe('configured limits', () => {
  it('are read from MAX_PAYMENT_AMOUNT_MINOR and MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR and applied by the API', async () => {
    const configured = await startTestApp({ env: { MAX_PAYMENT_AMOUNT_MINOR: '5000', MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR: '8000' } });
    try {
      const otherBiller = await createBiller(configured.db);
      const otherHeaders = await authHeaders(configured.app, otherBiller);
      const w = await createEmploymentWorld(configured.db);
      const mandateId = (await createMandateRow(configured.db, { billerClientId: otherBiller.clientId, employeeId: w.employee.id, payrollId: w.payroll.id })).id;
      const over = await postPayment({ mandate_id: mandateId, amount: 5_001 }, configured.app, otherHeaders);
      expect(over.statusCode).toBe(422);
      expect(over.json().errors).toEqual([{ pointer: '/payment_record/amount', detail: 'must be at most £50.00 (MAX_PAYMENT_AMOUNT_MINOR)' }]);
      expect((await postPayment({ mandate_id: mandateId, amount: 5_000 }, configured.app, otherHeaders)).statusCode).toBe(201);
      const pastPayDate = await postPayment({ mandate_id: mandateId, amount: 3_001 }, configured.app, otherHeaders);
      expect(pastPayDate.statusCode).toBe(422);
      expect(pastPayDate.json().limit).toEqual({ name: 'MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR', amount: 8_000, currency: 'GBP' });
    } finally {
      await configured.close();
    }
  });

  it('default to GBP 1,000,000.00 each and refuse values that make no sense, naming the variable', () => {
    expect(amountLimitsOf(parseConfig({}))).toEqual({ maxPaymentAmount: LIMIT, maxMandateAmountPerPayDate: LIMIT });
    expect(() => parseConfig({ MAX_PAYMENT_AMOUNT_MINOR: '1000000000000000' })).toThrow(ConfigError);
    expect(() => parseConfig({ MAX_PAYMENT_AMOUNT_MINOR: '0' })).toThrow(/MAX_PAYMENT_AMOUNT_MINOR/);
    expect(() => parseConfig({ MAX_PAYMENT_AMOUNT_MINOR: '12.5' })).toThrow(/MAX_PAYMENT_AMOUNT_MINOR/);
    expect(() => parseConfig({ MAX_PAYMENT_AMOUNT_MINOR: '20000', MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR: '10000' })).toThrow(
      /MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR must be at least MAX_PAYMENT_AMOUNT_MINOR \(20000\)/,
    );
  });
});

describe('limit rules (pure)', () => {
  const limits: AmountLimits = { maxPaymentAmount: 100, maxMandateAmountPerPayDate: 150 };

  it('paymentAmountsOverLimit keeps exactly the amounts above the limit', () => {
    expect(
      paymentAmountsOverLimit(
        [
          { pointer: '/a', amount: 100 },
          { pointer: '/b', amount: 101 },
          { pointer: '/c', amount: 1 },
        ],
        limits,
      ),
    ).toEqual([{ pointer: '/b', amount: 101 }]);
  });

  it('payDatesOverMandateLimit sums per pay date with what is already requested, exactly at any size', () => {
    const pending = new Map([
      ['2026-12-25', 50n],
      // Stored before the limits: 2^53 + 1, which no number holds.
      ['2027-01-25', 9_007_199_254_740_993n],
    ]);
    const over = payDatesOverMandateLimit(
      [
        { payDate: '2026-12-25', amount: 60, pointer: '/i/0' },
        { payDate: '2026-12-25', amount: 40, pointer: '/i/1' },
        { payDate: '2027-01-25', amount: 1, pointer: '/i/2' },
        { payDate: '2027-02-25', amount: 100, pointer: '/i/3' },
        { payDate: '2027-02-25', amount: 50, pointer: '/i/4' },
      ],
      pending,
      limits,
    );
    // 2026-12-25: 50 + 100 = 150 fits; 2027-02-25: 150 fits; 2027-01-25 is over.
    expect(over).toEqual([{ payDate: '2027-01-25', alreadyRequested: 9_007_199_254_740_993n, added: 1n, pointers: ['/i/2'] }]);
    expect(payDatesOverMandateLimit([{ payDate: '2026-12-25', amount: 101, pointer: '/p' }], pending, limits)).toEqual([
      { payDate: '2026-12-25', alreadyRequested: 50n, added: 101n, pointers: ['/p'] },
    ]);
  });
});
