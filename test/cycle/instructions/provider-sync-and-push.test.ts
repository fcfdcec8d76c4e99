import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncPayrollCalendars } from '../../../src/directory/calendars/calendar-sync-service.ts';
import { listPayDates } from '../../../src/directory/calendars/calendar-repository.ts';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { pushInstructionsToProvider } from '../../../src/cycle/instructions/provider-push-service.ts';
import { insertPayrollProvider } from '../../../src/faces/cli/demo/demo-repository.ts';
import { httpAdapterFactory } from '../../../src/directory/payroll-providers/http-adapter.ts';
import { generateSandboxDirectory } from '../../../src/faces/sandbox/sandbox-directory.ts';
import { startSandboxProvider, type RunningSandboxProvider } from '../../../src/faces/http/sandbox-server.ts';
import { createBiller, createCollectionAccount, createMandateRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let sandbox: RunningSandboxProvider;
let providerId: string;
const adapterFor = httpAdapterFactory({ timeoutMs: 3_000, backoffBaseMs: 10 });

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  const directory = generateSandboxDirectory({ seed: 'sync-test', employers: 2, payrollsPerEmployer: 1, employeesPerPayroll: 4, today: '2026-11-02' });
  sandbox = await startSandboxProvider({ directory, clientId: 'svc', clientSecret: 'secret-of-svc' });
  const provider = await insertPayrollProvider(t.db, {
    name: 'Sandbox',
    api_base_url: sandbox.url,
    api_token_url: sandbox.tokenUrl,
    api_client_id: 'svc',
    api_client_secret: 'secret-of-svc',
    lead_time_working_days: 2,
  });
  providerId = provider.id;
  // The directory as availability checks would have stored it: employers, payrolls, employments.
  for (const employer of directory.employers) {
    const row = await t.db
      .insertInto('employers')
      .values({ payroll_provider_id: providerId, external_id: employer.id, name: employer.name, salary_deduction_opt_in_status: employer.salary_deduction_opt_in_status })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const payroll of directory.payrolls.filter((p) => p.employer_id === employer.id)) {
      await t.db
        .insertInto('payrolls')
        .values({
          id: payroll.id,
          employer_id: row.id,
          payroll_provider_id: providerId,
          external_id: payroll.id,
          name: payroll.name,
          payment_run_frequency: payroll.payment_run_frequency,
        })
        .execute();
    }
  }
  for (const employee of directory.employees) {
    await t.db
      .insertInto('employees')
      .values({ id: employee.id, payroll_provider_id: providerId, given_name: employee.given_name, family_name: employee.family_name })
      .execute();
    for (const job of employee.employments) {
      const employer = await t.db.selectFrom('employers').select('id').where('external_id', '=', job.employer_id).executeTakeFirstOrThrow();
      await t.db
        .insertInto('employments')
        .values({
          employee_id: employee.id,
          employer_id: employer.id,
          payroll_id: job.payroll_id,
          payroll_reference: job.payroll_reference,
          employment_status: job.employment_status,
        })
        .execute();
    }
  }
});
afterAll(async () => {
  await sandbox.close();
  await t.close();
});

describe('nightly calendar sync', () => {
  const today = serviceToday(new Date(), 'Europe/London');

  it('stores every payroll calendar the provider publishes, with lock dates from the lead time, and gives each payroll its go-live date', async () => {
    const result = await syncPayrollCalendars(t.db, adapterFor, today);
    expect(result).toEqual({ synced: sandbox.directory.payrolls.length, failed: [] });
    for (const payroll of sandbox.directory.payrolls) {
      const stored = await listPayDates(t.db, payroll.id);
      expect(stored.map((d) => [d.pay_date, d.payroll_cutoff_date, d.pay_period])).toEqual(payroll.pay_dates.map((d) => [d.pay_date, d.payroll_cutoff_date, d.pay_period]));
      for (const d of stored) expect(d.lock_date < d.payroll_cutoff_date).toBe(true);
      // Its first pay date whose lock date is today or later: the ones behind it are never collected.
      const firstAhead = stored.find((d) => d.lock_date >= today)!.pay_date;
      const { go_live_date } = await t.db.selectFrom('payrolls').select('go_live_date').where('id', '=', payroll.id).executeTakeFirstOrThrow();
      expect(go_live_date).toBe(firstAhead);
    }
    const synced = await t.db.selectFrom('payrolls').select('calendar_synced_at').execute();
    expect(synced.every((p) => p.calendar_synced_at instanceof Date)).toBe(true);
  });

  it('reports a provider that is down and keeps the stored calendar', async () => {
    const before = await listPayDates(t.db, sandbox.directory.payrolls[0]!.id);
    const broken = httpAdapterFactory({
      timeoutMs: 500,
      retries: 0,
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
    });
    const result = await syncPayrollCalendars(t.db, broken, today);
    expect(result.synced).toBe(0);
    expect(result.failed).toHaveLength(sandbox.directory.payrolls.length);
    expect(await listPayDates(t.db, sandbox.directory.payrolls[0]!.id)).toEqual(before);
  });
});

