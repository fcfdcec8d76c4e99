import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultScopesByRole } from '../../../src/directory/auth/scopes.ts';
import { hasPayDatesDueToLock, insertRunWithDuePayDates, listRunPayDates } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { createPaymentFiles } from '../../../src/settlement/payouts/payment-file-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { reconciliationSummary } from '../../../src/settlement/reports/reconciliation-report.ts';
import type { SandboxDescription } from '../../../src/faces/sandbox/sandbox-setup-service.ts';
import { createBiller, createCollectionAccount, createOperator } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { buildWorld, type World } from '../../support/world.ts';
import { callerOf, makeSandbox, mandateBody, sandboxCredentials, type Call } from './sandbox-api.ts';

// Sandbox data never mixes with live data, in either direction, nor one sandbox's with another's: an
// id of the other mode or of another sandbox answers exactly as an unknown id does, and the nightly
// run, the payout run, the bank file and operators' reports leave sandbox data out.

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

describe('one sandbox never reaches another: each is its own world', () => {
  // Biller B has a sandbox of its own, and biller C one drawn from A's seed: the same people (numbers,
  // names, dates of birth) at another simulated provider. A sandbox biller reaches its own sandbox's
  // provider only, exactly as a live biller reaches no sandbox: another sandbox's payrolls and people
  // answer as made-up ones do.
  let other: SandboxDescription;
  let otherCall: Call;
  let twin: SandboxDescription;
  let twinCall: Call;
  const othersPerson = () => other.example_employees.find((p) => p.availability_status === 'confirmed')!;

  beforeAll(async () => {
    other = await makeSandbox(t.db, t.config, (await createBiller(t.db)).clientId);
    otherCall = await callerOf(t.app, sandboxCredentials(other));
    twin = await makeSandbox(t.db, t.config, (await createBiller(t.db)).clientId, { seed: world.biller.clientId });
    twinCall = await callerOf(t.app, sandboxCredentials(twin));
  });

  it("another sandbox's people are not_found (full and light), while that sandbox's biller finds them", async () => {
    const person = othersPerson();
    for (const kind of ['full', 'light']) {
      const seen = (await sandboxed('POST', `/deductions/availability/${kind}`, checkOf(person, kind))).json();
      expect(seen.availability_check, kind).toMatchObject({ availability_status: 'not_found' });
      if (kind === 'light') expect(seen.availability_check.employment_count).toBe(0);
      expect((await otherCall('POST', `/deductions/availability/${kind}`, checkOf(person, kind))).json().availability_check.availability_status).toBe('confirmed');
    }
  });

  it('the same person in two sandboxes (one seed): each biller finds its own employee and employments only', async () => {
    const mine = confirmedPerson();
    const theirs = await t.db
      .selectFrom('employees')
      .select('id as employee_id')
      .where('payroll_provider_id', '=', twin.payroll_provider.id)
      .where('national_registration_number', '=', mine.national_registration_number)
      .where('family_name', '=', mine.family_name)
      .executeTakeFirstOrThrow();
    expect(theirs.employee_id).not.toBe(mine.employee_id);
    const ownPayrolls = (s: SandboxDescription) => new Set(s.employers.flatMap((e) => e.payrolls.map((p) => p.id)));
    for (const [call, own, employeeId] of [
      [sandboxed, sandbox, mine.employee_id],
      [twinCall, twin, theirs.employee_id],
    ] as const) {
      const { availability_check: check } = (await call('POST', '/deductions/availability/full', checkOf(mine, 'full'))).json();
      expect(check.availability_status).toBe('confirmed');
      const employments = check.employments.map((e: any) => e.employment);
      expect(employments.map((e: any) => e.employee_id)).toEqual(employments.map(() => employeeId));
      const payrolls: string[] = employments.flatMap((e: any) => e.payrolls.map((p: any) => p.payroll.id));
      expect(payrolls.filter((id) => !ownPayrolls(own).has(id))).toEqual([]);
      // The light check counts this sandbox's employments alone.
      const light = (await call('POST', '/deductions/availability/light', checkOf(mine, 'light'))).json();
      expect(light.availability_check.employment_count).toBe(employments.length);
    }
  });

  it("another sandbox's payroll information is 404, as an unknown payroll's; its own is 200", async () => {
    const theirs = othersPerson().payroll_id;
    expect((await sandboxed('GET', `/payrolls/${theirs}`)).statusCode).toBe(404);
    expect((await sandboxed('GET', `/payrolls/${randomUUID()}`)).statusCode).toBe(404);
    expect((await otherCall('GET', `/payrolls/${theirs}`)).statusCode).toBe(200);
    expect((await otherCall('GET', `/payrolls/${confirmedPerson().payroll_id}`)).statusCode).toBe(404);
  });

  it("a mandate on another sandbox's employee and payroll is refused as on an unknown payroll (422), and nothing is written", async () => {
    const refused = await sandboxed('POST', '/mandates', mandateBody(othersPerson(), 'OTHER-SANDBOX'));
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({ errors: [{ pointer: '/mandate_record/payroll_id', detail: 'is not a known payroll' }] });
    // Nor with its own payroll and the other sandbox's employee: that employee is on none of its payrolls.
    const mixed = await sandboxed('POST', '/mandates', mandateBody({ ...othersPerson(), payroll_id: confirmedPerson().payroll_id }, 'MIXED'));
    expect(mixed.statusCode).toBe(422);
    const written = await t.db.selectFrom('mandates').select('id').where('employee_id', '=', othersPerson().employee_id).execute();
    expect(written).toEqual([]);
    expect((await otherCall('POST', '/mandates', mandateBody(othersPerson(), 'THEIR-OWN'))).statusCode).toBe(201);
  });

  it("the simulation operations on another sandbox's pay dates are 404 and change nothing; its own biller's work", async () => {
    // B takes a payment on its payroll and locks the pay date: everything A could pull or confirm there.
    const person = other.example_employees.filter((p) => p.availability_status === 'confirmed')[1]!;
    const { mandate } = (await otherCall('POST', '/mandates', mandateBody(person, 'B-PAYS'))).json();
    await otherCall('POST', '/deductions/enablement', { enablement: { employee_id: person.employee_id, payroll_id: person.payroll_id, mandate_id: mandate.id } });
    const { payment } = (
      await otherCall('POST', '/payments', { payment_record: { mandate_id: mandate.id, amount: 1_500, currency: 'GBP', due_date: null, allow_post_due_date_deduction: true } })
    ).json();
    const lockedByB = await otherCall('POST', `/sandbox/payrolls/${person.payroll_id}/pay-dates/next/lock`);
    expect(lockedByB.statusCode).toBe(200);
    const payDate: string = lockedByB.json().lock.pay_date;

    const base = `/sandbox/payrolls/${person.payroll_id}/pay-dates`;
    for (const [url, body] of [
      [`${base}/next/lock`, undefined],
      [`${base}/${payDate}/lock`, undefined],
      [`${base}/${payDate}/provider-pull`, undefined],
      [`${base}/${payDate}/confirmation`, { default_outcome: 'leaver' }],
    ] as const) {
      const response = await sandboxed('POST', url, body);
      expect(response.statusCode, url).toBe(404);
      expect(JSON.stringify(response.json()), url).not.toContain(payment.id);
    }
    expect(await t.db.selectFrom('confirmations').select('id').where('payroll_id', '=', person.payroll_id).execute()).toEqual([]);
    expect((await otherCall('GET', `/payments/${payment.id}`)).json().payment.status).toBe('instructed');
    // A's payout run pays A's money only: B's collected payment is not A's to pay out.
    expect((await otherCall('POST', `${base}/${payDate}/confirmation`, { default_outcome: 'full' })).statusCode).toBe(200);
    const aPayout = await sandboxed('POST', '/sandbox/payouts');
    expect(JSON.stringify(aPayout.json())).not.toContain(payment.id);
    expect((await otherCall('GET', `/payments/${payment.id}`)).json().payment.status).toBe('collected');
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

  it('the watchdog counts a date with only sandbox pay dates due as having nothing to lock', async () => {
    // Every live pay date locked by the run above's date (far ahead), the sandbox's still open.
    const runDate = '2099-12-31';
    await t.db.updateTable('pay_dates').set({ locked_at: new Date() }).where('payroll_id', '=', world.payroll.id).execute();
    const sandboxPayrolls = sandbox.employers.flatMap((e) => e.payrolls.map((p) => p.id));
    const openSandbox = await t.db.selectFrom('pay_dates').select('payroll_id').where('payroll_id', 'in', sandboxPayrolls).where('locked_at', 'is', null).execute();
    expect(openSandbox.length).toBeGreaterThan(0);
    expect(await hasPayDatesDueToLock(t.db, runDate)).toBe(false);
    await t.db.updateTable('pay_dates').set({ locked_at: null }).where('payroll_id', '=', world.payroll.id).execute();
    expect(await hasPayDatesDueToLock(t.db, runDate)).toBe(true);
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
