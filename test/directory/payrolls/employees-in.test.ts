import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { employeeEnvelopeSchema, employeeUpdatePayloadSchema } from '../../../src/directory/payrolls/employee-resource.ts';
import {
  createBiller,
  createEmployer,
  createEmploymentWorld,
  createMandateRow,
  createPaymentRequestRow,
  createPayroll,
  createProviderClient,
  futureMonthlyPayDates,
} from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;
let providerHeaders: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  world = await createEmploymentWorld(t.db);
  providerHeaders = await authHeaders(t.app, await createProviderClient(t.db, world.provider.id));
});
afterAll(async () => {
  await t.close();
});

let references = 0;
function record(overrides: Record<string, unknown> = {}) {
  const n = ++references;
  return {
    given_name: 'Priya',
    family_name: 'Shah',
    national_registration_number: `pq ${String(n).padStart(6, '0')} a`,
    date_of_birth: '1990-05-17',
    email_address: 'priya.shah@example.com',
    postal_code: 'LS1 4AP',
    payroll_reference: `REF-${n}`,
    start_date: '2023-09-01',
    employment_status: 'active',
    contract_type: 'full_time',
    annualised_salary: 4_200_000,
    ...overrides,
  };
}

function putEmployee(payrollId: string, employeeId: string, employee: Record<string, unknown>, headers = providerHeaders) {
  return injectJson(t.app, { method: 'PUT', url: `/payrolls/${payrollId}/employees/${employeeId}`, headers, body: { employee } });
}

const eventsOf = (resourceId: string, type?: string) => {
  let query = t.db.selectFrom('events').selectAll().where('resource_id', '=', resourceId);
  if (type) query = query.where('type', '=', type as never);
  return query.orderBy('sequence').execute();
};

