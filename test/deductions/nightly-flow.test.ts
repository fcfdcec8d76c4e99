import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNightlyFlow, lockJobId, nightlyRunJobId } from '../../src/deductions/nightly-flow.ts';
import { runNightlyNow } from '../../src/deductions/nightly-runner.ts';
import { summarizeNightlyRun, triggerNightlyRun, type LockFigures } from '../../src/deductions/nightly-service.ts';
import { producerConnection } from '../../src/queue/connections.ts';
import { queueNames } from '../../src/queue/queues.ts';
import { startWorkers } from '../../src/queue/worker-host.ts';
import {
  createBiller,
  createCollectionAccount,
  createEmployee,
  createEmployer,
  createMandateRow,
  createPayroll,
  createPayrollProvider,
} from '../support/factories.ts';
import { runtimeOf } from '../support/runtime.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

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
    four_weekly: [
      { pay_date: '2026-12-11', payroll_cutoff_date: '2026-12-04', pay_period: '36-2026', lock_date: '2026-12-02' },
    ],
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

describe('buildNightlyFlow', () => {
  it('gives the run and each pay date deterministic job ids', () => {
    const flow = buildNightlyFlow('2026-11-18', [{ payrollId: 'p1', payDate: '2026-11-27' }]);
    expect(flow.opts?.jobId).toBe(nightlyRunJobId('2026-11-18'));
    expect(flow.children?.[0]?.opts?.jobId).toBe(lockJobId({ payrollId: 'p1', payDate: '2026-11-27' }));
    expect(flow.children?.[0]?.opts?.jobId).not.toContain(':');
    expect(flow.children?.[0]?.opts?.ignoreDependencyOnFailure).toBe(true);
  });
});

describe('the nightly run', () => {
  it('locks exactly the due pairs, and a second trigger for the date adds nothing', async () => {
    const payrolls = await threePayrolls();
    const runtime = runtimeOf(t);
    const summary = await runNightlyNow(runtime, RUN_DATE, { pollMs: 50 });
    expect(summary).toMatchObject({ runDate: RUN_DATE, pairs: 2, payrollsLocked: 2, paymentsInstructed: 2, failures: [] });
    expect(summary.totalsByCurrency).toEqual({ GBP: 2_000 });
    expect(await snapshotsByPair()).toEqual([`${payrolls.monthly}/2026-11-27`, `${payrolls.weekly}/2026-11-20`].sort());

    const queue = new Queue(queueNames.payDates, { connection: producerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX });
    const host = await startWorkers(runtime, { schedule: false });
    try {
      const before = await queue.getJobCountByTypes('completed', 'waiting', 'active', 'delayed', 'failed');
      const again = await triggerNightlyRun(t.db, host.flows, RUN_DATE);
      const after = await queue.getJobCountByTypes('completed', 'waiting', 'active', 'delayed', 'failed');
      expect(again.parentJobId).toBe(nightlyRunJobId(RUN_DATE));
      expect(after).toBe(before);
    } finally {
      await host.close();
      await queue.close();
    }
    expect(await snapshotsByPair()).toHaveLength(2);
  });

  it('still locks every pair exactly once when a worker dies mid-run', async () => {
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
      const first = await startWorkers(runtime, options);
      const payDateWorker = first.workers.find((w) => w.name === queueNames.payDates)!;
      const killed = new Promise<void>((resolve) => {
        payDateWorker.once('active', () => {
          // Force-close: the job stays active with nobody renewing its lock, as after a crash.
          void payDateWorker.close(true).then(resolve);
        });
      });
      const trigger = triggerNightlyRun(fresh.db, first.flows, RUN_DATE);
      await killed;
      await trigger;
      const second = await startWorkers(runtime, options);
      const summary = await runNightlyNow(runtime, RUN_DATE, { pollMs: 100, workers: second });
      await Promise.all([first.close(), second.close()]);

      const rows = await fresh.db.selectFrom('deduction_snapshots').select(['payroll_id', 'pay_date']).execute();
      const pairs = rows.map((r) => `${r.payroll_id}/${r.pay_date}`);
      expect(pairs).toHaveLength(4);
      expect(new Set(pairs).size).toBe(4);
      expect(summary.failures).toEqual([]);
      expect(summary.payrollsLocked + summary.alreadyLocked).toBe(4);
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
  const outcome = (_payDate: string, created: boolean, totalAmount: number, earlier?: LockFigures[]): LockFigures => ({
    created,
    employeeCount: 2,
    totalAmount,
    currency: 'GBP',
    paymentsInstructed: created ? 3 : 0,
    ...(earlier ? { earlier } : {}),
  });

  it('counts each frozen pay date once, however many jobs report it', () => {
    // Job B froze 27 Nov and, first, 30 Oct; job A (30 Oct) then found it frozen.
    const jobA = outcome('2026-10-30', false, 1_000);
    const jobB = outcome('2026-11-27', true, 5_000, [outcome('2026-10-30', true, 1_000)]);
    const summary = summarizeNightlyRun('2026-11-18', [jobA, jobB], { 'bull:pay-dates:lock.x': 'boom' });
    expect(summary).toMatchObject({ payrollsLocked: 2, alreadyLocked: 1, employees: 4, paymentsInstructed: 6, totalsByCurrency: { GBP: 6_000 } });
    expect(summary.failures).toEqual([{ jobId: 'lock.x', reason: 'boom' }]);
  });
});
