import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { instalmentDueDates } from '../../../src/collections/schedules/instalment-due-dates.ts';
import { createBiller, createEmployee, createEmployer, createMandateRow, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let billerA: Credentials;
let headersA: Record<string, string>;
let headersB: Record<string, string>;
let today: string;
let payroll: { id: string };
let employeeId: string;
let mandateId: string;
/** Open pay dates at today + 20, 50, 80, 110, 140. */
let payDates: string[];

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function createSchedule(headers: Record<string, string>, record: Record<string, unknown>) {
  return injectJson(t.app, {
    method: 'POST',
    url: '/schedules',
    headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
    body: { schedule_record: record },
  });
}

async function newMandate() {
  return (await createMandateRow(t.db, { billerClientId: billerA.clientId, employeeId, payrollId: payroll.id })).id;
}

async function counts(mandate: string) {
  const row = await sql<{ schedules: number; payments: number; events: number }>`
    select (select count(*)::int from schedules where mandate_id = ${mandate}) as schedules,
           (select count(*)::int from payment_requests where mandate_id = ${mandate}) as payments,
           (select count(*)::int from events e join payment_requests p on p.id = e.resource_id where p.mandate_id = ${mandate}) as events
  `.execute(t.db);
  return row.rows[0]!;
}

beforeAll(async () => {
  t = await startTestApp();
  today = serviceToday(new Date(), t.config.SERVICE_TIME_ZONE);
  billerA = await createBiller(t.db);
  headersA = await authHeaders(t.app, billerA);
  headersB = await authHeaders(t.app, await createBiller(t.db));
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  payDates = [20, 50, 80, 110, 140].map((days) => addDays(today, days));
  payroll = await createPayroll(t.db, {
    providerId: provider.id,
    employerId: employer.id,
    payDates: payDates.map((pay_date, i) => ({
      pay_date,
      payroll_cutoff_date: addDays(pay_date, -5),
      lock_date: addDays(pay_date, -8),
      pay_period: `${i + 1}-2099`,
    })),
  });
  employeeId = (await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id })).employee.id;
  mandateId = await newMandate();
});
afterAll(async () => t?.close());

