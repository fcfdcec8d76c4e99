import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { createBiller, createEmployee, createEmploymentWorld, createMandateRow, createPaymentRequestRow, createPayroll } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;
let billerA: IssuedCredentials;
let billerB: IssuedCredentials;
let headersA: Record<string, string>;
let headersB: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  world = await createEmploymentWorld(t.db);
  billerA = await createBiller(t.db);
  billerB = await createBiller(t.db);
  headersA = await authHeaders(t.app, billerA);
  headersB = await authHeaders(t.app, billerB);
});
afterAll(async () => t?.close());

/** The consumer is the employee named, as the directory knows them (the mandate must be theirs). */
type Person = { id: string; family_name: string; date_of_birth: string | null };

function mandateRecord(overrides: Record<string, unknown> = {}, employee: Person = world.employee) {
  return {
    employee_id: employee.id,
    payroll_id: world.payroll.id,
    consumer: {
      given_name: 'Alex',
      family_name: employee.family_name,
      email_address: 'alex.taylor@example.com',
      date_of_birth: employee.date_of_birth,
      external_reference: 'CUST-001',
    },
    authorisation_source: { type: 'online', authorised_at: '2026-01-15T10:30:00+01:00', ip_address: '203.0.113.7' },
    reference: 'LOAN-42',
    ...overrides,
  };
}

function postMandate(body: object, headers: Record<string, string> = headersA, key: string | null = randomUUID()) {
  return injectJson(t.app, {
    method: 'POST',
    url: '/mandates',
    headers: { ...headers, ...(key === null ? {} : { 'idempotency-key': key }) },
    body,
  });
}

function expectProblem(response: LightMyRequestResponse, status: number, slug?: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json();
  if (slug) expect(problem.type).toBe(PROBLEM_TYPE_BASE + slug);
  return problem as { errors?: Array<{ pointer: string; detail: string }> };
}

function pointers(problem: { errors?: Array<{ pointer: string }> }) {
  return (problem.errors ?? []).map((error) => error.pointer);
}

async function eventsOf(billerClientId: string) {
  return t.db.selectFrom('events').selectAll().where('biller_client_id', '=', billerClientId).orderBy('sequence').execute();
}

