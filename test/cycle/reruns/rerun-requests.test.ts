import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { Queue } from 'bullmq';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../../src/platform/db/connection.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { runRerunNow } from '../../../src/faces/workers/rerun-runner.ts';
import { performRerun, requestRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames, rerunPayDateJob } from '../../../src/platform/queue/job-catalogue.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { composition } from '../../../bin/composition.ts';
import { createBiller, createCollectionAccount, createEmployee, createEmployer, createMandateRow, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

const PAY_DATE = '2026-11-27';

let t: TestApp;
let host: WorkerHost;
let payDates: Queue;
/** A second pool: these tests hold transactions open while others queue behind them. */
let side: Database;

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  host = await composition.startWorkers(runtimeOf(t), { schedule: false });
  payDates = new Queue(queueNames.payDates, { connection: producerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX });
  side = createDatabase(t.database.url, 8);
});
afterAll(async () => {
  await side.destroy();
  await payDates.close();
  await host.close();
  await t.close();
});

/** A payroll whose pay date is locked (snapshot version 1) with one payment on it. */
async function lockedPayDate() {
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, {
    providerId: provider.id,
    employerId: employer.id,
    payDates: [{ pay_date: PAY_DATE, payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' }],
  });
  const biller = await createBiller(t.db);
  const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
  const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
  await t.db
    .insertInto('payment_requests')
    .values({
      biller_client_id: biller.clientId,
      mandate_id: mandate.id,
      payroll_id: payroll.id,
      employee_id: employee.id,
      currency: 'GBP',
      amount: 2_500,
      target_pay_date: PAY_DATE,
    })
    .execute();
  await lockPayDate(t.db, payroll.id, PAY_DATE);
  return payroll.id;
}

async function versionsOf(payrollId: string) {
  const snapshots = await t.db.selectFrom('deduction_snapshots').select('snapshot_version').where('payroll_id', '=', payrollId).orderBy('snapshot_version').execute();
  const files = await t.db.selectFrom('instruction_files').select('file_version').where('payroll_id', '=', payrollId).orderBy('file_version').execute();
  return { snapshots: snapshots.map((s) => s.snapshot_version), files: files.map((f) => f.file_version) };
}

async function requestsOf(payrollId: string) {
  return t.db
    .selectFrom('rerun_requests as q')
    .innerJoin('reruns as r', 'r.id', 'q.rerun_id')
    .select(['q.rerun_id', 'q.reason', 'q.requested_by'])
    .where('r.payroll_id', '=', payrollId)
    .orderBy('q.requested_by')
    .execute();
}

/** Polls until the condition holds; the test's timeout bounds the wait. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Backends of this test database running a statement like `pattern` and waiting for a lock another transaction holds. */
async function waitingForDatabaseLocks(pattern: string): Promise<number> {
  const { rows } = await sql<{ waiting: number }>`
    select count(*)::int as waiting from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and query like ${pattern}
  `.execute(side);
  return rows[0]!.waiting;
}

describe('concurrent re-runs of one pay date', () => {
  it('merge while queued: five requests make one new version, with every reason and requester', async () => {
    const payrollId = await lockedPayDate();
    // Paused, the queue holds the re-run's job as an idle worker would: queued, not yet locking.
    await payDates.pause();
    const runs = Promise.all(
      [1, 2, 3, 4, 5].map((n) => runRerunNow(runtimeOf(t), { payrollId, payDate: PAY_DATE, reason: `fix ${n}`, actor: cliActor(`operator-${n}`) }, { workers: host })),
    );
    await until(async () => (await requestsOf(payrollId)).length === 5);
    await payDates.resume();
    const outcomes = await runs;

    const rerunId = outcomes[0]!.rerunId;
    expect(outcomes.map((o) => o.rerunId)).toEqual(Array(5).fill(rerunId));
    expect(outcomes.map((o) => o.snapshotVersion)).toEqual(Array(5).fill(2));
    expect(outcomes.filter((o) => !o.joined)).toHaveLength(1);
    expect(outcomes[0]!.requests.map((r) => [r.requestedBy, r.reason]).sort()).toEqual([1, 2, 3, 4, 5].map((n) => [`operator-${n}`, `fix ${n}`]));
    expect(await versionsOf(payrollId)).toEqual({ snapshots: [1, 2], files: [1, 2] });
    expect(await requestsOf(payrollId)).toEqual([1, 2, 3, 4, 5].map((n) => ({ rerun_id: rerunId, reason: `fix ${n}`, requested_by: `operator-${n}` })));
    const reruns = await t.db.selectFrom('reruns').selectAll().where('payroll_id', '=', payrollId).execute();
    expect(reruns).toHaveLength(1);
    expect(reruns[0]!.completed_at).toBeInstanceOf(Date);
    const jobs = (await payDates.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'])).filter((job) => job.name === rerunPayDateJob);
    expect(jobs.filter((job) => job.data.rerunId === rerunId)).toHaveLength(1);

    // Once it has completed, a request is a new re-run and a new version.
    const later = await runRerunNow(runtimeOf(t), { payrollId, payDate: PAY_DATE, reason: 'late payment', actor: cliActor('operator-6') }, { workers: host });
    expect(later).toMatchObject({ joined: false, snapshotVersion: 3, previousSnapshotId: outcomes[0]!.snapshotId });
    expect(later.rerunId).not.toBe(rerunId);
    expect(later.requests).toEqual([expect.objectContaining({ reason: 'late payment', requestedBy: 'operator-6' })]);
    expect(await versionsOf(payrollId)).toEqual({ snapshots: [1, 2, 3], files: [1, 2, 3] });
  });

  it('queue one follow-up once the lock has begun: later requests join the follow-up, not the lock', async () => {
    const payrollId = await lockedPayDate();
    const first = await requestRerun(t.db, { payrollId, payDate: PAY_DATE, reason: 'before the lock', actor: cliActor('early') });

    let locking: ReturnType<typeof performRerun> | undefined;
    let arriving: Promise<Array<Awaited<ReturnType<typeof requestRerun>>>> | undefined;
    await side.transaction().execute(async (trx) => {
      // Holding the payroll stops the lock after it has taken its re-run, as a long lock would.
      await sql`select id from payrolls where id = ${payrollId} for update`.execute(trx);
      locking = performRerun(side, first.id);
      await until(async () => (await waitingForDatabaseLocks('%row_lock_pay_dates_to_lock%')) === 1);
      arriving = Promise.all([1, 2, 3].map((n) => requestRerun(side, { payrollId, payDate: PAY_DATE, reason: `during the lock ${n}`, actor: cliActor(`late-${n}`) })));
      // They wait for the lock's re-run rather than join it.
      await until(async () => (await waitingForDatabaseLocks('%insert into "reruns"%')) === 3);
    });
    const locked = await locking!;
    const late = await arriving!;

    expect(locked).toMatchObject({ rerunId: first.id, snapshotVersion: 2, created: true });
    expect(locked.requests.map((r) => r.requestedBy)).toEqual(['early']);
    const followUp = late[0]!.id;
    expect(followUp).not.toBe(first.id);
    expect(late.map((r) => r.id)).toEqual([followUp, followUp, followUp]);
    expect(late.filter((r) => !r.joined)).toHaveLength(1);

    const next = await performRerun(t.db, followUp);
    expect(next).toMatchObject({ snapshotVersion: 3, previousSnapshotId: locked.snapshotId });
    expect(next.requests.map((r) => r.requestedBy).sort()).toEqual(['late-1', 'late-2', 'late-3']);
    expect(await versionsOf(payrollId)).toEqual({ snapshots: [1, 2, 3], files: [1, 2, 3] });
  });

  it('run a re-run whose job failed for good again when another request joins it', async () => {
    const payrollId = await lockedPayDate();
    const first = await requestRerun(t.db, { payrollId, payDate: PAY_DATE, reason: 'first try', actor: cliActor('early') });
    // Without a collection account the lock refuses; one attempt makes that final.
    await t.db.updateTable('collection_accounts').set({ active: false, deactivated_at: new Date() }).where('currency', '=', 'GBP').where('active', '=', true).execute();
    try {
      const job = await payDates.add(rerunPayDateJob, { rerunId: first.id }, { jobId: `rerun.${first.id}`, attempts: 1 });
      await until(async () => (await job.getState()) === 'failed');
    } finally {
      // Accounts are history: the fix is a new account, never the old one switched back on.
      await createCollectionAccount(t.db);
    }

    const retried = await runRerunNow(runtimeOf(t), { payrollId, payDate: PAY_DATE, reason: 'account fixed', actor: cliActor('later') }, { workers: host });
    expect(retried).toMatchObject({ rerunId: first.id, joined: true, snapshotVersion: 2 });
    expect(retried.requests.map((r) => r.requestedBy)).toEqual(['early', 'later']);
    expect(await versionsOf(payrollId)).toEqual({ snapshots: [1, 2], files: [1, 2] });
  });
});

describe('the audit log of re-runs', () => {
  it('records every request with who asked and why, against the re-run, in the request’s transaction', async () => {
    const payrollId = await lockedPayDate();
    const snapshot = await t.db.selectFrom('deduction_snapshots').select('id').where('payroll_id', '=', payrollId).executeTakeFirstOrThrow();
    const first = await requestRerun(t.db, { payrollId, payDate: PAY_DATE, reason: '  wrong amount for employee 7 ', actor: cliActor('dana') });
    const joined = await requestRerun(t.db, { payrollId, payDate: PAY_DATE, reason: 'late payment request', actor: cliActor('erin') });
    expect(joined).toMatchObject({ id: first.id, joined: true });

    const entries = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', first.id).orderBy('at').orderBy('id').execute();
    expect(entries).toEqual([
      expect.objectContaining({
        actor_kind: 'cli',
        actor: 'dana',
        action: 'rerun.requested',
        resource_type: 'rerun',
        reason: 'wrong amount for employee 7',
        before: { payroll_id: payrollId, pay_date: PAY_DATE, snapshot_id: snapshot.id, pay_date_state: 'locked' },
        after: { rerun_request_id: first.requestId, joined: false },
      }),
      expect.objectContaining({
        actor_kind: 'cli',
        actor: 'erin',
        action: 'rerun.requested',
        reason: 'late payment request',
        after: { rerun_request_id: joined.requestId, joined: true },
      }),
    ]);

    // A refused request (no reason) records nothing.
    await expect(requestRerun(t.db, { payrollId, payDate: PAY_DATE, reason: '  ', actor: cliActor('frank') })).rejects.toThrow(/reason/);
    expect(await t.db.selectFrom('audit_log').select('id').where('actor', '=', 'frank').execute()).toEqual([]);
  });
});