describe('employee pushes of instruction items', () => {
  /** The provider's first pay date may lock before today: the payroll goes live from it, as an operator would set. */
  async function goLiveFrom(payrollId: string, payDate: string) {
    await t.db.updateTable('payrolls').set({ go_live_date: payDate }).where('id', '=', payrollId).execute();
  }

  it('sends each changed item once as a versioned push and records it', async () => {
    const payroll = sandbox.directory.payrolls[0]!;
    const payDate = payroll.pay_dates[0]!;
    const staff = sandbox.directory.employees.filter((e) => e.employments.some((j) => j.payroll_id === payroll.id && j.employment_status === 'active')).slice(0, 2);
    const biller = await createBiller(t.db);
    for (const [i, person] of staff.entries()) {
      const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: person.id, payrollId: payroll.id });
      await t.db
        .insertInto('payment_requests')
        .values({
          biller_client_id: biller.clientId,
          mandate_id: mandate.id,
          payroll_id: payroll.id,
          employee_id: person.id,
          currency: 'GBP',
          amount: 1_050 + i,
          target_pay_date: payDate.pay_date,
        })
        .execute();
    }
    await goLiveFrom(payroll.id, payDate.pay_date);
    await lockPayDate(t.db, payroll.id, payDate.pay_date);

    const first = await pushInstructionsToProvider(t.db, adapterFor, payroll.id, payDate.pay_date);
    expect(first).toEqual({ sent: 2, failed: 0 });
    for (const [i, person] of staff.entries()) {
      const received = sandbox.provider.currentPush(payroll.id, payDate.pay_period, person.id);
      expect(received?.record).toMatchObject({ version: 1, salary_deduction: { employee_id: person.id, deduction_amount: (1_050 + i) / 100, currency: 'GBP' } });
      // The sandbox takes a push that carries the employee's part of the pay date's payment.
      expect(received?.record.requested_payments).toEqual([{ payment_information: expect.objectContaining({ payment_amount: (1_050 + i) / 100 }) }]);
    }
    const rows = await t.db.selectFrom('employee_deduction_pushes').select(['status', 'attempts', 'sent_at']).where('payroll_id', '=', payroll.id).execute();
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
    ]);
    // A repeated job finds nothing pending and sends nothing.
    const pushesBefore = sandbox.pushes.length;
    expect(await pushInstructionsToProvider(t.db, adapterFor, payroll.id, payDate.pay_date)).toEqual({ sent: 0, failed: 0 });
    expect(sandbox.pushes.length).toBe(pushesBefore);
  });

  it('records a failed attempt and throws so the queue retries, then succeeds', async () => {
    const payroll = sandbox.directory.payrolls[1]!;
    const payDate = payroll.pay_dates[0]!;
    const person = sandbox.directory.employees.find((e) => e.employments.some((j) => j.payroll_id === payroll.id && j.employment_status === 'active'))!;
    const biller = await createBiller(t.db);
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: person.id, payrollId: payroll.id });
    await t.db
      .insertInto('payment_requests')
      .values({
        biller_client_id: biller.clientId,
        mandate_id: mandate.id,
        payroll_id: payroll.id,
        employee_id: person.id,
        currency: 'GBP',
        amount: 777,
        target_pay_date: payDate.pay_date,
      })
      .execute();
    await goLiveFrom(payroll.id, payDate.pay_date);
    await lockPayDate(t.db, payroll.id, payDate.pay_date);

    const down = httpAdapterFactory({ timeoutMs: 300, retries: 0, fetch: async () => new Response('busy', { status: 503 }) });
    await expect(pushInstructionsToProvider(t.db, down, payroll.id, payDate.pay_date)).rejects.toThrow(/will be retried/);
    const failed = await t.db
      .selectFrom('employee_deduction_pushes')
      .select(['status', 'attempts', 'last_error'])
      .where('payroll_id', '=', payroll.id)
      .executeTakeFirstOrThrow();
    expect(failed).toMatchObject({ status: 'pending', attempts: 1 });
    expect(failed.last_error).toBeTruthy();

    expect(await pushInstructionsToProvider(t.db, adapterFor, payroll.id, payDate.pay_date)).toEqual({ sent: 1, failed: 0 });
    const sent = await t.db.selectFrom('employee_deduction_pushes').select(['status', 'attempts']).where('payroll_id', '=', payroll.id).executeTakeFirstOrThrow();
    expect(sent).toEqual({ status: 'sent', attempts: 2 });
  });
});
