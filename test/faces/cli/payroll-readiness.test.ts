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

  it('counts a payroll without a go-live date as not ready', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id);
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, goLiveDate: null, payDates: futureMonthlyPayDates(2) });
    const result = await readiness(['--payroll', payroll.id]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`(${payroll.id}), no go-live date`);
    expect(result.stdout).toContain('missing: no go-live date, so nothing is collected');
  });
});

describe('going live from the command line', () => {
  it('calendars generate sets the go-live date and warns on stderr of pay dates whose lock dates have passed; payrolls go-live moves it', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id);
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, goLiveDate: null });
    const daysFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    const env = cliEnvOf(t.config);
    const generate = await runDeductions(
      [
        'calendars',
        'generate',
        '--payroll',
        payroll.id,
        '--frequency',
        'monthly',
        '--pay-day',
        'last-working-day',
        '--cutoff-working-days',
        '5',
        '--from',
        daysFromNow(-70),
        '--until',
        daysFromNow(100),
      ],
      env,
    );
    expect(generate.code, generate.stderr).toBe(0);
    const stored = await t.db.selectFrom('pay_dates').select(['pay_date', 'lock_date']).where('payroll_id', '=', payroll.id).orderBy('pay_date').execute();
    const today = daysFromNow(0);
    const goLive = stored.find((d) => d.lock_date >= today)!.pay_date;
    expect(generate.stdout).toContain(`  go-live   ${goLive} (the first pay date collected)`);
    expect(generate.stdout).toMatch(/open, not collected \(before go-live\)/);
    expect(generate.stderr).toMatch(/^warning: \d pay dates? with lock dates already past \(.*\) (is|are) before the go-live date /m);

    const first = stored[0]!.pay_date;
    const moved = await runDeductions(['payrolls', 'go-live', '--payroll', payroll.id, '--date', first, '--reason', 'collect from the start'], env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toBe(`Payroll ${payroll.id} goes live ${first} (was ${goLive}): first pay date collected ${first}\n`);
    expect(moved.stderr).toMatch(/^warning: \d pay dates? from the go-live date .* the next nightly run locks (it|them) at once$/m);

    const bad = await runDeductions(['payrolls', 'go-live', '--payroll', payroll.id, '--date', '31/12/2026'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--date');
  });
});
