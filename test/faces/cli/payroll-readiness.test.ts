import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createCollectionAccount, createEmployer, createPayroll, createPayrollProvider, futureMonthlyPayDates } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// `deductions payrolls readiness`: what a payroll still needs before the nightly run can lock it,
// read from the database as an operator setting up an installation would meet it.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const readiness = (args: string[] = []) => runDeductions(['payrolls', 'readiness', ...args], cliEnvOf(t.config));

describe('deductions payrolls readiness', () => {
  it('lists what is missing, exits 1 until nothing is, and notices lock dates already past', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id, { optIn: 'pending', name: 'Acme Widgets Ltd' });
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, currency: 'GBP' });

    const before = await readiness(['--payroll', payroll.id]);
    expect(before.code, before.stderr).toBe(1);
    expect(before.stdout).toContain(`NOT READY  Acme Widgets Ltd / ${payroll.name}  (${payroll.id})`);
    expect(before.stdout).toContain('missing: no active collection account for GBP: set one with deductions collection-accounts set');
    expect(before.stdout).toContain('missing: the employer has not opted in (pending)');
    expect(before.stdout).toContain('missing: no open pay date ahead');

    await createCollectionAccount(t.db, 'GBP');
    await t.db.updateTable('employers').set({ salary_deduction_opt_in_status: 'opted_in' }).where('id', '=', employer.id).execute();
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
    // Generated with its lock date already behind it: the next nightly run would lock it at once.
    const overdue = {
      pay_date: daysAgo(5),
      payroll_cutoff_date: daysAgo(10),
      lock_date: daysAgo(15),
      pay_period: `${Number(daysAgo(5).slice(5, 7))}-${daysAgo(5).slice(0, 4)}`,
    };
    await t.db
      .insertInto('pay_dates')
      .values([...futureMonthlyPayDates(3), overdue].map((d) => ({ payroll_id: payroll.id, ...d })))
      .execute();

    const after = await readiness(['--payroll', payroll.id, '--json']);
    expect(after.code, after.stderr).toBe(0);
    const [report] = JSON.parse(after.stdout).payrolls;
    expect(report).toMatchObject({ payrollId: payroll.id, employer: 'Acme Widgets Ltd', currency: 'GBP', ready: true });
    expect(report.findings).toEqual([
      {
        severity: 'notice',
        code: 'overdue-pay-dates',
        message: `1 unlocked pay date with lock dates already past (first ${overdue.pay_date}): the next nightly run locks them at once`,
      },
    ]);
    const text = await readiness(['--payroll', payroll.id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`ready      Acme Widgets Ltd / ${payroll.name}`);
  });
});