describe('POST /mandates', () => {
  it('creates a pending_enablement mandate with its consumer and a mandate.created event', async () => {
    const response = await postMandate({
      mandate_record: mandateRecord({
        limitations: { max_amount_per_pay_date: 25_000, valid_to: '2099-12-31' },
        metadata: { crm_id: 'abc', tier: 2 },
      }),
    });
    expect(response.statusCode, response.body).toBe(201);
    const { mandate } = response.json();
    expect(response.headers.location).toBe(`/mandates/${mandate.id}`);
    expect(mandate).toMatchObject({
      status: 'pending_enablement',
      status_reason: null,
      employee_id: world.employee.id,
      payroll_id: world.payroll.id,
      currency: 'GBP',
      consumer: {
        given_name: 'Alex',
        family_name: world.employee.family_name,
        email_address: 'alex.taylor@example.com',
        phone_number: null,
        date_of_birth: '1988-03-14',
        external_reference: 'CUST-001',
      },
      limitations: { max_amount_per_pay_date: 25_000, max_total_amount: null, valid_from: null, valid_to: '2099-12-31' },
      authorisation_source: {
        type: 'online',
        reference: null,
        authorised_at: '2026-01-15T09:30:00.000Z',
        ip_address: '203.0.113.7',
      },
      reference: 'LOAN-42',
      metadata: { crm_id: 'abc', tier: 2 },
      version: 1,
      revoked_at: null,
    });

    const row = await t.db.selectFrom('mandates').selectAll().where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(row.biller_client_id).toBe(billerA.clientId);
    expect(row.max_amount_per_pay_date).toBe(25_000);
    const consumer = await t.db.selectFrom('consumers').selectAll().where('id', '=', row.consumer_id).executeTakeFirstOrThrow();
    expect(consumer.biller_client_id).toBe(billerA.clientId);
    expect(consumer.external_reference).toBe('CUST-001');

    const events = await t.db.selectFrom('events').selectAll().where('resource_id', '=', mandate.id).execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('mandate.created');
    expect(events[0]!.biller_client_id).toBe(billerA.clientId);
    const payload = events[0]!.payload as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe('mandate.created');
    expect(payload.data).toEqual(mandate);
    expect(payload.data.status).toBe('pending_enablement');
  });

  it('requires an Idempotency-Key and creates nothing without one', async () => {
    const before = await t.db.selectFrom('mandates').select('id').execute();
    const response = await postMandate({ mandate_record: mandateRecord() }, headersA, null);
    const problem = expectProblem(response, 400, 'idempotency-key-required');
    expect(pointers(problem)).toEqual(['/headers/idempotency-key']);
    expect(await t.db.selectFrom('mandates').select('id').execute()).toHaveLength(before.length);
  });

  it('replays the stored response for a repeated key and creates one mandate', async () => {
    const key = randomUUID();
    const body = { mandate_record: mandateRecord({ reference: `REPLAY-${key}` }) };
    const first = await postMandate(body, headersA, key);
    const second = await postMandate(body, headersA, key);
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const rows = await t.db.selectFrom('mandates').select('id').where('reference', '=', `REPLAY-${key}`).execute();
    expect(rows).toHaveLength(1);
    const events = await t.db.selectFrom('events').select('id').where('resource_id', '=', rows[0]!.id).execute();
    expect(events).toHaveLength(1);
  });

  it('rejects unknown fields with their JSON pointers', async () => {
    const record = mandateRecord();
    const response = await postMandate({
      mandate_record: { ...record, colour: 'blue', consumer: { ...(record.consumer as object), nickname: 'Al' } },
    });
    const problem = expectProblem(response, 422, 'validation-failed');
    expect(pointers(problem)).toEqual(expect.arrayContaining(['/mandate_record/colour', '/mandate_record/consumer/nickname']));
  });

  it('rejects an employee who is not on the payroll', async () => {
    const otherPayroll = await createPayroll(t.db, { providerId: world.provider.id, employerId: world.employer.id });
    const { employee: elsewhere } = await createEmployee(t.db, {
      providerId: world.provider.id,
      payrollId: otherPayroll.id,
      employerId: world.employer.id,
    });
    const response = await postMandate({ mandate_record: mandateRecord({}, elsewhere) });
    const problem = expectProblem(response, 422, 'employee-not-on-payroll');
    expect(pointers(problem)).toEqual(['/mandate_record/employee_id']);
    expect(await t.db.selectFrom('mandates').select('id').where('employee_id', '=', elsewhere.id).execute()).toHaveLength(0);
  });

  it('rejects an employee who has left the payroll', async () => {
    const { employee: leaver } = await createEmployee(t.db, {
      providerId: world.provider.id,
      payrollId: world.payroll.id,
      employerId: world.employer.id,
      status: 'leaver',
    });
    const problem = expectProblem(await postMandate({ mandate_record: mandateRecord({}, leaver) }), 422, 'employee-left-payroll');
    expect(pointers(problem)).toEqual(['/mandate_record/employee_id']);
  });

  it('rejects an unknown payroll', async () => {
    const problem = expectProblem(await postMandate({ mandate_record: mandateRecord({ payroll_id: randomUUID() }) }), 422, 'unknown-payroll');
    expect(pointers(problem)).toEqual(['/mandate_record/payroll_id']);
  });

  it('rejects a currency other than the payroll currency', async () => {
    const problem = expectProblem(await postMandate({ mandate_record: mandateRecord({ currency: 'EUR' }) }), 422, 'currency-mismatch');
    expect(pointers(problem)).toEqual(['/mandate_record/currency']);
  });

  it('rejects more than three metadata items, naming the metadata field', async () => {
    const response = await postMandate({ mandate_record: mandateRecord({ metadata: { a: 1, b: 2, c: 3, d: 4 } }) });
    const problem = expectProblem(response, 422, 'validation-failed');
    expect(pointers(problem)).toEqual(['/mandate_record/metadata']);
  });

  it('rejects a validity window that ends before it starts, and one already over', async () => {
    const inverted = await postMandate({
      mandate_record: mandateRecord({ limitations: { valid_from: '2099-06-01', valid_to: '2099-05-01' } }),
    });
    expect(pointers(expectProblem(inverted, 422, 'validation-failed'))).toEqual(['/mandate_record/limitations/valid_to']);
    const over = await postMandate({ mandate_record: mandateRecord({ limitations: { valid_to: '2020-01-01' } }) });
    expect(pointers(expectProblem(over, 422, 'mandate-already-expired'))).toEqual(['/mandate_record/limitations/valid_to']);
  });

  it('rejects an authorisation dated in the future', async () => {
    const response = await postMandate({
      mandate_record: mandateRecord({ authorisation_source: { type: 'paper', authorised_at: '2099-01-01T00:00:00Z' } }),
    });
    const problem = expectProblem(response, 422, 'authorisation-in-future');
    expect(pointers(problem)).toEqual(['/mandate_record/authorisation_source/authorised_at']);
  });
});

