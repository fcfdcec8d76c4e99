import { eventPayloadSql } from '../../../src/collections/payments/payment-event-repository.ts';
import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockPayDate, relockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { insertRunWithDuePayDates, type NightlyRunPayDateRow, type NightlyRunRow } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary, lockPayDateOfRun, summarizeNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { formatMinorUnits, MAX_EXACT_MINOR_UNITS } from '../../../src/platform/money/major-units.ts';
import { DEFAULT_AMOUNT_LIMITS, type AmountLimits } from '../../../src/collections/payments/amount-limits.ts';
import { createCollectionAccount, createMandateRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { buildWorld, type World, type WorldOptions } from '../../support/world.ts';

// One biller's oversized payment requests, stored before the limits existed or written around the
// API, used to make the lock statement fail on every retry (node-pg refuses an int8 total past
// 2^53), so no biller's payment on that pay date reached payroll. The lock now refuses only them.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t?.close());

const PAY_DATE = '2026-11-27';
/** The amount of the review's requests: the largest POST /payments accepted before the limits. */
const HUGE = 999_999_999_999_999;
/** Limits as high as configuration allows, for tests of what the lock does beyond them. */
const HIGHEST_LIMITS: AmountLimits = { maxPaymentAmount: MAX_EXACT_MINOR_UNITS, maxMandateAmountPerPayDate: MAX_EXACT_MINOR_UNITS };

/** A payroll with one pay date due to lock on `lockDate`, two billers and three employees. */
const lockingOn = (lockDate = '2026-11-18'): WorldOptions => ({
  payDates: [
    { pay_date: PAY_DATE, payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: lockDate },
    { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
  ],
  billers: 2,
  employees: 3,
});

async function mandate(w: World, biller: number, person: number) {
  return createMandateRow(t.db, { billerClientId: w.billers[biller]!.clientId, employeeId: w.people[person]!.employee.id, payrollId: w.payroll.id });
}

/** Inserted directly, as rows from before the limits or written by SQL would be. */
async function payment(
  w: World,
  m: { id: string; employee_id: string; biller_client_id: string },
  amount: number,
  options: { due?: string; scheduleId?: string; target?: string } = {},
) {
  return t.db
    .insertInto('payment_requests')
    .values({
      biller_client_id: m.biller_client_id,
      mandate_id: m.id,
      payroll_id: w.payroll.id,
      employee_id: m.employee_id,
      currency: 'GBP',
      amount,
      due_date: options.due ?? '2026-11-27',
      target_pay_date: options.target ?? PAY_DATE,
      ...(options.scheduleId ? { schedule_id: options.scheduleId, instalment_number: 1 } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function statusesOf(ids: readonly string[]) {
  const rows = await t.db.selectFrom('payment_requests').select(['id', 'status', 'status_reason', 'attempts', 'version']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

async function updatedEventsOf(ids: readonly string[]) {
  return t.db.selectFrom('events').select(eventSelection).where('type', '=', 'payment_request.updated').where('resource_id', 'in', ids).execute();
}

describe('a payroll with oversized payment requests stored', () => {
  it('still locks: every other biller’s request is instructed, the oversized ones fail with their events and reason', async () => {
    const w = await buildWorld(t.db, lockingOn());
    const honest = await mandate(w, 0, 0);
    const hostile = await mandate(w, 1, 1);
    const otherHonest = await mandate(w, 0, 2);
    const good = [await payment(w, honest, 12_550), await payment(w, otherHonest, 999), await payment(w, hostile, 4_000)];
    // The review's ten requests, and one at the limit exactly, which is fine.
    const bad = [];
    for (let i = 0; i < 10; i++) bad.push(await payment(w, hostile, HUGE));
    const atLimit = await payment(w, honest, DEFAULT_AMOUNT_LIMITS.maxPaymentAmount - 12_550);
    const schedule = await t.db
      .insertInto('schedules')
      .values({ biller_client_id: hostile.biller_client_id, mandate_id: hostile.id, currency: 'GBP', total_amount: HUGE, instalment_count: 1 })
      .returningAll()
      .executeTakeFirstOrThrow();
    const badInstalment = await payment(w, hostile, HUGE, { scheduleId: schedule.id });

    const outcome = await lockPayDate(t.db, w.payroll.id, PAY_DATE);

    const instructedTotal = 12_550 + 999 + 4_000 + atLimit.amount;
    expect(outcome).toMatchObject({
      created: true,
      employeeCount: 3,
      totalAmount: instructedTotal,
      paymentsInstructed: 4,
      paymentsRefused: 11,
      paymentsHeldBack: 0,
    });
    const statuses = await statusesOf([...good, atLimit, ...bad, badInstalment].map((p) => p.id));
    for (const p of [...good, atLimit]) expect(statuses.get(p.id)).toMatchObject({ status: 'instructed', attempts: 1, version: 2, status_reason: null });
    for (const p of [...bad, badInstalment]) {
      expect(statuses.get(p.id)).toMatchObject({ status: 'failed', attempts: 0, version: 2 });
      expect(statuses.get(p.id)!.status_reason).toBe('amount over £1,000,000.00, the most a payment request may be (MAX_PAYMENT_AMOUNT_MINOR); payroll was not asked for it');
    }
    expect(await t.db.selectFrom('schedules').select('status').where('id', '=', schedule.id).executeTakeFirstOrThrow()).toEqual({ status: 'errored' });

    // Each refusal is told to its biller, with the reason, like every other change.
    const events = await updatedEventsOf([...bad, badInstalment].map((p) => p.id));
    expect(events).toHaveLength(11);
    for (const event of events) {
      expect(event.biller_client_id).toBe(hostile.biller_client_id);
      expect((event.payload as { data: Record<string, unknown> }).data).toMatchObject({
        status: 'failed',
        status_reason: expect.stringContaining('MAX_PAYMENT_AMOUNT_MINOR'),
        amount: HUGE,
        attempts: 0,
      });
    }

    // The snapshot and its file hold the good requests only, in amounts every reader carries exactly.
    const lines = await t.db.selectFrom('deduction_lines').select(['employee_id', 'requested_amount']).where('snapshot_id', '=', outcome.snapshotId).execute();
    expect(Object.fromEntries(lines.map((l) => [l.employee_id, l.requested_amount]))).toEqual({
      [w.people[0]!.employee.id]: 12_550 + atLimit.amount,
      [w.people[1]!.employee.id]: 4_000,
      [w.people[2]!.employee.id]: 999,
    });
    const links = await t.db.selectFrom('deduction_line_payments').select('payment_request_id').where('snapshot_id', '=', outcome.snapshotId).execute();
    expect(links.map((l) => l.payment_request_id).sort()).toEqual([...good, atLimit].map((p) => p.id).sort());
    const file = await t.db.selectFrom('instruction_files').select('content').where('snapshot_id', '=', outcome.snapshotId).executeTakeFirstOrThrow();
    expect(file.content.toString()).toContain(formatMinorUnits(12_550 + atLimit.amount, 'GBP'));

    // A repeated job changes nothing; the refused stay refused.
    const again = await lockPayDate(t.db, w.payroll.id, PAY_DATE);
    expect(again).toMatchObject({ created: false, paymentsInstructed: 0, paymentsRefused: 0 });
    expect(await updatedEventsOf([...bad, badInstalment].map((p) => p.id))).toHaveLength(11);
  });

  it('ends a refused request that an earlier attempt partly collected as partially_collected, keeping what it collected', async () => {
    const w = await buildWorld(t.db, lockingOn());
    const carried = await payment(w, await mandate(w, 1, 1), HUGE);
    // Carried back to pending by reconciliation after a first attempt collected some of it.
    await t.db.updateTable('payment_requests').set({ collected_amount: 5_000, attempts: 1, version: 3 }).where('id', '=', carried.id).execute();

    const outcome = await lockPayDate(t.db, w.payroll.id, PAY_DATE);
    expect(outcome).toMatchObject({ paymentsInstructed: 0, paymentsRefused: 1, totalAmount: 0, employeeCount: 0 });
    const row = await t.db.selectFrom('payment_requests').selectAll().where('id', '=', carried.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'partially_collected', collected_amount: 5_000, attempts: 1, version: 4 });
    expect(row.status_reason).toContain('MAX_PAYMENT_AMOUNT_MINOR');
    const [event] = await updatedEventsOf([carried.id]);
    expect((event!.payload as { data: Record<string, unknown> }).data).toMatchObject({ status: 'partially_collected', collected_amount: 5_000 });
  });

  it('refuses the same way on a re-run, carrying what payroll was already asked for', async () => {
    const w = await buildWorld(t.db, lockingOn());
    const good = await payment(w, await mandate(w, 0, 0), 12_550);
    const first = await lockPayDate(t.db, w.payroll.id, PAY_DATE);
    expect(first).toMatchObject({ paymentsInstructed: 1, totalAmount: 12_550 });
    // Written around the API after the lock, aimed at the locked pay date.
    const bad = await payment(w, await mandate(w, 1, 1), HUGE);

    const rerun = await t.db.transaction().execute((trx) => relockPayDate(trx, w.payroll.id, PAY_DATE));
    expect(rerun).toMatchObject({ snapshotVersion: 2, paymentsInstructed: 0, paymentsRefused: 1, totalAmount: 12_550 });
    const statuses = await statusesOf([good.id, bad.id]);
    expect(statuses.get(good.id)).toMatchObject({ status: 'instructed', attempts: 1 });
    expect(statuses.get(bad.id)).toMatchObject({ status: 'failed', attempts: 0 });
  });

  it('refuses against the configured limit, and caps a mandate’s pay date at the configured per-pay-date limit', async () => {
    const w = await buildWorld(t.db, lockingOn());
    const m = await mandate(w, 0, 0);
    const limits: AmountLimits = { maxPaymentAmount: 10_000, maxMandateAmountPerPayDate: 15_000 };
    // Three requests within the per-request limit, made while the mandate could not be collected,
    // all land on this pay date: together they are over what the mandate may ask on one.
    const first = await payment(w, m, 10_000, { due: '2026-10-01' });
    const second = await payment(w, m, 8_000, { due: '2026-11-01' });
    const third = await payment(w, m, 3_000, { due: '2026-11-20' });
    const over = await payment(w, m, 10_001);
    const other = await payment(w, await mandate(w, 1, 1), 10_000);

    const outcome = await lockPayDate(t.db, w.payroll.id, PAY_DATE, { limits });
    expect(outcome).toMatchObject({ paymentsInstructed: 3, paymentsRefused: 1, totalAmount: 25_000 });
    const links = await t.db.selectFrom('deduction_line_payments').select(['payment_request_id', 'requested_amount']).where('snapshot_id', '=', outcome.snapshotId).execute();
    // Due-date order, as with a mandate's own limit: the first in full, the second for what is left.
    expect(Object.fromEntries(links.map((l) => [l.payment_request_id, l.requested_amount]))).toEqual({
      [first.id]: 10_000,
      [second.id]: 5_000,
      [other.id]: 10_000,
    });
    const statuses = await statusesOf([third.id, over.id]);
    expect(statuses.get(third.id)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(statuses.get(over.id)).toMatchObject({ status: 'failed', status_reason: expect.stringContaining('£100.00') });
  });

  it('keeps the snapshot total within what the data response carries exactly: the largest requests wait for the next pay date', async () => {
    const w = await buildWorld(t.db, lockingOn());
    const small = await payment(w, await mandate(w, 0, 0), 1_000);
    const big = await payment(w, await mandate(w, 1, 1), 600_000_000_000_000);
    const bigger = await payment(w, await mandate(w, 1, 2), 600_000_000_000_001);

    const outcome = await lockPayDate(t.db, w.payroll.id, PAY_DATE, { limits: HIGHEST_LIMITS });
    expect(outcome).toMatchObject({ created: true, paymentsInstructed: 2, paymentsRefused: 0, paymentsHeldBack: 1, totalAmount: 600_000_000_001_000 });
    const statuses = await statusesOf([small.id, big.id, bigger.id]);
    expect(statuses.get(small.id)?.status).toBe('instructed');
    expect(statuses.get(big.id)?.status).toBe('instructed');
    expect(statuses.get(bigger.id)).toMatchObject({ status: 'pending', attempts: 0, version: 1 });
    expect(await updatedEventsOf([bigger.id])).toHaveLength(0);

    // It is still owed, and the next pay date asks for it.
    const next = await lockPayDate(t.db, w.payroll.id, '2026-12-24', { limits: HIGHEST_LIMITS });
    expect(next).toMatchObject({ paymentsInstructed: 1, totalAmount: 600_000_000_000_001 });
  });

  it('never fails the statement whatever is stored: ten thousand requests past every bigint total still lock the rest', async () => {
    const w = await buildWorld(t.db, lockingOn());
    const hostile = await mandate(w, 1, 1);
    const honest = await payment(w, await mandate(w, 0, 0), 2_500);
    // 10,000 x 999,999,999,999,999 is past 2^63: any sum of them cast to bigint would overflow.
    await sql`
      insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, due_date, target_pay_date)
      select ${hostile.biller_client_id}, ${hostile.id}, ${w.payroll.id}, ${hostile.employee_id}, 'GBP', ${HUGE}, ${PAY_DATE}::date, ${PAY_DATE}::date
      from generate_series(1, 10000)
    `.execute(t.db);

    const outcome = await lockPayDate(t.db, w.payroll.id, PAY_DATE, { limits: HIGHEST_LIMITS });
    // At the highest limits each one is allowed, and the mandate may ask one of them on this pay
    // date; with the honest request that would pass the largest exact total, so it waits too.
    expect(outcome).toMatchObject({ created: true, paymentsInstructed: 1, paymentsRefused: 0, paymentsHeldBack: 1, totalAmount: 2_500 });
    expect((await statusesOf([honest.id])).get(honest.id)?.status).toBe('instructed');
    const left = await sql<{ status: string; n: number }>`
      select status, count(*)::int as n from payment_requests where mandate_id = ${hostile.id} group by status
    `.execute(t.db);
    expect(left.rows).toEqual([{ status: 'pending', n: 10_000 }]);

    // At the default limits every one of them is refused, with its event, and the honest one still goes.
    const again = await buildWorld(t.db, lockingOn());
    const hostileAgain = await mandate(again, 1, 1);
    const honestAgain = await payment(again, await mandate(again, 0, 0), 2_500);
    await sql`
      insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, due_date, target_pay_date)
      select ${hostileAgain.biller_client_id}, ${hostileAgain.id}, ${again.payroll.id}, ${hostileAgain.employee_id}, 'GBP', ${HUGE}, ${PAY_DATE}::date, ${PAY_DATE}::date
      from generate_series(1, 10000)
    `.execute(t.db);
    const refusedAll = await lockPayDate(t.db, again.payroll.id, PAY_DATE);
    expect(refusedAll).toMatchObject({ paymentsInstructed: 1, paymentsRefused: 10_000, paymentsHeldBack: 0, totalAmount: 2_500 });
    expect((await statusesOf([honestAgain.id])).get(honestAgain.id)?.status).toBe('instructed');
    const refusedEvents = await sql<{ n: number }>`
      select count(*)::int as n from events e join payment_requests p on p.id = e.resource_id
      where p.mandate_id = ${hostileAgain.id} and e.type = 'payment_request.updated' and ${eventPayloadSql('e')} -> 'data' ->> 'status' = 'failed'
    `.execute(t.db);
    expect(refusedEvents.rows[0]!.n).toBe(10_000);
  });
});

describe('nightly totals', () => {
  it('are exact across payrolls whose totals together pass 2^53', async () => {
    const runDate = '2026-11-10';
    const payrolls = [];
    for (const amount of [...Array<number>(10).fill(HUGE), 1]) {
      const w = await buildWorld(t.db, lockingOn(runDate));
      await payment(w, await mandate(w, 0, 0), amount);
      payrolls.push(w.payroll.id);
    }
    const run = await t.db.transaction().execute((trx) => insertRunWithDuePayDates(trx, { id: crypto.randomUUID(), runDate, trigger: 'manual', triggeredBy: 'test' }));
    for (const payrollId of payrolls) await lockPayDateOfRun(t.db, run.id, { payrollId, payDate: PAY_DATE }, HIGHEST_LIMITS);

    const summary = await loadNightlySummary(t.db, run.id);
    expect(summary).toMatchObject({ payrollsLocked: 11, paymentsInstructed: 11, failures: [] });
    // Odd and past 2^53: no number holds it (adding numbers gives ...992).
    expect(summary.totalsByCurrency).toEqual({ GBP: 9_999_999_999_999_991n });
    expect(formatMinorUnits(summary.totalsByCurrency.GBP!, 'GBP')).toBe('99999999999999.91');
  });

  it('summarizeNightlyRun adds without rounding (pure)', () => {
    const run: NightlyRunRow = {
      id: 'run',
      run_date: '2026-11-18',
      trigger: 'schedule',
      triggered_by: null,
      pay_dates_due: 3,
      started_at: new Date('2026-11-18T01:00:00Z'),
      finished_at: null,
    };
    const locked = (payrollId: string, total: number, currency: string): NightlyRunPayDateRow => ({
      run_id: run.id,
      payroll_id: payrollId,
      pay_date: PAY_DATE,
      outcome: 'locked',
      snapshot_id: `s-${payrollId}`,
      employee_count: 1,
      payments_instructed: 1,
      total_amount: total,
      currency,
      failure_reason: null,
      job_requeues: 0,
      resolved_at: new Date(),
    });
    // 2^53 - 1 and 2: a number sum gives 2^53 + 1 as 9007199254740992.
    const summary = summarizeNightlyRun(run, [locked('a', Number.MAX_SAFE_INTEGER, 'JPY'), locked('b', 2, 'JPY'), locked('c', HUGE, 'GBP'), locked('d', 1, 'GBP')]);
    expect(summary.totalsByCurrency).toEqual({ JPY: 9_007_199_254_740_993n, GBP: 1_000_000_000_000_000n });
    // What adding numbers would have said.
    expect(Number.MAX_SAFE_INTEGER + 2).toBe(2 ** 53);
  });
});
