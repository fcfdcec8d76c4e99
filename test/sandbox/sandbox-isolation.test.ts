import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultScopesByRole } from '../../src/auth/scopes.ts';
import { hasPayDatesDueToFreeze, insertRunWithDuePayDates, listRunPayDates } from '../../src/nightly/nightly-run-repository.ts';
import { cliActor } from '../../src/audit/audit-service.ts';
import { createPaymentFiles } from '../../src/payouts/payment-file-service.ts';
import { runPayouts } from '../../src/payouts/payout-service.ts';
import { reconciliationSummary } from '../../src/reports/reconciliation-report.ts';
import type { SandboxDescription } from '../../src/sandbox/sandbox-setup-service.ts';
import { createBiller, createCollectionAccount, createOperator } from '../support/factories.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { buildWorld, type World } from '../support/world.ts';
import { callerOf, makeSandbox, mandateBody, sandboxCredentials, type Call } from './sandbox-api.ts';

// Sandbox data never mixes with live data, in either direction: an id of the other mode answers
// exactly as an unknown id does, and the nightly run, the payout run, the bank file and operators'
// reports leave sandbox data out.

let t: TestApp;
let world: World;
let sandbox: SandboxDescription;
let live: Call;
let sandboxed: Call;
let operator: Call;

type Person = { national_registration_number: string | null; given_name: string; family_name: string; date_of_birth: string | null };
/** The full check takes the given name too; the light one does not. */
const checkOf = (person: Person, kind: string) => ({
  availability_check: {
    national_registration_number: person.national_registration_number,
    ...(kind === 'full' ? { given_name: person.given_name } : {}),
    family_name: person.family_name,
    date_of_birth: person.date_of_birth,
  },
});

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  world = await buildWorld(t.db, { billers: 1, employees: 1 });
  sandbox = await makeSandbox(t.db, t.config, world.biller.clientId);
  live = await callerOf(t.app, world.biller);
  sandboxed = await callerOf(t.app, sandboxCredentials(sandbox));
  operator = await callerOf(t.app, await createOperator(t.db));
});
afterAll(async () => t?.close());

const confirmedPerson = () => sandbox.example_employees.find((p) => p.availability_status === 'confirmed')!;
const livePerson = () => ({ ...world.employee, employee_id: world.employee.id, payroll_id: world.payroll.id });

describe('the directory a client sees', () => {
  it('a live biller does not find sandbox people; a sandbox biller does', async () => {
    const person = confirmedPerson();
    for (const kind of ['full', 'light']) {
      expect((await live('POST', `/deductions/availability/${kind}`, checkOf(person, kind))).json().availability_check.availability_status).toBe('not_found');
      expect((await sandboxed('POST', `/deductions/availability/${kind}`, checkOf(person, kind))).json().availability_check.availability_status).toBe('confirmed');
    }
  });

  it('a sandbox biller does not find live people; the live biller does', async () => {
    for (const kind of ['full', 'light']) {
      expect((await sandboxed('POST', `/deductions/availability/${kind}`, checkOf(world.employee, kind))).json().availability_check.availability_status).toBe('not_found');
      expect((await live('POST', `/deductions/availability/${kind}`, checkOf(world.employee, kind))).json().availability_check.availability_status).toBe('confirmed');
    }
  });

  it('a mandate on a payroll of the other mode is refused as on an unknown payroll (422 naming payroll_id)', async () => {
    const onSandbox = await live('POST', '/mandates', mandateBody(confirmedPerson(), 'CROSS-1'));
    const onLive = await sandboxed('POST', '/mandates', mandateBody(livePerson(), 'CROSS-2'));
    const unknown = await live('POST', '/mandates', mandateBody({ ...livePerson(), payroll_id: randomUUID() }, 'CROSS-3'));
    for (const response of [onSandbox, onLive, unknown]) {
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({ errors: [{ pointer: '/mandate_record/payroll_id', detail: 'is not a known payroll' }] });
    }
    expect((await sandboxed('POST', '/mandates', mandateBody(confirmedPerson(), 'OWN'))).statusCode).toBe(201);
  });

  it('payroll information of the other mode is 404, like an unknown payroll', async () => {
    const sandboxPayroll = confirmedPerson().payroll_id;
    expect((await live('GET', `/payrolls/${sandboxPayroll}`)).statusCode).toBe(404);
    expect((await sandboxed('GET', `/payrolls/${world.payroll.id}`)).statusCode).toBe(404);
    expect((await sandboxed('GET', `/payrolls/${sandboxPayroll}`)).statusCode).toBe(200);
    expect((await live('GET', `/payrolls/${world.payroll.id}`)).statusCode).toBe(200);
  });
});