describe('POST /mandates: the consumer is the employee', () => {
  const consumerOf = (changes: Record<string, unknown>) => ({ ...(mandateRecord().consumer as object), ...changes });
  const mandatesOf = async (employeeId: string) => t.db.selectFrom('mandates').select('id').where('employee_id', '=', employeeId).execute();

  it('refuses another name or another date of birth with 422, naming the fields compared but not which differs', async () => {
    const { employee } = await createEmployee(t.db, { providerId: world.provider.id, payrollId: world.payroll.id, employerId: world.employer.id });
    const record = (consumer: Record<string, unknown>) => ({ ...mandateRecord({}, employee), consumer: { ...(mandateRecord({}, employee).consumer as object), ...consumer } });
    const compared = ['/mandate_record/consumer/family_name', '/mandate_record/consumer/date_of_birth'];
    const answers = [];
    for (const consumer of [{ family_name: 'Somebody-Else' }, { date_of_birth: '1990-01-01' }, { family_name: 'Somebody', date_of_birth: '1990-01-01' }]) {
      const problem = expectProblem(await postMandate({ mandate_record: record(consumer) }), 422, 'consumer-not-employee');
      expect(pointers(problem)).toEqual(compared);
      answers.push(problem.errors);
    }
    // A wrong name and a wrong date of birth read the same.
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    // A national registration number given must be the employee's too.
    const wrongNumber = expectProblem(await postMandate({ mandate_record: record({ national_registration_number: 'QQ999999Z' }) }), 422, 'consumer-not-employee');
    expect(pointers(wrongNumber)).toEqual([...compared, '/mandate_record/consumer/national_registration_number']);
    expect(await mandatesOf(employee.id)).toHaveLength(0);
  });

  it('refuses a consumer without a date of birth, which cannot be tied to the employee', async () => {
    const problem = expectProblem(
      await postMandate({ mandate_record: { ...mandateRecord(), consumer: consumerOf({ date_of_birth: null }) } }),
      422,
      'consumer-identity-incomplete',
    );
    expect(pointers(problem)).toEqual(['/mandate_record/consumer/date_of_birth']);
    const noLetters = expectProblem(await postMandate({ mandate_record: { ...mandateRecord(), consumer: consumerOf({ family_name: "-'." }) } }), 422);
    expect(pointers(noLetters)).toEqual(['/mandate_record/consumer/family_name']);
  });

  it('matches as availability does: case, accents, spaces and punctuation of the name, and the number in any spelling', async () => {
    const response = await postMandate({
      mandate_record: {
        ...mandateRecord(),
        consumer: consumerOf({
          family_name: ` ${world.employee.family_name.toUpperCase().replace('A', 'Á')}. `,
          national_registration_number: world.employee.national_registration_number!.toLowerCase().replace(/(..)(..)/, '$1 $2 '),
        }),
      },
    });
    expect(response.statusCode, response.body).toBe(201);
  });

  it("is created and enabled in the employee's own name; in another name it never exists to be enabled", async () => {
    const { employee } = await createEmployee(t.db, { providerId: world.provider.id, payrollId: world.payroll.id, employerId: world.employer.id });
    const impostor = { ...mandateRecord({}, employee), consumer: { given_name: 'Mallory', family_name: 'Impostor', date_of_birth: '1970-01-01' } };
    expectProblem(await postMandate({ mandate_record: impostor }), 422, 'consumer-not-employee');
    expect(await mandatesOf(employee.id)).toHaveLength(0);

    const created = await postMandate({ mandate_record: mandateRecord({}, employee) });
    expect(created.statusCode, created.body).toBe(201);
    const enablement = { employee_id: employee.id, payroll_id: world.payroll.id, mandate_id: created.json().mandate.id };
    const enabled = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/enablement',
      headers: { ...headersA, 'idempotency-key': randomUUID() },
      body: { enablement },
    });
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json().enablement.status).toBe('enabled');
  });
});

