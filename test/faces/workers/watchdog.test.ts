import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lastScheduledTrigger, PAST_RUN_LOOK_BACK_DAYS } from '../../../src/cycle/nightly/nightly-recovery.ts';
import { findLatestRun, readRunProgress } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary, recordPayDateFailure, triggerNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { lockJobId, lockPayDateJob, queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { composition } from '../../../bin/composition.ts';
import { createBiller, createCollectionAccount } from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { newBiller, recordEvent, until } from '../webhooks/webhook-test-kit.ts';
import { captureLogs } from '../../support/log-capture.ts';
import { createDuePayrolls, snapshotCounts, todayInServiceZone } from '../../platform/queue/nightly-fixtures.ts';

let t: TestApp;
let host: WorkerHost | undefined;

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterEach(async () => {
  await host?.close();
  host = undefined;
});
afterAll(async () => t?.close());

describe('lastScheduledTrigger', () => {
  it('is the latest time the cron pattern fired, with its run date in the service time zone', () => {
    // 01:00 London is 01:00 UTC in November (GMT) and 00:00 UTC in July (BST).
    expect(lastScheduledTrigger('0 1 * * *', 'Europe/London', new Date('2026-11-23T00:30:00Z'))).toEqual({
      runDate: '2026-11-22',
      at: new Date('2026-11-22T01:00:00Z'),
    });
    expect(lastScheduledTrigger('0 1 * * *', 'Europe/London', new Date('2026-11-23T14:00:00Z'))?.runDate).toBe('2026-11-23');
    expect(lastScheduledTrigger('0 1 * * *', 'Europe/London', new Date('2026-07-01T00:30:00Z'))).toEqual({
      runDate: '2026-07-01',
      at: new Date('2026-07-01T00:00:00Z'),
    });
    // Weekdays only: on a Sunday the last run date is Friday's.
    expect(lastScheduledTrigger('0 1 * * 1-5', 'Europe/London', new Date('2026-11-22T12:00:00Z'))?.runDate).toBe('2026-11-20');
  });
});

describe('the watchdog', () => {
  it('triggers the run of the last scheduled date when that date has no run at all (its trigger was lost with Redis)', async () => {
    const biller = await createBiller(t.db);
    const { payrollIds } = await createDuePayrolls(t.db, {
      billerClientId: biller.clientId,
      payrolls: 3,
      employeesPerPayroll: 1,
      lockDate: '2026-11-10',
      payDate: '2026-11-20',
    });
    // The schedule fired at 01:00 on 10 November, as far as the clock is concerned; no run exists.
    const now = new Date('2026-11-10T09:00:00Z');
    host = await composition.startWorkers(runtimeOf(t), { schedule: true, watchdog: { intervalMs: 100, catchUpGraceMs: 60_000, now: () => now } });
    const run = await until(
      () => findLatestRun(t.db, '2026-11-10'),
      (found) => found?.finished_at != null,
      15_000,
    );
    expect(run).toMatchObject({ trigger: 'catch_up', pay_dates_due: 3 });
    expect(await loadNightlySummary(t.db, run!.id)).toMatchObject({ payrollsLocked: 3, failures: [] });
    expect(await snapshotCounts(t.db, payrollIds)).toEqual([1, 1, 1]);

    // Later looks find the date run: no second catch-up.
    await host.watchdog.tick();
    const tick = await host.watchdog.tick();
    expect(tick.catchUpRunDate).toBeNull();
    const runs = await t.db.selectFrom('nightly_runs').select('id').where('run_date', '=', '2026-11-10').execute();
    expect(runs).toHaveLength(1);
  });

  it('queues again the pay dates of a run that stopped making progress because its jobs are gone, without a loss of data', async () => {
    const biller = await createBiller(t.db);
    const { payrollIds } = await createDuePayrolls(t.db, {
      billerClientId: biller.clientId,
      payrolls: 4,
      employeesPerPayroll: 1,
      lockDate: '2026-11-11',
      payDate: '2026-11-21',
    });
    const payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    try {
      const { run } = await triggerNightlyRun(t.db, payDates, '2026-11-11', { kind: 'manual', by: 'test' });
      // Its jobs vanish (an operator's cleanup, a partial loss): Redis otherwise keeps its data.
      await payDates.drain();
      expect(await payDates.getWaitingCount()).toBe(0);

      host = await composition.startWorkers(runtimeOf(t), { schedule: false, watchdog: { intervalMs: 100, stuckAfterMs: 300 } });
      await until(
        () => readRunProgress(t.db, run.id),
        (progress) => progress.finishedAt !== null,
        15_000,
      );
      expect(await loadNightlySummary(t.db, run.id)).toMatchObject({ pairs: 4, payrollsLocked: 4, alreadyLocked: 0, failures: [] });
      expect(await snapshotCounts(t.db, payrollIds)).toEqual([1, 1, 1, 1]);
      const requeues = await t.db.selectFrom('nightly_run_pay_dates').select('job_requeues').where('run_id', '=', run.id).execute();
      expect(requeues.every((row) => row.job_requeues === 1)).toBe(true);
    } finally {
      await payDates.close();
    }
  });

  it('asks for the dispatcher when outbox events wait, with no dispatch schedule at all', async () => {
    // The first test's worker kept the schedules; here the dispatcher's is gone.
    const dispatch = createQueue(queueNames.webhookDispatch, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    await dispatch.removeJobScheduler('dispatch-events');
    await dispatch.close();
    host = await composition.startWorkers(runtimeOf(t), { schedule: false, watchdog: { intervalMs: 100, undispatchedAfterMs: 200 } });
    const biller = await newBiller(t);
    const eventId = await recordEvent(t.db, biller.clientId);
    const dispatched = await until(
      () => t.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow(),
      (event) => event.dispatched_at !== null,
      10_000,
    );
    expect(dispatched.dispatched_at).toBeInstanceOf(Date);
    expect(await host.queues[queueNames.webhookDispatch].getJobSchedulers()).toEqual([]);
  });

  it('queues again an unlocked pay date of a past run date without a live job, against its run, whatever the run is doing; a failed lock is left alone', async () => {
    const daysBefore = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
    const today = todayInServiceZone();
    const biller = await createBiller(t.db);
    const payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    const pairs = (payrollIds: string[]) => payrollIds.map((payrollId) => ({ payrollId, payDate: '2099-03-26' }));
    // Runs of past dates, started on them; each has a pay date resolved just now, so none looks
    // stuck to the whole-run check, which waits for a run to stop making progress.
    const pastRun = async (runDate: string, payrolls: number) => {
      const { payrollIds } = await createDuePayrolls(t.db, { billerClientId: biller.clientId, payrolls, employeesPerPayroll: 1, lockDate: runDate, payDate: '2099-03-26' });
      const { run } = await triggerNightlyRun(t.db, payDates, runDate, { kind: 'manual', by: 'test' });
      await t.db
        .updateTable('nightly_runs')
        .set({ started_at: new Date(`${runDate}T01:00:00Z`) })
        .where('id', '=', run.id)
        .execute();
      return { run, pairs: pairs(payrollIds) };
    };
    try {
      // A worker has run before: its watchdog knows Redis has lost nothing (a loss would check every run).
      const before = await composition.startWorkers(runtimeOf(t), { schedule: false });
      await until(
        () => before.watchdog.tick(),
        (tick) => !tick.skipped,
      );
      await before.close();

      // Two days ago: one pay date's job is lost, one's lock failed for good, one's job waits (delayed).
      const recent = await pastRun(daysBefore(today, 2), 3);
      const [lost, failed, waiting] = recent.pairs as [(typeof recent.pairs)[0], (typeof recent.pairs)[0], (typeof recent.pairs)[0]];
      for (const pair of recent.pairs) await payDates.remove(lockJobId(recent.run.id, pair));
      await recordPayDateFailure(t.db, recent.run.id, failed, 'no active collection account for GBP');
      await payDates.add(lockPayDateJob, { runId: recent.run.id, ...waiting }, { jobId: lockJobId(recent.run.id, waiting), delay: 3_600_000 });
      // Beyond the look-back: a lost job stays lost (as far as this check goes).
      const old = await pastRun(daysBefore(today, PAST_RUN_LOOK_BACK_DAYS + 3), 2);
      for (const pair of old.pairs) await payDates.remove(lockJobId(old.run.id, pair));
      await recordPayDateFailure(t.db, old.run.id, old.pairs[1]!, 'no active collection account for GBP');

      const logs = captureLogs('warn');
      host = await composition.startWorkers({ ...runtimeOf(t), logger: logs.logger }, { schedule: false, watchdog: { intervalMs: 100 } });
      const locked = (pair: { payrollId: string; payDate: string }) =>
        t.db.selectFrom('pay_dates').select('locked_at').where('payroll_id', '=', pair.payrollId).where('pay_date', '=', pair.payDate).executeTakeFirstOrThrow();
      await until(
        () => locked(lost),
        (row) => row.locked_at !== null,
        15_000,
      );
      await host.watchdog.tick();
      await host.watchdog.tick();

      const rows = await t.db
        .selectFrom('nightly_run_pay_dates')
        .select(['run_id', 'payroll_id', 'outcome', 'job_requeues'])
        .where('run_id', 'in', [recent.run.id, old.run.id])
        .execute();
      const rowOf = (runId: string, pair: { payrollId: string }) => rows.find((row) => row.run_id === runId && row.payroll_id === pair.payrollId);
      // Locked by its own run, through the job queued again under the next id.
      expect(rowOf(recent.run.id, lost)).toMatchObject({ outcome: 'locked', job_requeues: 1 });
      expect(await payDates.getJobState(lockJobId(recent.run.id, lost, 1))).toBe('completed');
      // The failed lock stays failed and unlocked, with no job; the delayed job is left to run.
      expect(rowOf(recent.run.id, failed)).toMatchObject({ outcome: 'failed', job_requeues: 0 });
      expect((await locked(failed)).locked_at).toBeNull();
      expect(await payDates.getJobState(lockJobId(recent.run.id, failed))).toBe('unknown');
      expect(await payDates.getJobState(lockJobId(recent.run.id, failed, 1))).toBe('unknown');
      expect(rowOf(recent.run.id, waiting)).toMatchObject({ outcome: 'pending', job_requeues: 0 });
      expect(await payDates.getJobState(lockJobId(recent.run.id, waiting))).toBe('delayed');
      // Older than the look-back: not touched.
      expect(rowOf(old.run.id, old.pairs[0]!)).toMatchObject({ outcome: 'pending', job_requeues: 0 });
      expect(await payDates.getJobState(lockJobId(old.run.id, old.pairs[0]!, 1))).toBe('unknown');

      expect(logs.lines.filter((line) => line.event === 'past_run_pay_dates_recovered')).toEqual([
        expect.objectContaining({ requeued: 1, failuresRecorded: 0, msg: 'unlocked pay dates of past run dates without a live job: 1 queued again, 0 recorded as failed' }),
      ]);
    } finally {
      await payDates.close();
    }
  });
});
