import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import type { Credentials } from '../../support/test-app.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let billerA: Credentials;
let headersA: Record<string, string>;
let headersB: Record<string, string>;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;
let mandateId: string;

function create(headers: Record<string, string>, record: Record<string, unknown>) {
  return injectJson(t.app, {
    method: 'POST',
    url: '/payments',
    headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
    body: { payment_record: record },
  });
}

async function createOk(record: Record<string, unknown>) {
  const response = await create(headersA, { mandate_id: mandateId, amount: 2500, ...record });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().payment as Record<string, any>;
}

function cancel(headers: Record<string, string>, paymentId: string) {
  return injectJson(t.app, { method: 'POST', url: `/payments/${paymentId}/cancel`, headers });
}

function eventsOf(resourceId: string) {
  return t.db.selectFrom('events').select(eventSelection).where('resource_id', '=', resourceId).orderBy('sequence').execute();
}

function paymentCount(mandate: string) {
  return t.db
    .selectFrom('payment_requests')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('mandate_id', '=', mandate)
    .executeTakeFirstOrThrow()
    .then((r) => r.n);
}

function eventCount() {
  return t.db
    .selectFrom('events')
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow()
    .then((r) => r.n);
}

beforeAll(async () => {
  t = await startTestApp();
  billerA = await createBiller(t.db);
  const billerB = await createBiller(t.db);
  headersA = await authHeaders(t.app, billerA);
  headersB = await authHeaders(t.app, billerB);
  world = await createEmploymentWorld(t.db);
  mandateId = (await createMandateRow(t.db, { billerClientId: billerA.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
});
afterAll(async () => t?.close());

describe('POST /payments', () => {
  it('creates a pending payment request targeted at a pay date, with its event in the same transaction', async () => {
    const response = await create(headersA, { mandate_id: mandateId, amount: 12550, metadata: { loan: 'L-1' } });
    expect(response.statusCode).toBe(201);
    const payment = response.json().payment;
    expect(response.headers.location).toBe(`/payments/${payment.id}`);
    const firstPayDate = (await t.db.selectFrom('pay_dates').select('pay_date').where('payroll_id', '=', world.payroll.id).orderBy('pay_date').executeTakeFirstOrThrow())
      .pay_date;
    expect(payment).toEqual({
      id: expect.any(String),
      mandate_id: mandateId,
      schedule_id: null,
      instalment_number: null,
      status: 'pending',
      status_reason: null,
      amount: 12550,
      currency: 'GBP',
      collected_amount: 0,
      paid_out_amount: 0,
      attempts: 0,
      due_date: null,
      target_pay_date: firstPayDate,
      allow_post_due_date_deduction: false,
      metadata: { loan: 'L-1' },
      version: 1,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      cancelled_at: null,
    });
    const row = await t.db.selectFrom('payment_requests').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ payroll_id: world.payroll.id, employee_id: world.employee.id, biller_client_id: billerA.clientId });

    const events = await eventsOf(payment.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'payment_request.created', biller_client_id: billerA.clientId, resource_type: 'payment_request' });
    expect((events[0]!.payload as any).data).toEqual(payment);
    expect((events[0]!.payload as any).data.status).toBe('pending');
    // Announced as of the moment the request was made, not the transaction's start.
    expect((events[0]!.payload as any).created_at).toBe(payment.created_at);
    // The response and the event are built before the insert; what was stored reads back the same.
    const read = await injectJson(t.app, { method: 'GET', url: `/payments/${payment.id}`, headers: headersA });
    expect(read.statusCode).toBe(200);
    expect(read.json().payment).toEqual(payment);
  });

  it('requires an Idempotency-Key and replays the stored response for a repeated key', async () => {
    const missing = await injectJson(t.app, { method: 'POST', url: '/payments', headers: headersA, body: { payment_record: { mandate_id: mandateId, amount: 100 } } });
    expect(missing.statusCode).toBe(400);
    const key = crypto.randomUUID();
    const send = () =>
      injectJson(t.app, {
        method: 'POST',
        url: '/payments',
        headers: { ...headersA, 'idempotency-key': key },
        body: { payment_record: { mandate_id: mandateId, amount: 101 } },
      });
    const first = await send();
    const again = await send();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await t.db.selectFrom('payment_requests').select('id').where('amount', '=', 101).execute()).toHaveLength(1);
  });

  it('accepts a pending_enablement mandate and refuses an inactive one with mandate-not-active', async () => {
    const pendingMandate = await createMandateRow(t.db, {
      billerClientId: billerA.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'pending_enablement',
    });
    expect((await create(headersA, { mandate_id: pendingMandate.id, amount: 100 })).statusCode).toBe(201);

    const revoked = await createMandateRow(t.db, { billerClientId: billerA.clientId, employeeId: world.employee.id, payrollId: world.payroll.id, status: 'revoked' });
    const response = await create(headersA, { mandate_id: revoked.id, amount: 100 });
    expect(response.statusCode).toBe(422);
    expect(response.json().type).toBe(`${PROBLEM_TYPE_BASE}mandate-not-active`);
    expect(await paymentCount(revoked.id)).toBe(0);
  });

  it('404s for an unknown mandate', async () => {
    const response = await create(headersA, { mandate_id: crypto.randomUUID(), amount: 100 });
    expect(response.statusCode).toBe(404);
  });

  it('defaults the currency to GBP and refuses one that differs from the mandate', async () => {
    expect((await createOk({ currency: null })).currency).toBe('GBP');
    const before = await eventCount();
    const response = await create(headersA, { mandate_id: mandateId, amount: 100, currency: 'EUR' });
    expect(response.statusCode).toBe(422);
    expect(response.json().type).toBe(`${PROBLEM_TYPE_BASE}currency-mismatch`);
    expect(response.json().errors[0].pointer).toBe('/payment_record/currency');
    expect(await eventCount()).toBe(before);
  });

  it('validates the body strictly, with pointers', async () => {
    const response = await create(headersA, { mandate_id: mandateId, amount: 10.5, colour: 'red' });
    expect(response.statusCode).toBe(422);
    const pointers = response.json().errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/payment_record/amount', '/payment_record/colour']));
    const zero = await create(headersA, { mandate_id: mandateId, amount: 0 });
    expect(zero.json().errors[0].pointer).toBe('/payment_record/amount');
  });

  it('a rejected request writes neither a payment nor an event', async () => {
    const [payments, events] = [await paymentCount(mandateId), await eventCount()];
    const response = await create(headersA, { mandate_id: mandateId, amount: 100, due_date: '2000-01-01' });
    expect(response.statusCode).toBe(422);
    expect(await paymentCount(mandateId)).toBe(payments);
    expect(await eventCount()).toBe(events);
  });
});

