import { Writable } from 'node:stream';
import { Worker } from 'bullmq';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertRunWithDuePayDates, readRunProgress } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary } from '../../../src/cycle/nightly/nightly-service.ts';
import { producerConnection, workerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import {
  lockJobId,
  lockPayDateJob,
  queueNames,
  rerunPayDateJob,
  JOB_LOCK_DURATION_MS,
  MAX_STALLED_COUNT,
  STALLED_INTERVAL_MS,
  STALLED_RECOVERY_PROMISE_MS,
  stalledRecoveryBoundMs,
} from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { composition } from '../../../bin/composition.ts';
import { monitorDependencies } from '../../../src/platform/runtime/dependency-health.ts';
import { pingRedis, type Runtime } from '../../../src/platform/runtime/runtime.ts';
import { requestEventDispatch } from '../../../src/faces/webhooks/webhook-jobs.ts';
import { dispatchEventsJob } from '../../../src/platform/queue/job-catalogue.ts';
import { createBiller } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { newBiller, pause, recordEvent, until } from '../webhooks/webhook-test-kit.ts';
import { createDuePayrolls } from '../../platform/queue/nightly-fixtures.ts';

let t: TestApp;
let host: WorkerHost | undefined;

// No collection account in this database: every lock fails ("no active collection account").
beforeAll(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await host?.close();
  host = undefined;
});
afterAll(async () => t?.close());

/** A runtime whose log lines the test reads. */
function capturingRuntime(overrides: Partial<Runtime> = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const runtime: Runtime = { config: t.config, db: t.db, redis: t.redis, logger: pino({ level: 'info' }, stream), close: async () => {}, ...overrides };
  return { runtime, lines };
}