describe('PUT /payrolls/:payroll_id/employees/:employee_id', () => {
  it('creates the employee and its employment (201), then replaces them (200)', async () => {
    const employeeId = crypto.randomUUID();
    const nrn = `QQ${String(Date.now()).slice(-6)}A`;

    const created = await putEmployee(world.payroll.id, employeeId, record({ national_registration_number: nrn.toLowerCase(), payroll_reference: 'P-100' }));

    expect(created.statusCode, created.body).toBe(201);
    const body = employeeEnvelopeSchema.parse(created.json());
    expect(body.employee).toMatchObject({
      id: employeeId,
      payroll_id: world.payroll.id,
      given_name: 'Priya',
      national_registration_number: nrn,
      payroll_reference: 'P-100',
      employment_status: 'active',
      annualised_salary: 4_200_000,
      currency: 'GBP',
    });
    const employee = await t.db.selectFrom('employees').selectAll().where('id', '=', employeeId).executeTakeFirstOrThrow();
    expect(employee.payroll_provider_id).toBe(world.provider.id);
    const employment = await t.db.selectFrom('employments').selectAll().where('employee_id', '=', employeeId).executeTakeFirstOrThrow();
    expect(employment).toMatchObject({ payroll_id: world.payroll.id, employer_id: world.employer.id, payroll_reference: 'P-100', start_date: '2023-09-01' });

    const updated = await putEmployee(
      world.payroll.id,
      employeeId,
      record({ national_registration_number: nrn, payroll_reference: 'P-100', family_name: 'Shah-Patel', annualised_salary: 4_500_000, email_address: undefined }),
    );

    expect(updated.statusCode).toBe(200);
    expect(updated.json().employee).toMatchObject({ family_name: 'Shah-Patel', annualised_salary: 4_500_000, email_address: null });
    const rows = await t.db.selectFrom('employments').select('annualised_salary').where('employee_id', '=', employeeId).execute();
    expect(rows).toEqual([{ annualised_salary: 4_500_000 }]);
  });

  it("answers 404 for another provider's payroll, an unknown payroll and a malformed id", async () => {
    const other = await createEmploymentWorld(t.db);
    const employeeId = crypto.randomUUID();

    expect((await putEmployee(other.payroll.id, employeeId, record())).statusCode).toBe(404);
    expect((await putEmployee(crypto.randomUUID(), employeeId, record())).statusCode).toBe(404);
    expect((await putEmployee('not-a-uuid', employeeId, record())).statusCode).toBe(404);
    expect(await t.db.selectFrom('employees').select('id').where('id', '=', employeeId).executeTakeFirst()).toBeUndefined();
  });

  it("answers 422 for unknown fields and for a currency other than the payroll's", async () => {
    const unknown = await putEmployee(world.payroll.id, crypto.randomUUID(), record({ nickname: 'Pri' }));
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().errors).toContainEqual({ pointer: '/employee/nickname', detail: 'is not a known field' });

    const fractional = await putEmployee(world.payroll.id, crypto.randomUUID(), record({ annualised_salary: 42000.5 }));
    expect(fractional.statusCode).toBe(422);

    const euro = await putEmployee(world.payroll.id, crypto.randomUUID(), record({ currency: 'EUR' }));
    expect(euro.statusCode).toBe(422);
    expect(euro.json().errors[0].pointer).toBe('/employee/currency');
  });

  it('answers 409 when the payroll reference belongs to someone else on the payroll', async () => {
    const response = await putEmployee(world.payroll.id, crypto.randomUUID(), record({ payroll_reference: world.employment.payroll_reference }));
    expect(response.statusCode).toBe(409);
    expect(response.json().type).toMatch(/payroll-reference-in-use$/);
  });

  it("replaces only its own payroll's record: another payroll's name and contact details stay, the person's identifiers are kept when left out, and a different birth date is a 409 while another payroll employs them", async () => {
    const employer = await createEmployer(t.db, world.provider.id);
    const second = await createPayroll(t.db, { providerId: world.provider.id, employerId: employer.id, payDates: futureMonthlyPayDates() });
    const employeeId = crypto.randomUUID();
    const first = record({ family_name: "O'Donnell", phone_number: '+447700900111' });
    expect((await putEmployee(world.payroll.id, employeeId, first)).statusCode).toBe(201);
    const employmentOn = (payrollId: string) =>
      t.db.selectFrom('employments').selectAll().where('employee_id', '=', employeeId).where('payroll_id', '=', payrollId).executeTakeFirstOrThrow();
    const onFirst = await employmentOn(world.payroll.id);

    const elsewhere = await putEmployee(second.id, employeeId, {
      ...record({ family_name: 'ODONNELL', email_address: undefined }),
      national_registration_number: undefined,
      date_of_birth: undefined,
    });
    expect(elsewhere.statusCode, elsewhere.body).toBe(201);
    expect(elsewhere.json().employee).toMatchObject({
      family_name: 'ODONNELL',
      email_address: null,
      national_registration_number: first.national_registration_number.replaceAll(' ', '').toUpperCase(),
      date_of_birth: '1990-05-17',
    });
    expect(await employmentOn(world.payroll.id)).toEqual(onFirst);
    expect(onFirst).toMatchObject({ family_name: "O'Donnell", email_address: 'priya.shah@example.com', phone_number: '+447700900111' });

    const conflict = await putEmployee(second.id, employeeId, {
      ...record({ family_name: 'ODONNELL' }),
      national_registration_number: undefined,
      date_of_birth: '1990-05-18',
    });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({
      type: expect.stringMatching(/employee-identity-conflict$/),
      errors: [{ pointer: '/employee/date_of_birth', detail: 'differs from the one on record for this employee' }],
    });
    expect((await t.db.selectFrom('employees').select('date_of_birth').where('id', '=', employeeId).executeTakeFirstOrThrow()).date_of_birth).toBe('1990-05-17');
  });

  it('is for payroll providers only', async () => {
    const biller = await createBiller(t.db);
    const response = await putEmployee(world.payroll.id, crypto.randomUUID(), record(), await authHeaders(t.app, biller));
    expect(response.statusCode).toBe(403);
  });
});

