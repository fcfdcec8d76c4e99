import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdapterFactory, PayrollProviderAdapter } from '../../../src/directory/payroll-providers/adapter.ts';
import { enablementResponseSchema } from '../../../src/directory/payroll-providers/reference-schemas.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { buildWorld } from '../../support/world.ts';

const fakeAdapters = new Map<string, Partial<PayrollProviderAdapter>>();
const adapterFor: AdapterFactory = (provider) => (fakeAdapters.get(provider.id) as PayrollProviderAdapter | undefined) ?? null;

let t: TestApp;
let biller: Awaited<ReturnType<typeof createBiller>>;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ adapterFor });
  biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
});
afterAll(async () => {
  await t.close();
});

async function enable(body: { employee_id: string; payroll_id: string; mandate_id: string }, as = headers) {
  const response = await injectJson(t.app, { method: 'POST', url: '/deductions/enablement', headers: as, body: { enablement: body } });
  return { response, body: response.json() };
}

const requestOf = (mandate: { id: string; employee_id: string; payroll_id: string }) => ({
  employee_id: mandate.employee_id,
  payroll_id: mandate.payroll_id,
  mandate_id: mandate.id,
});

const mandateEvents = (mandateId: string) => t.db.selectFrom('events').selectAll().where('resource_id', '=', mandateId).where('type', '=', 'mandate.updated').execute();

describe('POST /deductions/enablement without a provider API', () => {
  it('enables a mandate of an active employee at an opted-in employer: active, version up, mandate.updated written', async () => {
    const world = await createEmploymentWorld(t.db);
    const mandate = await createMandateRow(t.db, {
      billerClientId: biller.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'pending_enablement',
    });

    const { response, body } = await enable(requestOf(mandate));

    expect(response.statusCode, response.body).toBe(200);
    expect(enablementResponseSchema.parse(body)).toEqual({ enablement: { ...requestOf(mandate), status: 'enabled', reason: null } });
    const stored = await t.db.selectFrom('mandates').selectAll().where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: 'active', status_reason: null, version: mandate.version + 1 });
    expect(stored.updated_at.getTime()).toBeGreaterThan(mandate.updated_at.getTime());

    const events = await mandateEvents(mandate.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.biller_client_id).toBe(biller.clientId);
    expect(events[0]!.resource_type).toBe('mandate');
    const payload = events[0]!.payload as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe('mandate.updated');
    expect(payload.data).toMatchObject({
      id: mandate.id,
      status: 'active',
      status_reason: null,
      employee_id: world.employee.id,
      payroll_id: world.payroll.id,
      version: mandate.version + 1,
      updated_at: stored.updated_at.toISOString(),
    });
  });

  it('rejects enablement for a leaver: the mandate fails with the reason', async () => {
    const world = await buildWorld(t.db, { employmentStatus: 'leaver' });
    const mandate = await createMandateRow(t.db, {
      billerClientId: biller.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'pending_enablement',
    });

    const { response, body } = await enable(requestOf(mandate));

    expect(response.statusCode).toBe(200);
    expect(body.enablement.status).toBe('rejected');
    expect(body.enablement.reason).toMatch(/left/);
    const stored = await t.db.selectFrom('mandates').selectAll().where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: 'failed', status_reason: body.enablement.reason, version: 2 });
    const events = await mandateEvents(mandate.id);
    expect((events[0]!.payload as { data: { status: string } }).data.status).toBe('failed');
  });

  it('rejects enablement when the employer opted out', async () => {
    const world = await buildWorld(t.db, { optIn: 'opted_out' });
    const mandate = await createMandateRow(t.db, {
      billerClientId: biller.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'pending_enablement',
    });
    const { body } = await enable(requestOf(mandate));
    expect(body.enablement).toMatchObject({ status: 'rejected', reason: expect.stringContaining('opted out') });
  });

  it('keeps the mandate waiting while the employer has not opted in yet', async () => {
    const world = await buildWorld(t.db, { optIn: 'pending' });
    const mandate = await createMandateRow(t.db, {
      billerClientId: biller.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'pending_enablement',
    });

    const { response, body } = await enable(requestOf(mandate));

    expect(response.statusCode).toBe(200);
    expect(body.enablement.status).toBe('pending');
    const stored = await t.db.selectFrom('mandates').selectAll().where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: 'pending_enablement', version: 1 });
    expect(await mandateEvents(mandate.id)).toHaveLength(0);
  });

  it("answers 404 for another biller's mandate and changes nothing", async () => {
    const world = await createEmploymentWorld(t.db);
    const other = await createBiller(t.db);
    const mandate = await createMandateRow(t.db, { billerClientId: other.clientId, employeeId: world.employee.id, payrollId: world.payroll.id, status: 'pending_enablement' });

    const { response } = await enable(requestOf(mandate));

    expect(response.statusCode).toBe(404);
    const stored = await t.db.selectFrom('mandates').select('status').where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored.status).toBe('pending_enablement');
    expect(await mandateEvents(mandate.id)).toHaveLength(0);
  });

  it('answers 409 for a mandate that is not pending enablement', async () => {
    const world = await createEmploymentWorld(t.db);
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id, status: 'active' });

    const { response, body } = await enable(requestOf(mandate));

    expect(response.statusCode).toBe(409);
    expect(body.type).toMatch(/mandate-not-pending-enablement$/);
    expect(body.mandate_status).toBe('active');
  });

  it("answers 422 when the employee or payroll is not the mandate's", async () => {
    const world = await createEmploymentWorld(t.db);
    const mandate = await createMandateRow(t.db, {
      billerClientId: biller.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'pending_enablement',
    });

    const { response, body } = await enable({ ...requestOf(mandate), payroll_id: crypto.randomUUID() });

    expect(response.statusCode).toBe(422);
    expect(body.errors).toEqual([{ pointer: '/enablement/payroll_id', detail: 'is not the payroll of the mandate' }]);
  });

  it('needs mandates:write', async () => {
    const readOnly = await createBiller(t.db, ['mandates:read']);
    const { response } = await enable(
      { employee_id: crypto.randomUUID(), payroll_id: crypto.randomUUID(), mandate_id: crypto.randomUUID() },
      await authHeaders(t.app, readOnly),
    );
    expect(response.statusCode).toBe(403);
  });
});