describe('POST /schedules', () => {
  it('creates a schedule from explicit instalments, each a payment request with its own target pay date and event', async () => {
    const response = await createSchedule(headersA, {
      mandate_id: mandateId,
      total_amount: 6000,
      metadata: { plan: 'P-9' },
      instalments: [
        { amount: 1000, due_date: addDays(today, 25) },
        { amount: 2000, due_date: addDays(today, 55), metadata: { n: 2 } },
        { amount: 3000, due_date: payDates[2] },
      ],
    });
    expect(response.statusCode, response.body).toBe(201);
    const schedule = response.json().schedule;
    expect(response.headers.location).toBe(`/schedules/${schedule.id}`);
    expect(schedule).toMatchObject({
      mandate_id: mandateId,
      status: 'active',
      currency: 'GBP',
      total_amount: 6000,
      instalment_count: 3,
      metadata: { plan: 'P-9' },
      version: 1,
    });
    expect(schedule.instalments).toEqual([
      { instalment_number: 1, payment_id: expect.any(String), amount: 1000, due_date: addDays(today, 25), target_pay_date: payDates[0], status: 'pending' },
      { instalment_number: 2, payment_id: expect.any(String), amount: 2000, due_date: addDays(today, 55), target_pay_date: payDates[1], status: 'pending' },
      { instalment_number: 3, payment_id: expect.any(String), amount: 3000, due_date: payDates[2], target_pay_date: payDates[2], status: 'pending' },
    ]);

    const rows = await t.db.selectFrom('payment_requests').selectAll().where('schedule_id', '=', schedule.id).orderBy('instalment_number').execute();
    expect(rows.map((r) => [r.instalment_number, r.amount, r.status, r.payroll_id, r.employee_id])).toEqual([
      [1, 1000, 'pending', payroll.id, employeeId],
      [2, 2000, 'pending', payroll.id, employeeId],
      [3, 3000, 'pending', payroll.id, employeeId],
    ]);
    expect(rows[1]!.metadata).toEqual({ n: 2 });
    const events = await t.db
      .selectFrom('events')
      .select(eventSelection)
      .where(
        'resource_id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    expect(events).toHaveLength(3);
    for (const event of events) {
      expect(event.type).toBe('payment_request.created');
      expect((event.payload as any).data).toMatchObject({ schedule_id: schedule.id, status: 'pending', version: 1 });
      // Exactly the stored instalment, as GET /payments/{id} shows it.
      const read = await injectJson(t.app, { method: 'GET', url: `/payments/${event.resource_id}`, headers: headersA });
      expect((event.payload as any).data).toEqual(read.json().payment);
    }
    const stored = await t.db.selectFrom('schedules').selectAll().where('id', '=', schedule.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: 'active', total_amount: 6000, instalment_count: 3, biller_client_id: billerA.clientId });
  });

  it('creates a schedule from amount, count, interval and start date', async () => {
    const startDate = addDays(today, 30);
    const response = await createSchedule(headersA, { mandate_id: mandateId, amount: 1250, count: 3, interval: 'monthly', start_date: startDate });
    expect(response.statusCode, response.body).toBe(201);
    const schedule = response.json().schedule;
    expect(schedule).toMatchObject({ total_amount: 3750, instalment_count: 3 });
    expect(schedule.instalments.map((i: { due_date: string }) => i.due_date)).toEqual(instalmentDueDates(startDate, 'monthly', 3));
    // Due roughly +30, +60 and +90 days: the latest open pay dates on or before them are +20, +50, +80.
    expect(schedule.instalments.map((i: { target_pay_date: string }) => i.target_pay_date)).toEqual(payDates.slice(0, 3));
    expect(schedule.instalments.map((i: { amount: number }) => i.amount)).toEqual([1250, 1250, 1250]);
  });

  it('refuses a total_amount that is not the sum of the instalments, naming both, and writes nothing', async () => {
    const mandate = await newMandate();
    const response = await createSchedule(headersA, { mandate_id: mandate, total_amount: 5000, amount: 1000, count: 4, interval: 'weekly', start_date: addDays(today, 30) });
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}total-amount-mismatch`);
    expect(body.detail).toContain('5000');
    expect(body.detail).toContain('4000');
    expect(body.errors[0].pointer).toBe('/schedule_record/total_amount');
    expect(await counts(mandate)).toEqual({ schedules: 0, payments: 0, events: 0 });
  });

  it('rejects the whole schedule when one instalment is unreachable, pointing at it and naming the expected pay date', async () => {
    const mandate = await newMandate();
    const unreachable = addDays(today, 10);
    const response = await createSchedule(headersA, {
      mandate_id: mandate,
      instalments: [
        { amount: 1000, due_date: unreachable },
        { amount: 1000, due_date: addDays(today, 60) },
        { amount: 1000, due_date: addDays(today, 90) },
      ],
    });
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}due-date-unreachable`);
    expect(body.detail).toContain(`instalment 1 (due ${unreachable})`);
    expect(body.detail).toContain(`The earliest pay date this payment can be deducted on is ${payDates[0]}`);
    expect(body.errors).toEqual([{ pointer: '/schedule_record/instalments/0/due_date', detail: expect.stringContaining(payDates[0]!) }]);
    expect(body.rejected_instalments).toEqual([{ instalment_number: 1, due_date: unreachable, reason: 'due-date-unreachable', expected_pay_date: payDates[0] }]);
    expect(await counts(mandate)).toEqual({ schedules: 0, payments: 0, events: 0 });
  });

  it('lists every rejected instalment of the generated form, and accepts them with allow_post_due_date_deduction', async () => {
    const mandate = await newMandate();
    const record = { mandate_id: mandate, amount: 500, count: 4, interval: 'weekly', start_date: addDays(today, 1) };
    const rejected = await createSchedule(headersA, record);
    expect(rejected.statusCode).toBe(422);
    // Due +1, +8, +15 (before the first pay date at +20) and +22.
    expect(rejected.json().rejected_instalments.map((r: { instalment_number: number }) => r.instalment_number)).toEqual([1, 2, 3]);
    expect(rejected.json().errors.every((e: { pointer: string }) => e.pointer === '/schedule_record/start_date')).toBe(true);
    expect(await counts(mandate)).toEqual({ schedules: 0, payments: 0, events: 0 });

    const accepted = await createSchedule(headersA, { ...record, allow_post_due_date_deduction: true });
    expect(accepted.statusCode).toBe(201);
    expect(accepted.json().schedule.instalments.map((i: { target_pay_date: string }) => i.target_pay_date)).toEqual([payDates[0], payDates[0], payDates[0], payDates[0]]);
  });

  it('needs exactly one of the two forms', async () => {
    const both = await createSchedule(headersA, {
      mandate_id: mandateId,
      amount: 100,
      instalments: [{ amount: 100, due_date: addDays(today, 30) }],
    });
    expect(both.statusCode).toBe(422);
    expect(both.json().errors.map((e: { pointer: string }) => e.pointer)).toContain('/schedule_record/amount');

    const neither = await createSchedule(headersA, { mandate_id: mandateId });
    expect(neither.statusCode).toBe(422);
    expect(neither.json().errors[0].pointer).toBe('/schedule_record');

    const partial = await createSchedule(headersA, { mandate_id: mandateId, amount: 100, count: 2 });
    expect(
      partial
        .json()
        .errors.map((e: { pointer: string }) => e.pointer)
        .sort(),
    ).toEqual(['/schedule_record/interval', '/schedule_record/start_date']);

    const tooMany = await createSchedule(headersA, { mandate_id: mandateId, amount: 100, count: 121, interval: 'weekly', start_date: addDays(today, 30) });
    expect(tooMany.json().errors[0].pointer).toBe('/schedule_record/count');

    const backwards = await createSchedule(headersA, {
      mandate_id: mandateId,
      instalments: [
        { amount: 100, due_date: addDays(today, 60) },
        { amount: 100, due_date: addDays(today, 30) },
      ],
    });
    expect(backwards.json().errors[0].pointer).toBe('/schedule_record/instalments/1/due_date');
  });

  it('applies the mandate rules: inactive mandate and currency mismatch are 422', async () => {
    const revoked = (await createMandateRow(t.db, { billerClientId: billerA.clientId, employeeId, payrollId: payroll.id, status: 'revoked' })).id;
    const inactive = await createSchedule(headersA, { mandate_id: revoked, amount: 100, count: 1, interval: 'weekly', start_date: addDays(today, 30) });
    expect(inactive.json().type).toBe(`${PROBLEM_TYPE_BASE}mandate-not-active`);
    const euro = await createSchedule(headersA, { mandate_id: mandateId, currency: 'EUR', amount: 100, count: 1, interval: 'weekly', start_date: addDays(today, 30) });
    expect(euro.statusCode).toBe(422);
    expect(euro.json().errors[0].pointer).toBe('/schedule_record/currency');
  });
});