describe('employment status changes', () => {
  /** An employee put by the provider, with mandates of two billers and a third biller without any. */
  async function employeeWithMandates() {
    const employeeId = crypto.randomUUID();
    const first = record();
    expect((await putEmployee(world.payroll.id, employeeId, first)).statusCode).toBe(201);
    const [billerA, billerB, billerC] = [await createBiller(t.db), await createBiller(t.db), await createBiller(t.db)];
    const on = { employeeId, payrollId: world.payroll.id };
    const mandates = {
      aActive: await createMandateRow(t.db, { billerClientId: billerA.clientId, ...on, status: 'active' }),
      aSuspended: await createMandateRow(t.db, { billerClientId: billerA.clientId, ...on, status: 'suspended' }),
      aPending: await createMandateRow(t.db, { billerClientId: billerA.clientId, ...on, status: 'pending_enablement' }),
      aRevoked: await createMandateRow(t.db, { billerClientId: billerA.clientId, ...on, status: 'revoked' }),
      bActive: await createMandateRow(t.db, { billerClientId: billerB.clientId, ...on, status: 'active' }),
    };
    // Biller C holds a mandate, but on somebody else.
    const cMandate = await createMandateRow(t.db, { billerClientId: billerC.clientId, employeeId: world.employee.id, payrollId: world.payroll.id, status: 'active' });
    return { employeeId, record: first, billers: { a: billerA, b: billerB, c: billerC }, mandates, cMandate };
  }

  const statusOf = async (id: string) => await t.db.selectFrom('mandates').select(['status', 'status_reason', 'version']).where('id', '=', id).executeTakeFirstOrThrow();

  it('a leaver expires running mandates, fails waiting ones, cancels pending payments, and tells each biller once', async () => {
    const { employeeId, record: first, billers, mandates, cMandate } = await employeeWithMandates();
    const pendingA1 = await createPaymentRequestRow(t.db, { mandate: mandates.aActive });
    const pendingA2 = await createPaymentRequestRow(t.db, { mandate: mandates.aActive, amount: 1234 });
    const instructedA = await createPaymentRequestRow(t.db, { mandate: mandates.aActive, status: 'instructed' });
    const pendingB = await createPaymentRequestRow(t.db, { mandate: mandates.bActive });

    const response = await putEmployee(world.payroll.id, employeeId, { ...first, employment_status: 'leaver', end_date: '2026-01-31' });

    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().employee.employment_status).toBe('leaver');

    expect(await statusOf(mandates.aActive.id)).toEqual({ status: 'expired', status_reason: 'employment ended', version: 2 });
    expect(await statusOf(mandates.aSuspended.id)).toMatchObject({ status: 'expired', version: 2 });
    expect(await statusOf(mandates.aPending.id)).toMatchObject({ status: 'failed', status_reason: 'employment ended', version: 2 });
    expect(await statusOf(mandates.aRevoked.id)).toMatchObject({ status: 'revoked', version: 1 });
    expect(await statusOf(mandates.bActive.id)).toMatchObject({ status: 'expired', version: 2 });
    expect(await statusOf(cMandate.id)).toMatchObject({ status: 'active', version: 1 });

    const payments = await t.db
      .selectFrom('payment_requests')
      .select(['id', 'status', 'version', 'cancelled_at'])
      .where('id', 'in', [pendingA1.id, pendingA2.id, instructedA.id, pendingB.id])
      .execute();
    const byId = new Map(payments.map((p) => [p.id, p]));
    for (const cancelled of [pendingA1, pendingA2, pendingB]) {
      expect(byId.get(cancelled.id)).toMatchObject({ status: 'cancelled', version: 2 });
      expect(byId.get(cancelled.id)!.cancelled_at).not.toBeNull();
    }
    expect(byId.get(instructedA.id)).toMatchObject({ status: 'instructed', version: 1 });

    // employee.updated: exactly one per biller holding live mandates on this employment.
    const employeeEvents = await eventsOf(employeeId, 'employee.updated');
    expect(employeeEvents.map((e) => e.biller_client_id).sort()).toEqual([billers.a.clientId, billers.b.clientId].sort());
    for (const event of employeeEvents) {
      const data = employeeUpdatePayloadSchema.parse((event.payload as { data: unknown }).data);
      expect(data).toMatchObject({ id: employeeId, payroll_id: world.payroll.id, employment_status: 'leaver', end_date: '2026-01-31' });
      expect(data).not.toHaveProperty('national_registration_number');
    }
    expect(await t.db.selectFrom('events').select('id').where('biller_client_id', '=', billers.c.clientId).execute()).toEqual([]);

    for (const mandate of [mandates.aActive, mandates.aSuspended, mandates.aPending, mandates.bActive]) {
      const events = await eventsOf(mandate.id, 'mandate.updated');
      expect(events).toHaveLength(1);
      expect(events[0]!.biller_client_id).toBe(mandate.biller_client_id);
      expect((events[0]!.payload as { data: { status: string; version: number } }).data).toMatchObject({ version: 2 });
    }
    expect(await eventsOf(mandates.aRevoked.id)).toEqual([]);

    for (const payment of [pendingA1, pendingA2, pendingB]) {
      const events = await eventsOf(payment.id, 'payment_request.updated');
      expect(events).toHaveLength(1);
      expect(events[0]!.biller_client_id).toBe(payment.biller_client_id);
      expect((events[0]!.payload as { data: { status: string; version: number } }).data).toMatchObject({ status: 'cancelled', version: 2 });
    }
    expect(await eventsOf(instructedA.id)).toEqual([]);
  });

  it('unknown suspends active mandates; active again resumes them', async () => {
    const { employeeId, record: first, billers, mandates } = await employeeWithMandates();
    const pending = await createPaymentRequestRow(t.db, { mandate: mandates.aActive });

    const unknown = await putEmployee(world.payroll.id, employeeId, { ...first, employment_status: 'unknown' });
    expect(unknown.statusCode).toBe(200);

    expect(await statusOf(mandates.aActive.id)).toMatchObject({ status: 'suspended', status_reason: 'employee is not on the payroll this period', version: 2 });
    expect(await statusOf(mandates.bActive.id)).toMatchObject({ status: 'suspended', version: 2 });
    // Already suspended, and waiting for enablement: untouched.
    expect(await statusOf(mandates.aSuspended.id)).toMatchObject({ status: 'suspended', version: 1 });
    expect(await statusOf(mandates.aPending.id)).toMatchObject({ status: 'pending_enablement', version: 1 });
    // A suspension does not cancel payments.
    const stillPending = await t.db.selectFrom('payment_requests').select('status').where('id', '=', pending.id).executeTakeFirstOrThrow();
    expect(stillPending.status).toBe('pending');
    expect((await eventsOf(employeeId, 'employee.updated')).map((e) => e.biller_client_id).sort()).toEqual([billers.a.clientId, billers.b.clientId].sort());

    const back = await putEmployee(world.payroll.id, employeeId, { ...first, employment_status: 'active' });
    expect(back.statusCode).toBe(200);

    expect(await statusOf(mandates.aActive.id)).toMatchObject({ status: 'active', status_reason: null, version: 3 });
    expect(await statusOf(mandates.bActive.id)).toMatchObject({ status: 'active', version: 3 });
    // Suspended before the employee went missing: resumes too, since the employee is on the payroll again.
    expect(await statusOf(mandates.aSuspended.id)).toMatchObject({ status: 'active', version: 2 });
    const aActiveEvents = await eventsOf(mandates.aActive.id, 'mandate.updated');
    expect(aActiveEvents.map((e) => (e.payload as { data: { status: string } }).data.status)).toEqual(['suspended', 'active']);
    expect(await eventsOf(employeeId, 'employee.updated')).toHaveLength(4);
  });

  it('an unchanged PUT writes nothing and tells nobody', async () => {
    const { employeeId, record: first, mandates } = await employeeWithMandates();
    const before = await t.db.selectFrom('employments').select('updated_at').where('employee_id', '=', employeeId).executeTakeFirstOrThrow();

    const again = await putEmployee(world.payroll.id, employeeId, first);

    expect(again.statusCode).toBe(200);
    const after = await t.db.selectFrom('employments').select('updated_at').where('employee_id', '=', employeeId).executeTakeFirstOrThrow();
    expect(after.updated_at).toEqual(before.updated_at);
    expect(await eventsOf(employeeId)).toEqual([]);
    expect(await statusOf(mandates.aActive.id)).toMatchObject({ status: 'active', version: 1 });
  });

  it('a change billers can see, without a status change, is an employee.updated and moves no mandate', async () => {
    const { employeeId, record: first, billers, mandates } = await employeeWithMandates();

    await putEmployee(world.payroll.id, employeeId, { ...first, annualised_salary: 5_000_000 });

    const events = await eventsOf(employeeId, 'employee.updated');
    expect(events.map((e) => e.biller_client_id).sort()).toEqual([billers.a.clientId, billers.b.clientId].sort());
    expect((events[0]!.payload as { data: { annualised_salary: number } }).data.annualised_salary).toBe(5_000_000);
    expect(await eventsOf(mandates.aActive.id)).toEqual([]);
  });
});
