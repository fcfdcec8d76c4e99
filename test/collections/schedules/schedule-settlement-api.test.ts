import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { insertDeliveriesForEvents } from '../../../src/faces/webhooks/webhook-repository.ts';
import { relockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { followEmploymentChange } from '../../../src/collections/employee-changes/employment-change.ts';
import { findEmployeeOnPayroll } from '../../../src/directory/payrolls/directory-repository.ts';
import { toEmployeeUpdatePayload } from '../../../src/directory/payrolls/employee-resource.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1, PD2, type World } from '../../cycle/reconciliation/reconciliation-world.ts';

// Every path that ends a schedule's last open instalment settles the schedule in the same
// transaction, with its reason and exactly one schedule.updated event whose data is what
// GET /schedules/{id} answers: a mandate revoked, the biller cancelling instalments one by one,
// reconciliation (a partial collection, a collection after the mandate was revoked), the lock refusing
// an instalment, an employment ending, a re-run cancelling what it released.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t?.close());

async function newSchedule(w: World, instalments: Array<{ amount: number; target?: string; due?: string }>, person = 0) {
  const schedule = await t.db
    .insertInto('schedules')
    .values({
      biller_client_id: w.biller.clientId,
      mandate_id: w.people[person]!.mandate.id,
      currency: 'GBP',
      total_amount: instalments.reduce((sum, i) => sum + i.amount, 0),
      instalment_count: instalments.length,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const payments = [];
  for (const [index, instalment] of instalments.entries()) {
    payments.push(
      await w.payment(person, instalment.amount, {
        schedule: { id: schedule.id, instalment: index + 1 },
        due: instalment.due ?? '2026-11-01',
        ...(instalment.target ? { target: instalment.target } : {}),
      }),
    );
  }
  return { schedule, payments };
}

async function scheduleEvents(scheduleId: string) {
  return t.db.selectFrom('events').select(eventSelection).where('type', '=', 'schedule.updated').where('resource_id', '=', scheduleId).orderBy('sequence').execute();
}

async function getSchedule(w: World, scheduleId: string) {
  const response = await injectJson(t.app, { method: 'GET', url: `/schedules/${scheduleId}`, headers: await authHeaders(t.app, w.biller) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().schedule;
}

/** The schedule is settled as said, with exactly one schedule.updated, whose data is GET /schedules/{id}. */
async function expectSettledOnce(w: World, scheduleId: string, settled: { status: string; status_reason: string }) {
  const schedule = await getSchedule(w, scheduleId);
  expect(schedule).toMatchObject({ ...settled, version: 2 });
  const events = await scheduleEvents(scheduleId);
  expect(events).toHaveLength(1);
  expect(events[0]!).toMatchObject({ biller_client_id: w.biller.clientId, resource_type: 'schedule' });
  expect((events[0]!.payload as { data: unknown }).data).toEqual(schedule);
  return schedule;
}

async function expectStillActive(w: World, scheduleId: string) {
  expect(await getSchedule(w, scheduleId)).toMatchObject({ status: 'active', status_reason: null, version: 1 });
  expect(await scheduleEvents(scheduleId)).toHaveLength(0);
}

describe('a mandate revoked (DELETE /mandates/{mandate_id})', () => {
  it('cancels a schedule whose instalments were all pending: mandate_revoked, one schedule.updated after the payment events', async () => {
    const w = await createWorld(t.db);
    const pending = await newSchedule(w, [{ amount: 1_000 }, { amount: 1_000, target: PD2, due: '2026-12-01' }]);
    const headers = await authHeaders(t.app, w.biller);
    const revoke = () => injectJson(t.app, { method: 'DELETE', url: `/mandates/${w.people[0]!.mandate.id}`, headers });
    expect((await revoke()).statusCode).toBe(200);

    const schedule = await expectSettledOnce(w, pending.schedule.id, { status: 'cancelled', status_reason: 'mandate_revoked' });
    expect(schedule.instalments.map((i: { status: string }) => i.status)).toEqual(['cancelled', 'cancelled']);
    expect(schedule.expected_payments).toEqual([]);
    // After the instalments' own events, in the same transaction.
    const [scheduleEvent] = await scheduleEvents(pending.schedule.id);
    const paymentEvents = await t.db
      .selectFrom('events')
      .select(['sequence'])
      .where('type', '=', 'payment_request.updated')
      .where(
        'resource_id',
        'in',
        pending.payments.map((p) => p.id),
      )
      .execute();
    expect(paymentEvents).toHaveLength(2);
    for (const event of paymentEvents) expect(Number(event.sequence)).toBeLessThan(Number(scheduleEvent!.sequence));

    // A repeated DELETE changes nothing.
    expect((await revoke()).statusCode).toBe(200);
    expect(await scheduleEvents(pending.schedule.id)).toHaveLength(1);
  });

  it('leaves a schedule with an instructed instalment running; reconciliation settles it once that one is collected', async () => {
    const w = await createWorld(t.db);
    const { schedule } = await newSchedule(w, [{ amount: 1_000 }, { amount: 1_000, target: PD2, due: '2026-12-01' }]);
    await w.lock(PD1);
    const headers = await authHeaders(t.app, w.biller);
    expect((await injectJson(t.app, { method: 'DELETE', url: `/mandates/${w.people[0]!.mandate.id}`, headers })).statusCode).toBe(200);
    await expectStillActive(w, schedule.id);
    const running = await getSchedule(w, schedule.id);
    expect(running.instalments.map((i: { status: string }) => i.status)).toEqual(['instructed', 'cancelled']);
    expect(running.expected_payments).toEqual([{ instalment_number: 1, payment_id: running.instalments[0].payment_id, pay_date: PD1, amount: 1_000, currency: 'GBP' }]);

    await w.push(w.people[0]!.employee.id, PD1, 1_000);
    await w.reconcile(PD1);
    await expectSettledOnce(w, schedule.id, { status: 'cancelled', status_reason: 'mandate_revoked' });
  });
});

describe("the biller's cancels", () => {
  it('POST /payments/{payment_id}/cancel of the last open instalment settles the schedule: instalments_cancelled', async () => {
    const w = await createWorld(t.db);
    const { schedule, payments } = await newSchedule(w, [{ amount: 1_000 }, { amount: 2_000, target: PD2, due: '2026-12-01' }]);
    const headers = await authHeaders(t.app, w.biller);
    const cancel = (id: string) => injectJson(t.app, { method: 'POST', url: `/payments/${id}/cancel`, headers: { ...headers, 'idempotency-key': crypto.randomUUID() } });

    expect((await cancel(payments[0]!.id)).statusCode).toBe(200);
    await expectStillActive(w, schedule.id);
    expect((await getSchedule(w, schedule.id)).expected_payments).toEqual([
      { instalment_number: 2, payment_id: payments[1]!.id, pay_date: PD2, amount: 2_000, currency: 'GBP' },
    ]);

    expect((await cancel(payments[1]!.id)).statusCode).toBe(200);
    await expectSettledOnce(w, schedule.id, { status: 'cancelled', status_reason: 'instalments_cancelled' });
    // Cancelling again, and cancelling the (already cancelled) schedule, change nothing.
    expect((await cancel(payments[1]!.id)).statusCode).toBe(200);
    const again = await injectJson(t.app, { method: 'POST', url: `/schedules/${schedule.id}/cancel`, headers });
    expect(again.statusCode).toBe(200);
    expect(again.json().schedule).toMatchObject({ status: 'cancelled', status_reason: 'instalments_cancelled', version: 2 });
    expect(await scheduleEvents(schedule.id)).toHaveLength(1);
  });

  it('POST /schedules/{schedule_id}/cancel: cancelled_by_biller, one schedule.updated that is the response', async () => {
    const w = await createWorld(t.db);
    const { schedule } = await newSchedule(w, [{ amount: 1_000 }, { amount: 1_000, target: PD2, due: '2026-12-01' }]);
    const headers = await authHeaders(t.app, w.biller);
    const response = await injectJson(t.app, { method: 'POST', url: `/schedules/${schedule.id}/cancel`, headers });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().schedule).toMatchObject({ status: 'cancelled', status_reason: 'cancelled_by_biller', expected_payments: [] });
    expect(await expectSettledOnce(w, schedule.id, { status: 'cancelled', status_reason: 'cancelled_by_biller' })).toEqual(response.json().schedule);
    expect((await injectJson(t.app, { method: 'POST', url: `/schedules/${schedule.id}/cancel`, headers })).statusCode).toBe(200);
    expect(await scheduleEvents(schedule.id)).toHaveLength(1);
  });
});

describe('reconciliation', () => {
  it('settles a schedule whose instalment was only partly collected (errored, instalments_not_collected_in_full), once', async () => {
    const w = await createWorld(t.db);
    const { schedule } = await newSchedule(w, [{ amount: 1_000 }, { amount: 1_000 }]);
    await w.lock(PD1);
    // Payroll deducted 1,500 of 2,000; the due date has passed by the next pay date, so the shortfall is not carried.
    await w.push(w.people[0]!.employee.id, PD1, 1_500);
    await w.reconcile(PD1);

    const settled = await expectSettledOnce(w, schedule.id, { status: 'errored', status_reason: 'instalments_not_collected_in_full' });
    expect(settled.instalments.map((i: { status: string }) => i.status).sort()).toEqual(['collected', 'partially_collected']);
    expect(settled.expected_payments).toEqual([]);

    // Reconciling the same again settles nothing more; nor does a later correction reopen it.
    await w.reconcile(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 2_000);
    await w.reconcile(PD1);
    expect((await getSchedule(w, schedule.id)).instalments.map((i: { status: string }) => i.status)).toEqual(['collected', 'collected']);
    expect(await scheduleEvents(schedule.id)).toHaveLength(1);
    expect(await getSchedule(w, schedule.id)).toMatchObject({ status: 'errored', status_reason: 'instalments_not_collected_in_full', version: 2 });
  });

  it('completes a schedule collected in full: all_instalments_collected', async () => {
    const w = await createWorld(t.db);
    const { schedule } = await newSchedule(w, [{ amount: 1_000 }, { amount: 500 }]);
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 1_500);
    await w.reconcile(PD1);
    await expectSettledOnce(w, schedule.id, { status: 'completed', status_reason: 'all_instalments_collected' });
  });
});

describe('the lock', () => {
  it('errors the schedule of an instalment it refuses (instalment_refused), with one schedule.updated; what is still to come stays expected', async () => {
    const w = await createWorld(t.db);
    const { schedule, payments } = await newSchedule(w, [{ amount: 999_999_999_999 }, { amount: 1_000, target: PD2, due: '2026-12-01' }]);
    const outcome = await w.lock(PD1);
    expect(outcome.paymentsRefused).toBe(1);
    const errored = await expectSettledOnce(w, schedule.id, { status: 'errored', status_reason: 'instalment_refused' });
    expect(errored.instalments.map((i: { status: string }) => i.status)).toEqual(['failed', 'pending']);
    expect(errored.expected_payments).toEqual([{ instalment_number: 2, payment_id: payments[1]!.id, pay_date: PD2, amount: 1_000, currency: 'GBP' }]);
  });

  it('a re-run that cancels the instructed instalment of a revoked mandate settles its schedule: mandate_revoked', async () => {
    const w = await createWorld(t.db);
    const { schedule } = await newSchedule(w, [{ amount: 1_000 }]);
    await w.lock(PD1);
    const headers = await authHeaders(t.app, w.biller);
    expect((await injectJson(t.app, { method: 'DELETE', url: `/mandates/${w.people[0]!.mandate.id}`, headers })).statusCode).toBe(200);
    await expectStillActive(w, schedule.id);

    const rerun = await t.db.transaction().execute((trx) => relockPayDate(trx, w.payroll.id, PD1));
    expect(rerun.paymentsCancelled).toBe(1);
    await expectSettledOnce(w, schedule.id, { status: 'cancelled', status_reason: 'mandate_revoked' });
  });
});

describe('an employment ending', () => {
  it("cancels the pending instalments with the leaver's mandate and settles the schedule: mandate_ended", async () => {
    const w = await createWorld(t.db);
    const { schedule } = await newSchedule(w, [{ amount: 1_000 }]);
    const employeeId = w.people[0]!.employee.id;
    const before = toEmployeeUpdatePayload((await findEmployeeOnPayroll(t.db, employeeId, w.payroll.id))!);
    await t.db.transaction().execute(async (trx) => {
      await trx.updateTable('employments').set({ employment_status: 'leaver' }).where('employee_id', '=', employeeId).where('payroll_id', '=', w.payroll.id).execute();
      await followEmploymentChange(trx, { employeeId, payrollId: w.payroll.id, before });
    });
    await expectSettledOnce(w, schedule.id, { status: 'cancelled', status_reason: 'mandate_ended' });
  });
});

describe('webhooks', () => {
  it('schedule.updated goes to the endpoints that take it: every type, or schedule.updated named', async () => {
    const w = await createWorld(t.db);
    const headers = await authHeaders(t.app, w.biller);
    const register = async (eventTypes?: string[]) => {
      const response = await injectJson(t.app, {
        method: 'POST',
        url: '/webhook-endpoints',
        headers,
        body: { url: 'http://127.0.0.1:9/hooks', ...(eventTypes ? { event_types: eventTypes } : {}) },
      });
      expect(response.statusCode, response.body).toBe(201);
      return response.json().webhook_endpoint.id as string;
    };
    const named = await register(['schedule.updated']);
    const every = await register();
    await register(['payment_request.updated']);

    const { schedule } = await newSchedule(w, [{ amount: 1_000 }]);
    expect((await injectJson(t.app, { method: 'POST', url: `/schedules/${schedule.id}/cancel`, headers })).statusCode).toBe(200);
    const [event] = await scheduleEvents(schedule.id);
    expect(await insertDeliveriesForEvents(t.db, [event!.id])).toBe(2);
    const deliveries = await t.db.selectFrom('webhook_deliveries').select('endpoint_id').where('event_id', '=', event!.id).execute();
    expect(deliveries.map((d) => d.endpoint_id).sort()).toEqual([named, every].sort());
  });
});