describe('GET /mandates', () => {
  let billerC: IssuedCredentials;
  let headersC: Record<string, string>;
  /** Newest first, as the list answers. */
  let createdIds: string[];
  let secondEmployeeId: string;

  beforeAll(async () => {
    billerC = await createBiller(t.db);
    headersC = await authHeaders(t.app, billerC);
    const { employee } = await createEmployee(t.db, {
      providerId: world.provider.id,
      payrollId: world.payroll.id,
      employerId: world.employer.id,
    });
    secondEmployeeId = employee.id;
    const second = employee;
    createdIds = [];
    for (let i = 0; i < 5; i++) {
      const response = await postMandate({ mandate_record: mandateRecord({ reference: `C-${i}` }, i >= 3 ? second : world.employee) }, headersC);
      expect(response.statusCode, response.body).toBe(201);
      createdIds.unshift(response.json().mandate.id);
    }
  });

  const list = (query: string, headers = headersC) => injectJson(t.app, { method: 'GET', url: `/mandates${query}`, headers });

  it('gets one mandate as it was created', async () => {
    const created = await postMandate({ mandate_record: mandateRecord() });
    const { mandate } = created.json();
    const response = await injectJson(t.app, { method: 'GET', url: `/mandates/${mandate.id}`, headers: headersA });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ mandate });
  });

  it('answers 404 for an unknown id and for a non-UUID id', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      expectProblem(await injectJson(t.app, { method: 'GET', url: `/mandates/${id}`, headers: headersA }), 404, 'not-found');
    }
  });

  it('pages forward with after and back with before, without duplicates or gaps', async () => {
    const forward: string[][] = [];
    let page: { mandates: Array<{ id: string }>; paging: { limit: number; after: string | null; before: string | null } };
    let after: string | null = null;
    do {
      const response = await list(`?limit=2${after ? `&after=${after}` : ''}`);
      expect(response.statusCode, response.body).toBe(200);
      page = response.json();
      expect(page.paging.limit).toBe(2);
      forward.push(page.mandates.map((m) => m.id));
      after = page.paging.after;
      if (forward.length > 5) throw new Error('paging does not end');
    } while (after);
    expect(forward.map((ids) => ids.length)).toEqual([2, 2, 1]);
    expect(forward.flat()).toEqual(createdIds);

    // Back from the last page: each `before` cursor yields the previous page; the first has none.
    const backward: string[][] = [];
    let before = page.paging.before;
    while (before) {
      const response = await list(`?limit=2&before=${before}`);
      expect(response.statusCode, response.body).toBe(200);
      page = response.json();
      backward.unshift(page.mandates.map((m) => m.id));
      before = page.paging.before;
      if (backward.length > 5) throw new Error('paging does not end');
    }
    expect(backward).toEqual(forward.slice(0, -1));
    expect(page.paging.after).not.toBeNull();
  });

  it('filters by employee, payroll and status', async () => {
    const byEmployee = (await list(`?employee_id=${secondEmployeeId}`)).json();
    expect(byEmployee.mandates.map((m: { id: string }) => m.id)).toEqual(createdIds.slice(0, 2));

    const byPayroll = (await list(`?payroll_id=${world.payroll.id}`)).json();
    expect(byPayroll.mandates).toHaveLength(5);
    expect((await list(`?payroll_id=${randomUUID()}`)).json().mandates).toEqual([]);

    const active = await createMandateRow(t.db, {
      billerClientId: billerC.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'active',
    });
    const byStatus = (await list('?status=active')).json();
    expect(byStatus.mandates.map((m: { id: string }) => m.id)).toEqual([active.id]);
    const pending = (await list('?status=pending_enablement')).json();
    expect(pending.mandates.map((m: { id: string }) => m.id)).toEqual(createdIds);
  });

  it('rejects an unknown status filter and a forged cursor', async () => {
    expectProblem(await list('?status=paused'), 400, 'validation-failed');
    expectProblem(await list('?after=bm9wZQ'), 400, 'invalid-cursor');
  });
});