describe('metadata limits', () => {
  it('accepts three items', async () => {
    const metadata = { a: 'x', b: { nested: [1, 2] }, c: 3 };
    expect((await createOk({ metadata })).metadata).toEqual(metadata);
  });

  it('rejects a fourth item, naming the metadata field', async () => {
    const response = await create(headersA, { mandate_id: mandateId, amount: 100, metadata: { a: 1, b: 2, c: 3, d: 4 } });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([expect.objectContaining({ pointer: '/payment_record/metadata' })]);
  });

  it('rejects an item over 1 MB, naming the item', async () => {
    const response = await create(headersA, { mandate_id: mandateId, amount: 100, metadata: { small: 'ok', big: 'x'.repeat(1_100_000) } });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([expect.objectContaining({ pointer: '/payment_record/metadata/big' })]);
  });

  it('accepts an item just under 1 MB', async () => {
    const payment = await createOk({ metadata: { doc: 'y'.repeat(1024 * 1024 - 2) } });
    expect((payment.metadata.doc as string).length).toBe(1024 * 1024 - 2);
  });
});

describe('POST /payments/:payment_id/cancel', () => {
  it('cancels a pending request with an event; a second cancel changes nothing', async () => {
    const payment = await createOk({});
    const response = await cancel(headersA, payment.id);
    expect(response.statusCode).toBe(200);
    const cancelled = response.json().payment;
    expect(cancelled).toMatchObject({ id: payment.id, status: 'cancelled', version: 2, cancelled_at: expect.any(String) });
    const events = await eventsOf(payment.id);
    expect(events.map((e) => e.type)).toEqual(['payment_request.created', 'payment_request.updated']);
    expect((events[1]!.payload as any).data).toEqual(cancelled);

    const again = await cancel(headersA, payment.id);
    expect(again.statusCode).toBe(200);
    expect(again.json().payment).toEqual(cancelled);
    expect(await eventsOf(payment.id)).toHaveLength(2);
  });

  it('refuses with 409 once instructed to payroll, naming the pay date', async () => {
    const payment = await createOk({});
    await t.db.updateTable('payment_requests').set({ status: 'instructed' }).where('id', '=', payment.id).execute();
    const response = await cancel(headersA, payment.id);
    expect(response.statusCode).toBe(409);
    expect(response.json().type).toBe(`${PROBLEM_TYPE_BASE}payment-not-cancellable`);
    expect(response.json().detail).toContain(`instructed to payroll for pay date ${payment.target_pay_date}`);
    const row = await t.db.selectFrom('payment_requests').select(['status', 'version']).where('id', '=', payment.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'instructed', version: 1 });
  });

  it('404s for an unknown or malformed id', async () => {
    expect((await cancel(headersA, crypto.randomUUID())).statusCode).toBe(404);
    expect((await cancel(headersA, 'not-a-uuid')).statusCode).toBe(404);
  });
});