describe('POST /schedules/:schedule_id/cancel', () => {
  it('cancels only the pending instalments, with an event each; a second cancel changes nothing', async () => {
    const created = (await createSchedule(headersA, { mandate_id: mandateId, amount: 700, count: 3, interval: 'monthly', start_date: addDays(today, 30) })).json().schedule;
    const [first, second, third] = created.instalments.map((i: { payment_id: string }) => i.payment_id);
    await t.db.updateTable('payment_requests').set({ status: 'instructed' }).where('id', '=', first).execute();

    const response = await injectJson(t.app, { method: 'POST', url: `/schedules/${created.id}/cancel`, headers: headersA });
    expect(response.statusCode, response.body).toBe(200);
    const schedule = response.json().schedule;
    expect(schedule).toMatchObject({ id: created.id, status: 'cancelled', version: 2 });
    expect(schedule.instalments.map((i: { status: string }) => i.status)).toEqual(['instructed', 'cancelled', 'cancelled']);

    const updates = await t.db
      .selectFrom('events')
      .select(eventSelection)
      .where('type', '=', 'payment_request.updated')
      .where('resource_id', 'in', [first, second, third])
      .execute();
    expect(updates.map((e) => e.resource_id).sort()).toEqual([second, third].sort());
    for (const event of updates) expect((event.payload as any).data).toMatchObject({ status: 'cancelled', version: 2 });

    const again = await injectJson(t.app, { method: 'POST', url: `/schedules/${created.id}/cancel`, headers: headersA });
    expect(again.statusCode).toBe(200);
    expect(again.json().schedule).toEqual(schedule);
    const after = await t.db.selectFrom('events').select('id').where('type', '=', 'payment_request.updated').where('resource_id', 'in', [first, second, third]).execute();
    expect(after).toHaveLength(2);
  });

  it('refuses a completed schedule with 409', async () => {
    const created = (await createSchedule(headersA, { mandate_id: mandateId, amount: 700, count: 1, interval: 'monthly', start_date: addDays(today, 30) })).json().schedule;
    await t.db.updateTable('schedules').set({ status: 'completed' }).where('id', '=', created.id).execute();
    const response = await injectJson(t.app, { method: 'POST', url: `/schedules/${created.id}/cancel`, headers: headersA });
    expect(response.statusCode).toBe(409);
    const instalment = await t.db.selectFrom('payment_requests').select('status').where('schedule_id', '=', created.id).executeTakeFirstOrThrow();
    expect(instalment.status).toBe('pending');
  });
});