describe('DELETE /mandates/:mandate_id', () => {
  async function mandateWithPayments(status: 'active' | 'expired' = 'active') {
    const mandate = await createMandateRow(t.db, {
      billerClientId: billerA.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status,
    });
    const pending1 = await createPaymentRequestRow(t.db, { mandate, status: 'pending', amount: 1000 });
    const pending2 = await createPaymentRequestRow(t.db, { mandate, status: 'pending', amount: 2000 });
    const instructed = await createPaymentRequestRow(t.db, { mandate, status: 'instructed', amount: 3000 });
    return { mandate, pending1, pending2, instructed };
  }

  const revoke = (id: string, headers = headersA) => injectJson(t.app, { method: 'DELETE', url: `/mandates/${id}`, headers });

  it('revokes the mandate and cancels only its pending payment requests, with one event per change', async () => {
    const { mandate, pending1, pending2, instructed } = await mandateWithPayments();
    const otherMandate = await createMandateRow(t.db, {
      billerClientId: billerA.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
    });
    const otherPending = await createPaymentRequestRow(t.db, { mandate: otherMandate, status: 'pending' });

    const response = await revoke(mandate.id);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.mandate).toMatchObject({ id: mandate.id, status: 'revoked', version: 2 });
    expect(body.mandate.revoked_at).not.toBeNull();
    expect([...body.cancelled_payment_ids].sort()).toEqual([pending1.id, pending2.id].sort());

    const payments = await t.db.selectFrom('payment_requests').selectAll().where('id', 'in', [pending1.id, pending2.id, instructed.id, otherPending.id]).execute();
    const byId = new Map(payments.map((p) => [p.id, p]));
    for (const id of [pending1.id, pending2.id]) {
      expect(byId.get(id)).toMatchObject({ status: 'cancelled', version: 2 });
      expect(byId.get(id)!.cancelled_at).not.toBeNull();
    }
    expect(byId.get(instructed.id)).toMatchObject({ status: 'instructed', version: 1, cancelled_at: null });
    expect(byId.get(otherPending.id)).toMatchObject({ status: 'pending', version: 1 });

    const stored = await t.db.selectFrom('mandates').selectAll().where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: 'revoked', version: 2 });

    const events = await t.db.selectFrom('events').selectAll().where('resource_id', 'in', [mandate.id, pending1.id, pending2.id, instructed.id, otherPending.id]).execute();
    expect(events.map((e) => e.type).sort()).toEqual(['mandate.updated', 'payment_request.updated', 'payment_request.updated']);
    const mandateEvent = events.find((e) => e.type === 'mandate.updated')!;
    expect((mandateEvent.payload as { data: unknown }).data).toEqual(body.mandate);
    for (const event of events.filter((e) => e.type === 'payment_request.updated')) {
      expect(event.biller_client_id).toBe(billerA.clientId);
      expect((event.payload as { data: Record<string, unknown> }).data).toMatchObject({
        id: event.resource_id,
        mandate_id: mandate.id,
        status: 'cancelled',
        version: 2,
      });
    }
  });

  it('answers a repeated revocation with the same body and writes nothing', async () => {
    const { mandate } = await mandateWithPayments();
    const first = await revoke(mandate.id);
    expect(first.statusCode).toBe(200);
    const eventsBefore = await eventsOf(billerA.clientId);
    const second = await revoke(mandate.id);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    expect(second.json().cancelled_payment_ids).toHaveLength(2);
    expect(await eventsOf(billerA.clientId)).toHaveLength(eventsBefore.length);
    const stored = await t.db.selectFrom('mandates').select('version').where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored.version).toBe(2);
  });

  it('refuses to revoke a mandate that already ended another way', async () => {
    const { mandate, pending1 } = await mandateWithPayments('expired');
    const eventsBefore = await eventsOf(billerA.clientId);
    expectProblem(await revoke(mandate.id), 409, 'mandate-not-revocable');
    const stored = await t.db.selectFrom('mandates').select(['status', 'version']).where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'expired', version: 1 });
    const payment = await t.db.selectFrom('payment_requests').select('status').where('id', '=', pending1.id).executeTakeFirstOrThrow();
    expect(payment.status).toBe('pending');
    expect(await eventsOf(billerA.clientId)).toHaveLength(eventsBefore.length);
  });

  it('answers 404 for an unknown or non-UUID id', async () => {
    expectProblem(await revoke(randomUUID()), 404, 'not-found');
    expectProblem(await revoke('123'), 404, 'not-found');
  });
});