describe('job failure lines', () => {
  it('say which attempt of how many failed and whether another follows, and a final failure is recorded against the run', async () => {
    const biller = await createBiller(t.db);
    const [payrollId] = (
      await createDuePayrolls(t.db, { billerClientId: biller.clientId, payrolls: 1, employeesPerPayroll: 1, lockDate: '2026-11-12', payDate: '2026-11-22' })
    ).payrollIds;
    const run = await t.db
      .transaction()
      .execute((trx) => insertRunWithDuePayDates(trx, { id: crypto.randomUUID(), runDate: '2026-11-12', trigger: 'manual', triggeredBy: 'test' }));
    const pair = { payrollId: payrollId!, payDate: '2026-11-22' };
    const jobId = lockJobId(run.id, pair);
    const payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    await payDates.add(lockPayDateJob, { runId: run.id, ...pair }, { jobId, attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await payDates.close();

    const { runtime, lines } = capturingRuntime();
    host = await composition.startWorkers(runtime, { schedule: false });
    await until(
      () => readRunProgress(t.db, run.id),
      (progress) => progress.finishedAt !== null,
      15_000,
    );

    const failures = await until(
      () => lines.filter((line) => line.jobId === jobId && String(line.msg).startsWith('job failed')),
      (found) => found.length === 2,
    );
    expect(failures.map((line) => [line.level, line.attempt, line.attempts, line.willRetry, line.msg])).toEqual([
      [40, 1, 2, true, 'job failed (attempt 1 of 2); retrying in 0.1 s'],
      [50, 2, 2, false, 'job failed (attempt 2 of 2); final, not retried'],
    ]);
    expect(failures[0]).toMatchObject({ queue: 'pay-dates', job: 'lock-pay-date', error: 'no active collection account for GBP' });
    expect(failures[1]).toMatchObject({ err: { message: 'no active collection account for GBP' } });

    const summary = await loadNightlySummary(t.db, run.id);
    expect(summary).toMatchObject({ pairs: 1, payrollsLocked: 0, pending: 0 });
    expect(summary.failures).toEqual([{ ...pair, payroll: expect.stringMatching(/^Employer \d+( Ltd)?: Payroll \d+$/), reason: 'no active collection account for GBP' }]);
  });

  it('a malformed job fails once, for good, saying why: no retry is spent on a payload its schema refuses', async () => {
    const jobId = 'rerun.malformed';
    const payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    // Added past the job contract (enqueueJob refuses it), as an older producer or a hand in Redis might.
    await payDates.add(rerunPayDateJob, { rerunId: 'not-a-uuid' }, { jobId, attempts: 5, backoff: { type: 'fixed', delay: 50 } });
    await payDates.close();

    const { runtime, lines } = capturingRuntime();
    host = await composition.startWorkers(runtime, { schedule: false });
    const failures = await until(
      () => lines.filter((line) => line.jobId === jobId && String(line.msg).startsWith('job failed')),
      (found) => found.length === 1,
    );
    const reason = "malformed job rerun-pay-date rerun.malformed, not retried: its payload does not match the job catalogue's schema (rerunId: must be a UUID)";
    expect(failures[0]).toMatchObject({
      level: 50,
      attempt: 1,
      attempts: 5,
      willRetry: false,
      msg: 'job failed (attempt 1 of 5); final, not retried',
      err: { message: reason },
    });
    const job = await host.queues[queueNames.payDates].getJob(jobId);
    expect([await job!.getState(), job!.attemptsMade, job!.failedReason]).toEqual(['failed', 1, reason]);
  });
});

describe('workers while the database is down', () => {
  it('take no job until the database answers again, then work; one line when it goes, one when it is back', async () => {
    let postgresAnswers = false;
    const refused = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const { runtime, lines } = capturingRuntime();
    // The real monitor, with a probe this test can make fail: the database itself stays up, so a
    // worker that ran anyway would dispatch the event.
    runtime.health = monitorDependencies(
      runtime.logger,
      { postgres: () => (postgresAnswers ? sql`select 1`.execute(t.db) : refused()), redis: () => pingRedis(t.redis) },
      { downIntervalMs: [50, 100] },
    );
    try {
      host = await composition.startWorkers(runtime, { schedule: false, watchdog: { intervalMs: 100, undispatchedAfterMs: 0 } });
      await until(
        () => runtime.health!.status('postgres'),
        (status) => status === 'down',
      );

      const biller = await newBiller(t);
      const eventId = await recordEvent(t.db, biller.clientId);
      const dispatch = createQueue(queueNames.webhookDispatch, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
      await requestEventDispatch(dispatch);
      await dispatch.close();
      await pause(1_000);
      expect(host.workers.some((worker) => worker.isRunning() && !worker.isPaused())).toBe(false);
      const waiting = await t.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow();
      expect(waiting.dispatched_at).toBeNull();

      postgresAnswers = true;
      await until(
        () => t.db.selectFrom('events').select('dispatched_at').where('id', '=', eventId).executeTakeFirstOrThrow(),
        (event) => event.dispatched_at !== null,
        10_000,
      );

      // Down again while working (a job met a refused connection): every worker pauses, and
      // resumes when the database is back.
      postgresAnswers = false;
      runtime.health.noteFailure('postgres', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
      await until(
        () => host!.workers.every((worker) => worker.isPaused()),
        (paused) => paused,
      );
      postgresAnswers = true;
      await until(
        () => host!.workers.every((worker) => worker.isRunning() && !worker.isPaused()),
        (working) => working,
      );

      const transitions = lines.filter((line) => line.dependency === 'postgres').map((line) => line.msg);
      expect(transitions).toEqual([
        expect.stringMatching(/^postgres unavailable/),
        'postgres available again',
        expect.stringMatching(/^postgres unavailable/),
        'postgres available again',
      ]);
    } finally {
      await host?.close();
      host = undefined;
      runtime.health.close();
    }
  });
});

describe('stalled jobs', () => {
  it('are recovered within 30 s by the settings every worker of the host runs with', async () => {
    // The bound's premise: a job is marked by a check before its lock can run out.
    expect(2 * STALLED_INTERVAL_MS).toBeLessThan(JOB_LOCK_DURATION_MS);
    expect(STALLED_RECOVERY_PROMISE_MS).toBe(30_000);
    expect(stalledRecoveryBoundMs()).toBe(JOB_LOCK_DURATION_MS + 2 * STALLED_INTERVAL_MS);
    expect(stalledRecoveryBoundMs()).toBeLessThanOrEqual(STALLED_RECOVERY_PROMISE_MS);

    host = await composition.startWorkers(capturingRuntime().runtime, { schedule: false });
    expect(host.workers.map((worker) => worker.name).sort()).toEqual(Object.values(queueNames).sort());
    for (const worker of host.workers) {
      expect(worker.opts).toMatchObject({
        lockDuration: JOB_LOCK_DURATION_MS,
        lockRenewTime: JOB_LOCK_DURATION_MS / 2,
        stalledInterval: STALLED_INTERVAL_MS,
        maxStalledCount: MAX_STALLED_COUNT,
      });
    }
  });

  it('are logged once each as they are recovered, naming the queue, the job and its id', async () => {
    const dispatch = createQueue(queueNames.webhookDispatch, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    // A worker takes the job and then stops renewing its lock, as a killed one would: a job fetched
    // by hand is never renewed.
    const dead = new Worker(queueNames.webhookDispatch, null, { connection: workerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX, lockDuration: 500 });
    try {
      await dispatch.add(dispatchEventsJob, {}, { jobId: 'stalled-dispatch' });
      expect((await dead.getNextJob('dead-worker-token'))?.id).toBe('stalled-dispatch');
      expect(await dispatch.getJobState('stalled-dispatch')).toBe('active');

      const { runtime, lines } = capturingRuntime();
      host = await composition.startWorkers(runtime, { schedule: false, lockDurationMs: 1_000, stalledIntervalMs: 200 });
      await until(
        () => dispatch.getJobState('stalled-dispatch'),
        (state) => state === 'completed',
        10_000,
      );
      // The line is written once the job is read back, which may be after the job has run again.
      const stalled = await until(
        () => lines.filter((line) => line.event === 'job_stalled'),
        (found) => found.length > 0,
      );
      expect(stalled).toEqual([expect.objectContaining({ level: 40, queue: queueNames.webhookDispatch, job: dispatchEventsJob, jobId: 'stalled-dispatch', stalledCount: 1 })]);
    } finally {
      await dead.close();
      await dispatch.close();
    }
  });
});
