import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knownProblem } from '../../../src/faces/http/plugins/errors.ts';
import { HttpProblem, PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { ConflictError } from '../../../src/platform/shared/domain-errors.ts';
import { createBiller, createEmploymentWorld, createMandateRow, createOperator, createPaymentRequestRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

describe('problem members', () => {
  it('no extension replaces type, title, status, detail, instance or errors', () => {
    const problem = new HttpProblem(409, 'payment-not-cancellable', 'It is collected', {
      errors: [{ pointer: '/x', detail: 'is wrong' }],
      extensions: {
        type: 'https://evil.example/',
        title: 'Fine',
        status: 'collected',
        detail: 'something else',
        instance: '/elsewhere',
        errors: [],
        payment_status: 'collected',
      },
    });
    expect(problem.toBody('/payments/1/cancel')).toEqual({
      type: `${PROBLEM_TYPE_BASE}payment-not-cancellable`,
      title: 'Payment not cancellable',
      status: 409,
      detail: 'It is collected',
      instance: '/payments/1/cancel',
      errors: [{ pointer: '/x', detail: 'is wrong' }],
      payment_status: 'collected',
    });
  });

  it('an extension cannot fill in a member the problem left out', () => {
    const body = knownProblem(new ConflictError('payment-not-cancellable', 'd', { members: { instance: '/forged', errors: [{ pointer: '/a', detail: 'b' }] } }))!.toBody();
    expect(body).not.toHaveProperty('instance');
    expect(body).not.toHaveProperty('errors');
  });
});

describe('409 answers name the resource state in a member of its own', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  let billerClientId: string;
  let world: Awaited<ReturnType<typeof createEmploymentWorld>>;
  let mandate: Awaited<ReturnType<typeof createMandateRow>>;

  beforeAll(async () => {
    t = await startTestApp();
    world = await createEmploymentWorld(t.db);
    const biller = await createBiller(t.db);
    billerClientId = biller.clientId;
    headers = await authHeaders(t.app, biller);
    mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id });
  });
  afterAll(async () => t?.close());

  it('cancelling a collected payment: status 409, payment_status collected', async () => {
    const payment = await createPaymentRequestRow(t.db, { mandate, status: 'collected' });
    const response = await injectJson(t.app, { method: 'POST', url: `/payments/${payment.id}/cancel`, headers: { ...headers, 'idempotency-key': crypto.randomUUID() } });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}payment-not-cancellable`,
      status: 409,
      payment_status: 'collected',
      target_pay_date: payment.target_pay_date,
    });
  });

  it('cancelling a completed schedule: status 409, schedule_status completed', async () => {
    const payDate = (await t.db.selectFrom('pay_dates').select('pay_date').where('payroll_id', '=', mandate.payroll_id).orderBy('pay_date', 'desc').executeTakeFirstOrThrow())
      .pay_date;
    const created = await injectJson(t.app, {
      method: 'POST',
      url: '/schedules',
      headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
      body: { schedule_record: { mandate_id: mandate.id, instalments: [{ amount: 700, due_date: payDate }] } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const scheduleId = created.json().schedule.id as string;
    await t.db.updateTable('schedules').set({ status: 'completed' }).where('id', '=', scheduleId).execute();
    const response = await injectJson(t.app, { method: 'POST', url: `/schedules/${scheduleId}/cancel`, headers: { ...headers, 'idempotency-key': crypto.randomUUID() } });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}schedule-not-cancellable`, status: 409, schedule_status: 'completed' });
  });

  it('revoking a cancelled mandate: status 409, mandate_status cancelled', async () => {
    const cancelled = await createMandateRow(t.db, { billerClientId, employeeId: world.employee.id, payrollId: world.payroll.id, status: 'cancelled' });
    const response = await injectJson(t.app, { method: 'DELETE', url: `/mandates/${cancelled.id}`, headers });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}mandate-not-revocable`, status: 409, mandate_status: 'cancelled' });
  });

  it('enabling an active mandate: status 409, mandate_status active', async () => {
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/enablement',
      headers,
      body: { enablement: { mandate_id: mandate.id, employee_id: mandate.employee_id, payroll_id: mandate.payroll_id } },
    });
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}mandate-not-pending-enablement`, status: 409, mandate_status: 'active' });
  });

  it('marking a paid payout paid again: status 409, payout_status paid', async () => {
    const payout = await t.db
      .insertInto('payouts')
      .values({
        biller_client_id: billerClientId,
        currency: 'GBP',
        amount: 4_200,
        status: 'paid',
        paid_at: new Date(),
        payout_date: '2026-12-01',
        reference: 'PO-409-TEST',
        account_number: '31926819',
        sort_code: '60-16-13',
        account_holder_name: 'Acme Lending Ltd',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const operatorHeaders = await authHeaders(t.app, await createOperator(t.db));
    for (const outcome of ['paid', 'failed'] as const) {
      const response = await injectJson(t.app, {
        method: 'POST',
        url: `/payouts/${payout.id}/${outcome}`,
        headers: operatorHeaders,
        ...(outcome === 'failed' ? { body: { reason: 'returned' } } : {}),
      });
      expect(response.statusCode, response.body).toBe(409);
      expect(response.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}payout-not-pending`, status: 409, payout_status: 'paid' });
    }
  });
});
