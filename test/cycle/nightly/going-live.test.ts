import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePayCalendarForPayroll, setGoLiveDate } from '../../../src/directory/calendars/calendar-service.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { InvalidError } from '../../../src/platform/shared/domain-errors.ts';
import { hasPayDatesDueToLock, listRunPayDates, markPayDateFailed } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { retryPayDatesNowReady } from '../../../src/cycle/nightly/nightly-recovery.ts';
import { loadNightlySummary, retryRunPayDates, triggerNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { lockPayDate, PayDateLockError } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { collectStatus, formatStatus } from '../../../src/faces/cli/status-command.ts';
import { retryNightlyRunNow, runNightlyNow } from '../../../src/faces/workers/nightly-runner.ts';
import { composition } from '../../../bin/composition.ts';
import { createCollectionAccount, createEmployer, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { signedInAs } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { until } from '../../faces/webhooks/webhook-test-kit.ts';
import { createQueue, type JobQueue } from '../../../src/platform/queue/queues.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';

// Going live (issue 33): a payroll collects from its go-live date on, and the nightly run holds back,
// saying why, the pay dates of a payroll that is not ready, then locks them once it is.

let t: TestApp;
/** Lock jobs land here; only the tests that start workers see them worked. */
let payDates: JobQueue;
beforeAll(async () => {
  t = await startTestApp();
  payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
  await createCollectionAccount(t.db, 'GBP');
});
afterAll(async () => {
  await payDates?.close();
  await t?.close();
});

const edit = (today: string) => ({ actor: cliActor('test'), reason: null, today });
const monthly = { frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 5 } as const;

async function payDatesOf(payrollId: string) {
  return t.db.selectFrom('pay_dates').select(['pay_date', 'lock_date', 'locked_at']).where('payroll_id', '=', payrollId).orderBy('pay_date').execute();
}

describe('a calendar generated with lock dates already behind it', () => {
  // Generated on 28 November 2026 from September: September's, October's and November's lock dates have passed.
  const today = '2026-11-28';

  it('gives the payroll its go-live date, warns of the pay dates it will not collect, and nothing before it is locked or caught up', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id);
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, goLiveDate: null });

    const change = await t.db
      .transaction()
      .execute((trx) => generatePayCalendarForPayroll(trx, payroll.id, { rule: monthly, from: '2026-09-01', until: '2027-02-28' }, edit(today)));
    const stored = await payDatesOf(payroll.id);
    const firstAhead = stored.find((d) => d.lock_date >= today)!;
    expect(firstAhead.pay_date).toBe('2026-12-31');
    expect(change.go_live_date).toBe('2026-12-31');
    expect(change.warnings).toHaveLength(1);
    expect(change.warnings[0]).toMatch(/^3 pay dates with lock dates already past \(2026-09-30, lock date .*\) are before the go-live date 2026-12-31 and are not collected$/);
    const { go_live_date } = await t.db.selectFrom('payrolls').select('go_live_date').where('id', '=', payroll.id).executeTakeFirstOrThrow();
    expect(go_live_date).toBe('2026-12-31');

    // Nothing due tonight: the watchdog has nothing to catch up, and a run takes nothing on.
    expect(await hasPayDatesDueToLock(t.db, today)).toBe(false);
    const { run } = await triggerNightlyRun(t.db, payDates, today, { kind: 'manual', by: 'test' });
    expect(run.pay_dates_due).toBe(0);
    expect(run.finished_at).not.toBeNull();

    // An operator cannot lock one by hand either.
    await expect(lockPayDate(t.db, payroll.id, '2026-11-30')).rejects.toThrow(
      new PayDateLockError(`payroll ${payroll.id} pay date 2026-11-30 is before its go-live date 2026-12-31, so it is not collected`),
    );

    // The go-live pay date locks alone: the earlier open ones are not taken with it.
    const locked = await lockPayDate(t.db, payroll.id, '2026-12-31');
    expect(locked.earlier).toBeUndefined();
    expect((await payDatesOf(payroll.id)).filter((d) => d.locked_at !== null).map((d) => d.pay_date)).toEqual(['2026-12-31']);

    // A later calendar never moves the go-live date.
    const again = await t.db
      .transaction()
      .execute((trx) => generatePayCalendarForPayroll(trx, payroll.id, { rule: monthly, from: '2027-01-01', until: '2027-06-30' }, edit('2027-01-02')));
    expect(again.go_live_date).toBe('2026-12-31');
    expect(again.warnings).toEqual([]);
  });

  it('moves the go-live date earlier on request, warning that the next run locks the past ones at once, and audits it', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id);
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, goLiveDate: null });
    await t.db.transaction().execute((trx) => generatePayCalendarForPayroll(trx, payroll.id, { rule: monthly, from: '2026-10-01', until: '2027-01-31' }, edit(today)));

    const moved = await t.db.transaction().execute((trx) => setGoLiveDate(trx, payroll.id, { go_live_date: '2026-11-01', reason: 'collect November' }, edit(today)));
    expect(moved).toMatchObject({ payroll_id: payroll.id, go_live_date: '2026-11-01', previous_go_live_date: '2026-12-31', first_pay_date_collected: '2026-11-30' });
    expect(moved.warnings).toEqual([
      expect.stringMatching(/^1 pay date with lock dates already past \(2026-10-30, .*\) is before the go-live date 2026-11-01 and is not collected$/),
      expect.stringMatching(/^1 pay date from the go-live date 2026-11-01 on has its lock date already past \(2026-11-30, .*\): the next nightly run locks it at once$/),
    ]);
    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', payroll.id).where('action', '=', 'payroll.go_live_set').execute();
    expect(audit).toMatchObject([{ reason: 'collect November', before: { go_live_date: '2026-12-31' }, after: { go_live_date: '2026-11-01' } }]);

    const { run } = await triggerNightlyRun(t.db, payDates, today, { kind: 'manual', by: 'test' });
    const rows = (await listRunPayDates(t.db, run.id)).filter((row) => row.payroll_id === payroll.id);
    expect(rows.map((row) => row.pay_date)).toEqual(['2026-11-30']);

    await expect(t.db.transaction().execute((trx) => setGoLiveDate(trx, payroll.id, { go_live_date: '30/11/2026' }, edit(today)))).rejects.toBeInstanceOf(InvalidError);
  });
});