describe('GET /payments', () => {
  let mandate2: string;
  let created: Array<Record<string, any>>;

  beforeAll(async () => {
    mandate2 = (await createMandateRow(t.db, { billerClientId: billerA.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
    created = [];
    for (const amount of [301, 302, 303]) {
      const response = await create(headersA, { mandate_id: mandate2, amount });
      created.push(response.json().payment);
    }
    await cancel(headersA, created[0]!.id);
  });

  it('gets one payment', async () => {
    const response = await injectJson(t.app, { method: 'GET', url: `/payments/${created[1]!.id}`, headers: headersA });
    expect(response.statusCode).toBe(200);
    expect(response.json().payment).toEqual(created[1]);
    const malformed = await injectJson(t.app, { method: 'GET', url: '/payments/123', headers: headersA });
    expect(malformed.statusCode).toBe(404);
  });

  it('filters by mandate, status, target pay date and schedule', async () => {
    const list = async (query: string) => {
      const response = await injectJson(t.app, { method: 'GET', url: `/payments?${query}`, headers: headersA });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().payments.map((p: { amount: number }) => p.amount);
    };
    expect(await list(`mandate_id=${mandate2}`)).toEqual([303, 302, 301]);
    expect(await list(`mandate_id=${mandate2}&status=cancelled`)).toEqual([301]);
    expect(await list(`mandate_id=${mandate2}&status=pending`)).toEqual([303, 302]);
    expect(await list(`mandate_id=${mandate2}&target_pay_date=${created[1]!.target_pay_date}`)).toEqual([303, 302, 301]);
    expect(await list(`mandate_id=${mandate2}&target_pay_date=2099-01-01`)).toEqual([]);
    expect(await list(`mandate_id=${mandate2}&schedule_id=${crypto.randomUUID()}`)).toEqual([]);
  });

  it('pages with after and before cursors', async () => {
    const first = (await injectJson(t.app, { method: 'GET', url: `/payments?mandate_id=${mandate2}&limit=2`, headers: headersA })).json();
    expect(first.payments.map((p: { amount: number }) => p.amount)).toEqual([303, 302]);
    expect(first.paging).toMatchObject({ limit: 2, after: expect.any(String), before: null });
    const second = (await injectJson(t.app, { method: 'GET', url: `/payments?mandate_id=${mandate2}&limit=2&after=${first.paging.after}`, headers: headersA })).json();
    expect(second.payments.map((p: { amount: number }) => p.amount)).toEqual([301]);
    expect(second.paging.after).toBeNull();
    const back = (await injectJson(t.app, { method: 'GET', url: `/payments?mandate_id=${mandate2}&limit=2&before=${second.paging.before}`, headers: headersA })).json();
    expect(back.payments.map((p: { amount: number }) => p.amount)).toEqual([303, 302]);
  });

  it('rejects an unknown status filter', async () => {
    const response = await injectJson(t.app, { method: 'GET', url: '/payments?status=lost', headers: headersA });
    expect(response.statusCode).toBe(400);
  });
});

describe('tenant isolation', () => {
  it('another biller cannot see, cancel or pay on biller A payments and mandates', async () => {
    const payment = await createOk({});
    expect((await injectJson(t.app, { method: 'GET', url: `/payments/${payment.id}`, headers: headersB })).statusCode).toBe(404);
    expect((await cancel(headersB, payment.id)).statusCode).toBe(404);
    const list = await injectJson(t.app, { method: 'GET', url: `/payments?mandate_id=${mandateId}`, headers: headersB });
    expect(list.json().payments).toEqual([]);
    const before = await paymentCount(mandateId);
    const onOthersMandate = await create(headersB, { mandate_id: mandateId, amount: 100 });
    expect(onOthersMandate.statusCode).toBe(404);
    expect(await paymentCount(mandateId)).toBe(before);
    const row = await t.db.selectFrom('payment_requests').select('status').where('id', '=', payment.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('pending');
  });
});

describe('authentication and scopes', () => {
  const endpoints = [
    { method: 'POST', url: () => '/payments', scope: 'payments:write', body: { payment_record: { mandate_id: crypto.randomUUID(), amount: 1 } } },
    { method: 'POST', url: () => `/payments/${crypto.randomUUID()}/cancel`, scope: 'payments:write' },
    { method: 'GET', url: () => `/payments/${crypto.randomUUID()}`, scope: 'payments:read' },
    { method: 'GET', url: () => '/payments', scope: 'payments:read' },
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

describe('OpenAPI document', () => {
  it('documents the payment operations with the interface operation id and a required Idempotency-Key', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const create = spec.paths['/payments'].post;
    expect(create.operationId).toBe('create_new_payment_request');
    expect(create['x-required-scope']).toBe('payments:write');
    expect(create.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }));
    expect(create.requestBody.required).toBe(true);
    expect(spec.paths['/payments/{payment_id}/cancel'].post['x-required-scope']).toBe('payments:write');
    expect(spec.paths['/payments'].get['x-required-scope']).toBe('payments:read');
    expect(spec.paths['/schedules'].post.operationId).toBe('instruct_new_schedule');
  });
});