describe('POST /deductions/enablement with a provider API', () => {
  it("lets the provider decide: rejected fails the mandate with the provider's reason", async () => {
    const world = await createEmploymentWorld(t.db);
    const calls: unknown[] = [];
    fakeAdapters.set(world.provider.id, {
      enablement: async (request) => {
        calls.push(request);
        return { enablement: { ...request.enablement, status: 'rejected', reason: 'salary below the deduction threshold' } };
      },
    });
    try {
      const mandate = await createMandateRow(t.db, {
        billerClientId: biller.clientId,
        employeeId: world.employee.id,
        payrollId: world.payroll.id,
        status: 'pending_enablement',
      });
      const { response, body } = await enable(requestOf(mandate));

      expect(response.statusCode).toBe(200);
      expect(calls).toEqual([{ enablement: requestOf(mandate) }]);
      expect(body.enablement).toMatchObject({ status: 'rejected', reason: 'salary below the deduction threshold' });
      const stored = await t.db.selectFrom('mandates').selectAll().where('id', '=', mandate.id).executeTakeFirstOrThrow();
      expect(stored).toMatchObject({ status: 'failed', status_reason: 'salary below the deduction threshold' });
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
  });

  it('leaves the mandate untouched when the provider fails', async () => {
    const world = await createEmploymentWorld(t.db);
    const { ProviderError } = await import('../../../src/directory/payroll-providers/provider-errors.ts');
    fakeAdapters.set(world.provider.id, {
      enablement: async () => {
        throw new ProviderError({ failure: 'unavailable', providerId: world.provider.id, operation: 'enablement', detail: 'The payroll provider is unavailable' });
      },
    });
    try {
      const mandate = await createMandateRow(t.db, {
        billerClientId: biller.clientId,
        employeeId: world.employee.id,
        payrollId: world.payroll.id,
        status: 'pending_enablement',
      });
      const { response } = await enable(requestOf(mandate));

      expect(response.statusCode).toBe(502);
      const stored = await t.db.selectFrom('mandates').select(['status', 'version']).where('id', '=', mandate.id).executeTakeFirstOrThrow();
      expect(stored).toEqual({ status: 'pending_enablement', version: 1 });
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
  });
});