describe('a payroll that is not ready when its pay date is due', () => {
  // Before the other tests' go-live dates: only this describe's pay dates are due.
  const RUN_DATE = '2026-10-12';

  /** A payroll in euros (no euro collection account yet) with one pay date due on RUN_DATE. */
  async function euroPayroll() {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id, { name: 'Euro Foods BV' });
    return createPayroll(t.db, {
      providerId: provider.id,
      employerId: employer.id,
      currency: 'EUR',
      payDates: [{ pay_date: '2026-10-16', payroll_cutoff_date: '2026-10-13', pay_period: '7-2026', lock_date: RUN_DATE }],
    });
  }

  it('is skipped with its reason, shown by the status, retried in vain while not ready, and locked in the same run once it is', async () => {
    const payroll = await euroPayroll();
    const runtime = runtimeOf(t);
    const summary = await runNightlyNow(runtime, RUN_DATE, { pollMs: 50, trigger: { kind: 'manual', by: 'test' }, startWorkers: composition.startWorkers });
    expect(summary.finishedAt).not.toBeNull();
    expect(summary.failures).toEqual([]);
    expect(summary.skipped).toEqual([
      {
        payrollId: payroll.id,
        payroll: `Euro Foods BV: ${payroll.name}`,
        payDate: '2026-10-16',
        reason: 'not ready: no active collection account for EUR: set one with deductions collection-accounts set',
      },
    ]);

    const status = await collectStatus(runtime);
    expect(status.nightlyRuns[0]).toMatchObject({ id: summary.runId, skipped: 1, failed: 0 });
    expect(status.notReadyPayrolls.map((p) => p.payrollId)).toContain(payroll.id);
    const text = formatStatus(status);
    expect(text).toContain('1 skipped (payroll not ready)');
    expect(text).toContain(`Euro Foods BV, payroll ${payroll.name} (${payroll.id})\n    missing: no active collection account for EUR`);

    // The console says the same: the overview lists the payroll, the run's page the skip and its reason.
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const overview = await browser.get('/console');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('<h2 id="not-ready">Payrolls not ready</h2>');
    expect(overview.body).toMatch(new RegExp(`Euro Foods BV</td>\\s*<td>${payroll.name}</td>\\s*<td>2000-01-01</td>\\s*<td><ul><li>no active collection account for EUR`));
    const runPage = await browser.get(`/console/runs/nightly/${summary.runId}`);
    expect(runPage.body).toContain('<dt>Skipped (payroll not ready)</dt><dd>1</dd>');
    expect(runPage.body).toContain('not ready: no active collection account for EUR');

    const inVain = await retryRunPayDates(t.db, payDates, summary.runId);
    expect(inVain).toMatchObject({ retried: [], busyWith: null });
    expect(inVain.stillNotReady).toEqual([{ payrollId: payroll.id, payDate: '2026-10-16', reason: expect.stringContaining('EUR') }]);
    expect(await retryPayDatesNowReady(t.db, payDates, { today: RUN_DATE })).toBe(0);

    await createCollectionAccount(t.db, 'EUR');
    const host = await composition.startWorkers(runtime, { schedule: false });
    try {
      // What the watchdog does on its next look.
      expect(await retryPayDatesNowReady(t.db, host.queues['pay-dates'], { today: RUN_DATE })).toBe(1);
      const after = await until(
        () => loadNightlySummary(t.db, summary.runId),
        (again) => again.finishedAt !== null,
      );
      expect(after).toMatchObject({ payrollsLocked: 1, skipped: [], failures: [], pending: 0 });
      const [payDate] = await payDatesOf(payroll.id);
      expect(payDate!.locked_at).not.toBeNull();
      // Locked: nothing is left to retry.
      expect(await retryPayDatesNowReady(t.db, host.queues['pay-dates'], { today: RUN_DATE })).toBe(0);
    } finally {
      await host.close();
    }
  });

  it('is retried by the operator once a failed lock is fixed, in the run that failed it', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id);
    const payroll = await createPayroll(t.db, {
      providerId: provider.id,
      employerId: employer.id,
      payDates: [{ pay_date: '2026-10-09', payroll_cutoff_date: '2026-10-06', pay_period: '7-2026', lock_date: '2026-10-05' }],
    });
    const { run } = await triggerNightlyRun(t.db, payDates, '2026-10-05', { kind: 'manual', by: 'test' });
    // Its job failed for good (a cause since fixed), and the run finished with it failed.
    expect(await markPayDateFailed(t.db, run.id, { payrollId: payroll.id, payDate: '2026-10-09' }, 'the database was read-only')).toBe(true);
    await t.db.updateTable('nightly_runs').set({ finished_at: new Date() }).where('id', '=', run.id).execute();

    const { retry, summary } = await retryNightlyRunNow(runtimeOf(t), run.id, { pollMs: 50, startWorkers: composition.startWorkers });
    expect(retry.retried).toEqual([{ payrollId: payroll.id, payDate: '2026-10-09' }]);
    expect(summary).toMatchObject({ runId: run.id, payrollsLocked: 1, failures: [], pending: 0 });
    expect(summary.finishedAt).not.toBeNull();
  });
});
