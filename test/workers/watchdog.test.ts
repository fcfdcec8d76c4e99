import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lastScheduledTrigger } from '../../src/nightly/nightly-recovery.ts';
import { findLatestRun, readRunProgress } from '../../src/nightly/nightly-run-repository.ts';
import { loadNightlySummary, triggerNightlyRun } from '../../src/nightly/nightly-service.ts';
import { producerConnection } from '../../src/runtime/redis-connections.ts';
import { queueNames } from '../../src/queue/job-catalogue.ts';
import { createQueue } from '../../src/queue/queues.ts';
import type { WorkerHost } from '../../src/workers/worker-host.ts';
import { composition } from '../../bin/composition.ts';
import { createBiller, createCollectionAccount } from '../support/factories.ts';
import { runtimeOf } from '../support/runtime.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { newBiller, recordEvent, until } from '../webhooks/webhook-test-kit.ts';
import { createDuePayrolls, snapshotCounts } from '../queue/nightly-fixtures.ts';

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
    const run = await until(() => findLatestRun(t.db, '2026-11-10'), (found) => found?.finished_at != null, 15_000);
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
      await until(() => readRunProgress(t.db, run.id), (progress) => progress.finishedAt !== null, 15_000);
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
});