describe('GET /schedules', () => {
  it('gets one schedule and lists with filters and paging', async () => {
    const mandate = await newMandate();
    const ids: string[] = [];
    for (const amount of [100, 200, 300]) {
      ids.push((await createSchedule(headersA, { mandate_id: mandate, amount, count: 2, interval: 'weekly', start_date: addDays(today, 30) })).json().schedule.id);
    }
    await injectJson(t.app, { method: 'POST', url: `/schedules/${ids[0]}/cancel`, headers: headersA });

    const one = await injectJson(t.app, { method: 'GET', url: `/schedules/${ids[1]}`, headers: headersA });
    expect(one.statusCode).toBe(200);
    expect(one.json().schedule).toMatchObject({ id: ids[1], total_amount: 400, instalment_count: 2 });
    expect(one.json().schedule.instalments).toHaveLength(2);
    expect((await injectJson(t.app, { method: 'GET', url: '/schedules/nope', headers: headersA })).statusCode).toBe(404);

    const list = async (query: string) => (await injectJson(t.app, { method: 'GET', url: `/schedules?${query}`, headers: headersA })).json();
    const all = await list(`mandate_id=${mandate}`);
    expect(all.schedules.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
    expect(all.schedules[0].instalments).toHaveLength(2);
    expect((await list(`mandate_id=${mandate}&status=cancelled`)).schedules.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect((await list(`mandate_id=${mandate}&status=active`)).schedules.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);

    const page1 = await list(`mandate_id=${mandate}&limit=2`);
    expect(page1.schedules.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const page2 = await list(`mandate_id=${mandate}&limit=2&after=${page1.paging.after}`);
    expect(page2.schedules.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(page2.paging.after).toBeNull();
  });

  it("lists a schedule's instalments through GET /payments?schedule_id, page by page", async () => {
    const schedule = (await createSchedule(headersA, { mandate_id: mandateId, amount: 100, count: 5, interval: 'weekly', start_date: addDays(today, 30) })).json().schedule;
    const seen: string[] = [];
    let url = `/payments?schedule_id=${schedule.id}&limit=2`;
    for (let page = 0; page < 5; page++) {
      const body = (await injectJson(t.app, { method: 'GET', url, headers: headersA })).json();
      seen.push(...body.payments.map((p: { id: string }) => p.id));
      if (!body.paging.after) break;
      url = `/payments?schedule_id=${schedule.id}&limit=2&after=${body.paging.after}`;
    }
    // Instalments share one created_at (one transaction), so this walks the id tie-breaker.
    expect(seen.sort()).toEqual(schedule.instalments.map((i: { payment_id: string }) => i.payment_id).sort());
  });
});

describe('tenant isolation', () => {
  it("another biller gets 404 for biller A's schedule and mandate", async () => {
    const schedule = (await createSchedule(headersA, { mandate_id: mandateId, amount: 100, count: 1, interval: 'weekly', start_date: addDays(today, 30) })).json().schedule;
    expect((await injectJson(t.app, { method: 'GET', url: `/schedules/${schedule.id}`, headers: headersB })).statusCode).toBe(404);
    expect((await injectJson(t.app, { method: 'POST', url: `/schedules/${schedule.id}/cancel`, headers: headersB })).statusCode).toBe(404);
    expect((await injectJson(t.app, { method: 'GET', url: `/schedules?mandate_id=${mandateId}`, headers: headersB })).json().schedules).toEqual([]);
    const before = await counts(mandateId);
    const onOthersMandate = await createSchedule(headersB, { mandate_id: mandateId, amount: 100, count: 1, interval: 'weekly', start_date: addDays(today, 30) });
    expect(onOthersMandate.statusCode).toBe(404);
    expect(await counts(mandateId)).toEqual(before);
    const stored = await t.db.selectFrom('schedules').select('status').where('id', '=', schedule.id).executeTakeFirstOrThrow();
    expect(stored.status).toBe('active');
  });
});

describe('authentication and scopes', () => {
  const endpoints = [
    { method: 'POST', url: () => '/schedules', scope: 'payments:write', body: { schedule_record: { mandate_id: crypto.randomUUID() } } },
    { method: 'POST', url: () => `/schedules/${crypto.randomUUID()}/cancel`, scope: 'payments:write' },
    { method: 'GET', url: () => `/schedules/${crypto.randomUUID()}`, scope: 'payments:read' },
    { method: 'GET', url: () => '/schedules', scope: 'payments:read' },
  ] as const;

  for (const endpoint of endpoints) {
    it(`${endpoint.method} ${endpoint.url().replace(/[0-9a-f-]{36}/, ':id')}: 401 without credentials, 403 without ${endpoint.scope}`, async () => {
      const body = 'body' in endpoint ? endpoint.body : undefined;
      const idempotency = { 'idempotency-key': crypto.randomUUID() };
      const anonymous = await injectJson(t.app, { method: endpoint.method, url: endpoint.url(), headers: idempotency, body });
      expect(anonymous.statusCode).toBe(401);
      const otherScope = endpoint.scope === 'payments:write' ? 'payments:read' : 'payments:write';
      const narrow = await authHeaders(t.app, billerA, otherScope);
      const forbidden = await injectJson(t.app, { method: endpoint.method, url: endpoint.url(), headers: { ...narrow, ...idempotency }, body });
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json().type).toBe(`${PROBLEM_TYPE_BASE}insufficient-scope`);
    });
  }
});