describe('tenant isolation', () => {
  it("never shows or revokes another biller's mandate", async () => {
    const created = await postMandate({ mandate_record: mandateRecord({ reference: 'A-ONLY' }) });
    const { mandate } = created.json();

    expectProblem(await injectJson(t.app, { method: 'GET', url: `/mandates/${mandate.id}`, headers: headersB }), 404, 'not-found');
    expectProblem(await injectJson(t.app, { method: 'DELETE', url: `/mandates/${mandate.id}`, headers: headersB }), 404, 'not-found');
    const stored = await t.db.selectFrom('mandates').select('status').where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored.status).toBe('pending_enablement');

    const listed = await injectJson(t.app, { method: 'GET', url: `/mandates?payroll_id=${world.payroll.id}`, headers: headersB });
    expect(listed.statusCode).toBe(200);
    const ids = listed.json().mandates.map((m: { id: string }) => m.id);
    expect(ids).not.toContain(mandate.id);
    const ownRows = await t.db.selectFrom('mandates').select('id').where('biller_client_id', '=', billerB.clientId).execute();
    expect(ids.sort()).toEqual(ownRows.map((r) => r.id).sort());
  });
});

describe('authentication and scopes', () => {
  const endpoints = (id: string) => [
    { method: 'POST' as const, url: '/mandates', scope: 'mandates:write', body: { mandate_record: mandateRecord() } },
    { method: 'DELETE' as const, url: `/mandates/${id}`, scope: 'mandates:write' },
    { method: 'GET' as const, url: `/mandates/${id}`, scope: 'mandates:read' },
    { method: 'GET' as const, url: '/mandates', scope: 'mandates:read' },
  ];

  it('answers 401 without credentials on every endpoint', async () => {
    for (const endpoint of endpoints(randomUUID())) {
      const response = await injectJson(t.app, {
        method: endpoint.method,
        url: endpoint.url,
        headers: { 'idempotency-key': randomUUID() },
        ...(endpoint.body ? { body: endpoint.body } : {}),
      });
      expect(response.statusCode, `${endpoint.method} ${endpoint.url}`).toBe(401);
    }
  });

  it('answers 403 to a token without the needed scope on every endpoint', async () => {
    const { mandate } = (await postMandate({ mandate_record: mandateRecord() })).json();
    const readOnly = await authHeaders(t.app, billerA, 'mandates:read');
    const writeOnly = await authHeaders(t.app, billerA, 'mandates:write');
    for (const endpoint of endpoints(mandate.id)) {
      const headers = endpoint.scope === 'mandates:write' ? readOnly : writeOnly;
      const response = await injectJson(t.app, {
        method: endpoint.method,
        url: endpoint.url,
        headers: { ...headers, 'idempotency-key': randomUUID() },
        ...(endpoint.body ? { body: endpoint.body } : {}),
      });
      const problem = expectProblem(response, 403, 'insufficient-scope');
      expect((problem as Record<string, unknown>).required_scope).toBe(endpoint.scope);
    }
    const stored = await t.db.selectFrom('mandates').select('status').where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored.status).toBe('pending_enablement');
  });
});
