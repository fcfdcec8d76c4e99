import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectStatus, formatStatus } from '../../../src/faces/cli/status-command.ts';
import type { NightlyRunPayDateRow, NightlyRunRow } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { runNightlyNow } from '../../../src/faces/workers/nightly-runner.ts';
import { loadNightlySummary, summarizeNightlyRun, triggerNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { lockJobId, queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { composition } from '../../../bin/composition.ts';
import { createBiller, createCollectionAccount, createEmployee, createEmployer, createMandateRow, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t.close());

const RUN_DATE = '2026-11-18';

/** Three payrolls, three calendars; per payroll, which pay dates lock on or before RUN_DATE. */
async function threePayrolls() {
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  const biller = await createBiller(t.db);
  const calendars = {
    weekly: [
      { pay_date: '2026-11-20', payroll_cutoff_date: '2026-11-17', pay_period: '33-2026', lock_date: '2026-11-13' },
      { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-24', pay_period: '34-2026', lock_date: '2026-11-20' },
    ],
    monthly: [
      { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
      { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
    ],
    four_weekly: [{ pay_date: '2026-12-11', payroll_cutoff_date: '2026-12-04', pay_period: '36-2026', lock_date: '2026-12-02' }],
  } as const;
  const payrolls: Record<string, string> = {};
  for (const [frequency, payDates] of Object.entries(calendars)) {
    const payroll = await createPayroll(t.db, {
      providerId: provider.id,
      employerId: employer.id,
      frequency: frequency as 'weekly',
      payDates: [...payDates],
    });
    payrolls[frequency] = payroll.id;
    const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
    for (const payDate of payDates) {
      await t.db
        .insertInto('payment_requests')
        .values({
          biller_client_id: biller.clientId,
          mandate_id: mandate.id,
          payroll_id: payroll.id,
          employee_id: employee.id,
          currency: 'GBP',
          amount: 1_000,
          target_pay_date: payDate.pay_date,
        })
        .execute();
    }
  }
  return payrolls;
}

async function snapshotsByPair() {
  const rows = await t.db.selectFrom('deduction_snapshots').select(['payroll_id', 'pay_date']).execute();
  return rows.map((r) => `${r.payroll_id}/${r.pay_date}`).sort();
}

describe('lock job ids', () => {
  it('name the run, the payroll and the pay date, with a suffix for each re-queue, and never contain a colon', () => {
    const pair = { payrollId: 'p1', payDate: '2026-11-27' };
    expect(lockJobId('run-a', pair)).toBe('lock.run-a.p1.2026-11-27');
    expect(lockJobId('run-a', pair, 2)).toBe('lock.run-a.p1.2026-11-27.r2');
    expect(lockJobId('run-b', pair)).not.toBe(lockJobId('run-a', pair));
    expect(lockJobId('run-a', pair, 1)).not.toContain(':');
  });
});

describe('the nightly run', () => {
  it('locks exactly the due pairs, and a second run of the date finds nothing due and queues nothing', async () => {
    const payrolls = await threePayrolls();
    const runtime = runtimeOf(t);
    const summary = await runNightlyNow(runtime, RUN_DATE, { pollMs: 50, trigger: { kind: 'manual', by: 'test' }, startWorkers: composition.startWorkers });
    expect(summary).toMatchObject({
      runDate: RUN_DATE,
      trigger: 'manual',
      triggeredBy: 'test',
      pairs: 2,
      payrollsLocked: 2,
      alreadyLocked: 0,
      pending: 0,
      paymentsInstructed: 2,
      failures: [],
    });
    expect(summary.finishedAt).not.toBeNull();
    expect(summary.totalsByCurrency).toEqual({ GBP: 2_000n });
    expect(await snapshotsByPair()).toEqual([`${payrolls.monthly}/2026-11-27`, `${payrolls.weekly}/2026-11-20`].sort());

    const host = await composition.startWorkers(runtime, { schedule: false });
    try {
      const queue = host.queues[queueNames.payDates];
      const before = await queue.getJobCountByTypes('completed', 'waiting', 'active', 'delayed', 'failed');
      const again = await runNightlyNow(runtime, RUN_DATE, { pollMs: 50, workers: host });
      const after = await queue.getJobCountByTypes('completed', 'waiting', 'active', 'delayed', 'failed');
      expect(again.runId).not.toBe(summary.runId);
      expect(again).toMatchObject({ pairs: 0, payrollsLocked: 0, alreadyLocked: 0, failures: [] });
      expect(after).toBe(before);

      // The scheduler's trigger of a date happens once: a repeat joins the run it started.
      const scheduled = await triggerNightlyRun(t.db, queue, RUN_DATE, { kind: 'schedule' });
      const repeated = await triggerNightlyRun(t.db, queue, RUN_DATE, { kind: 'schedule' });
      expect(scheduled.joined).toBe(false);
      expect(repeated).toMatchObject({ joined: true, run: { id: scheduled.run.id } });
    } finally {
      await host.close();
    }
    expect(await snapshotsByPair()).toHaveLength(2);

    // `deductions status` shows the runs as recorded, newest first.
    const status = await collectStatus(runtime);
    expect(status.nightlyRuns.at(-1)).toMatchObject({
      id: summary.runId,
      runDate: RUN_DATE,
      trigger: 'manual',
      triggeredBy: 'test',
      payDates: 2,
      locked: 2,
      alreadyLocked: 0,
      failed: 0,
      pending: 0,
    });
    expect(formatStatus(status)).toContain(`${RUN_DATE}  manual by test, started ${summary.startedAt}, finished in`);
  });

  it('still locks every pair exactly once when a worker dies mid-run, and counts the pay dates it locked as locked', async () => {
    const fresh = await startTestApp();
    try {
      await createCollectionAccount(fresh.db);
      const saved = t;
      t = fresh;
      try {
        await threePayrolls();
        await threePayrolls();
      } finally {
        t = saved;
      }
      const runtime = runtimeOf(fresh);
      const options = { schedule: false, payDateConcurrency: 1, lockDurationMs: 1_000, stalledIntervalMs: 500 };
      const first = await composition.startWorkers(runtime, options);
      const payDateWorker = first.workers.find((w) => w.name === queueNames.payDates)!;
      const killed = new Promise<void>((resolve) => {
        payDateWorker.once('active', () => {
          // Force-close: the job stays active with nobody renewing its lock, as after a crash. Its
          // processor still commits the lock, but the job never completes: its retry finds the pay
          // date locked, by this very run.
          void payDateWorker.close(true).then(resolve);
        });
      });
      const trigger = triggerNightlyRun(fresh.db, first.queues[queueNames.payDates], RUN_DATE, { kind: 'manual', by: 'test' });
      await killed;
      const { run } = await trigger;
      const second = await composition.startWorkers(runtime, options);
      // The new worker recovers the stalled job and the run finishes by itself; how soon depends on
      // the machine, so wait for this run to finish rather than join it (a finished date would start
      // a new, empty run).
      const deadline = Date.now() + 30_000;
      while ((await fresh.db.selectFrom('nightly_runs').select('finished_at').where('id', '=', run.id).executeTakeFirstOrThrow()).finished_at === null) {
        if (Date.now() > deadline) throw new Error(`run ${run.id} did not finish within 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const summary = await loadNightlySummary(fresh.db, run.id);
      await Promise.all([first.close(), second.close()]);

      expect(summary.runId).toBe(run.id);
      const rows = await fresh.db.selectFrom('deduction_snapshots').select(['payroll_id', 'pay_date']).execute();
      const pairs = rows.map((r) => `${r.payroll_id}/${r.pay_date}`);
      expect(pairs).toHaveLength(4);
      expect(new Set(pairs).size).toBe(4);
      expect(summary).toMatchObject({ pairs: 4, payrollsLocked: 4, alreadyLocked: 0, paymentsInstructed: 4, failures: [] });
      const instructed = await fresh.db.selectFrom('payment_requests').select('id').where('status', '=', 'instructed').execute();
      expect(instructed).toHaveLength(4);
      const attempts = await fresh.db.selectFrom('payment_requests').select('attempts').where('status', '=', 'instructed').execute();
      expect(attempts.every((a) => a.attempts === 1)).toBe(true);
    } finally {
      await fresh.close();
    }
  });
});

describe('summarizeNightlyRun', () => {
  const run: NightlyRunRow = {
    id: 'run-1',
    run_date: '2026-11-18',
    trigger: 'schedule',
    triggered_by: null,
    pay_dates_due: 4,
    started_at: new Date('2026-11-18T01:00:00Z'),
    finished_at: new Date('2026-11-18T01:02:00Z'),
  };
  const row = (payDate: string, outcome: NightlyRunPayDateRow['outcome'], values: Partial<NightlyRunPayDateRow> = {}): NightlyRunPayDateRow => ({
    run_id: run.id,
    payroll_id: 'p1',
    pay_date: payDate,
    outcome,
    snapshot_id: outcome === 'locked' || outcome === 'already_locked' ? `s-${payDate}` : null,
    employee_count: null,
    payments_instructed: null,
    total_amount: null,
    currency: null,
    failure_reason: null,
    job_requeues: 0,
    resolved_at: outcome === 'pending' ? null : new Date(),
    ...values,
  });

  it('counts what this run locked, what it found locked, what failed and what is still pending', () => {
    const rows = [
      row('2026-10-30', 'locked', { employee_count: 2, payments_instructed: 3, total_amount: 1_000, currency: 'GBP' }),
      row('2026-11-27', 'locked', { employee_count: 2, payments_instructed: 3, total_amount: 5_000, currency: 'GBP' }),
      row('2026-11-28', 'locked', { employee_count: 1, payments_instructed: 1, total_amount: 700, currency: 'EUR' }),
      row('2026-11-20', 'already_locked', { employee_count: 9, payments_instructed: 0, total_amount: 9_999, currency: 'GBP' }),
      row('2026-11-21', 'failed', { failure_reason: 'boom' }),
      row('2026-11-22', 'pending'),
    ];
    const summary = summarizeNightlyRun(run, rows);
    expect(summary).toMatchObject({
      runId: 'run-1',
      trigger: 'schedule',
      startedAt: '2026-11-18T01:00:00.000Z',
      finishedAt: '2026-11-18T01:02:00.000Z',
      pairs: 6,
      payrollsLocked: 3,
      alreadyLocked: 1,
      pending: 1,
      employees: 5,
      paymentsInstructed: 7,
      totalsByCurrency: { GBP: 6_000n, EUR: 700n },
    });
    expect(summary.failures).toEqual([{ payrollId: 'p1', payroll: null, payDate: '2026-11-21', reason: 'boom' }]);
    // Given the payrolls' names, it says them.
    expect(summarizeNightlyRun(run, rows, new Map([['p1', 'Acme Ltd: Monthly']])).failures[0]).toMatchObject({ payroll: 'Acme Ltd: Monthly' });
  });
});