describe('simulation operations', () => {
  it('refuse live clients: 403 without the scope; given it anyway, they find no sandbox (404)', async () => {
    const payrollId = confirmedPerson().payroll_id;
    const withScope = await callerOf(t.app, await createBiller(t.db, [...defaultScopesByRole.biller, 'sandbox:simulate']));
    for (const url of [`/sandbox/payrolls/${payrollId}/pay-dates/next/lock`, '/sandbox/payouts']) {
      const refused = await live('POST', url);
      expect(refused.statusCode, url).toBe(403);
      expect(refused.json().type).toContain('insufficient-scope');
      expect((await withScope('POST', url)).statusCode, url).toBe(404);
    }
    expect(await t.db.selectFrom('deduction_snapshots').select('id').where('payroll_id', '=', payrollId).execute()).toEqual([]);
  });

  it('see only payrolls of the caller’s own sandbox: a live payroll, another sandbox’s and a made-up id are all 404', async () => {
    const other = await makeSandbox(t.db, t.config, (await createBiller(t.db)).clientId);
    for (const payrollId of [world.payroll.id, other.employers[0]!.payrolls[0]!.id, randomUUID(), 'not-a-uuid']) {
      const response = await sandboxed('POST', `/sandbox/payrolls/${payrollId}/pay-dates/next/lock`);
      expect(response.statusCode, payrollId).toBe(404);
    }
    expect((await sandboxed('POST', `/sandbox/payrolls/${confirmedPerson().payroll_id}/pay-dates/2001-01-01/lock`)).statusCode).toBe(404);
  });
});

describe('the service’s own runs leave sandbox data out', () => {
  let payDate: string;
  let sandboxPayrollId: string;

  beforeAll(async () => {
    // A collected sandbox payment, not yet paid out.
    const person = sandbox.example_employees.filter((p) => p.availability_status === 'confirmed')[1]!;
    const { mandate } = (await sandboxed('POST', '/mandates', mandateBody(person, 'RUNS'))).json();
    await sandboxed('POST', '/deductions/enablement', { enablement: { employee_id: person.employee_id, payroll_id: person.payroll_id, mandate_id: mandate.id } });
    await sandboxed('POST', '/payments', { payment_record: { mandate_id: mandate.id, amount: 4_200, currency: 'GBP', due_date: null, allow_post_due_date_deduction: true } });
    const { lock } = (await sandboxed('POST', `/sandbox/payrolls/${person.payroll_id}/pay-dates/next/lock`)).json();
    expect((await sandboxed('POST', `/sandbox/payrolls/${person.payroll_id}/pay-dates/${lock.pay_date}/confirmation`)).statusCode).toBe(200);
    payDate = lock.pay_date;
    sandboxPayrollId = person.payroll_id;
  });

  it('the nightly run takes due live pay dates and never a sandbox one', async () => {
    const runDate = '2099-12-31';
    const run = await t.db.transaction().execute((trx) => insertRunWithDuePayDates(trx, { id: randomUUID(), runDate, trigger: 'manual', triggeredBy: 'test' }));
    const due = new Set((await listRunPayDates(t.db, run.id)).map((row) => row.payroll_id));
    expect(due.has(world.payroll.id)).toBe(true);
    const sandboxPayrolls = sandbox.employers.flatMap((e) => e.payrolls.map((p) => p.id));
    expect(sandboxPayrolls.filter((id) => due.has(id))).toEqual([]);
  });

  it('the watchdog counts a date with only sandbox pay dates due as having nothing to freeze', async () => {
    // Every live pay date locked by the run above's date (far ahead), the sandbox's still open.
    const runDate = '2099-12-31';
    await t.db.updateTable('pay_dates').set({ locked_at: new Date() }).where('payroll_id', '=', world.payroll.id).execute();
    const sandboxPayrolls = sandbox.employers.flatMap((e) => e.payrolls.map((p) => p.id));
    const openSandbox = await t.db.selectFrom('pay_dates').select('payroll_id').where('payroll_id', 'in', sandboxPayrolls).where('locked_at', 'is', null).execute();
    expect(openSandbox.length).toBeGreaterThan(0);
    expect(await hasPayDatesDueToFreeze(t.db, runDate)).toBe(false);
    await t.db.updateTable('pay_dates').set({ locked_at: null }).where('payroll_id', '=', world.payroll.id).execute();
    expect(await hasPayDatesDueToFreeze(t.db, runDate)).toBe(true);
  });

  it('the daily payout run pays live billers only; the bank file never carries a sandbox payout', async () => {
    const daily = await runPayouts(t.db, { funding: 'deducted', today: '2099-12-31', settlementDelayWorkingDays: 1, holidays: new Set() });
    expect(daily.groups.map((g) => g.billerClientId)).not.toContain(sandbox.biller.client_id);

    const simulated = (await sandboxed('POST', '/sandbox/payouts')).json();
    expect(simulated.payouts).toEqual([expect.objectContaining({ status: 'paid', amount: 4_200 })]);
    expect(await createPaymentFiles(t.db, simulated.payout_date, { actor: cliActor('finance') })).toEqual([]);
    const filed = await t.db.selectFrom('payment_file_payouts').select('payout_id').where('payout_id', '=', simulated.payouts[0].id).execute();
    expect(filed).toEqual([]);
  });

  it('operators’ reconciliation report and summary leave sandbox payrolls out; the sandbox biller’s own report has its rows', async () => {
    const operatorCsv = await operator('GET', `/reports/reconciliation?pay_date=${payDate}`);
    const billerCsv = await sandboxed('GET', `/reports/reconciliation?pay_date=${payDate}`);
    expect(operatorCsv.statusCode).toBe(200);
    const rows = (response: { body: string }) => response.body.trim().split('\n').length - 1;
    expect(rows(operatorCsv)).toBe(0);
    expect(rows(billerCsv)).toBe(1);
    expect((await reconciliationSummary(t.db, { payDate })).map((row) => row.payroll_id)).not.toContain(sandboxPayrollId);
  });
});
