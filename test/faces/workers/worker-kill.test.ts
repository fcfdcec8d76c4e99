import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunProgress } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary, triggerNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames, STALLED_RECOVERY_PROMISE_MS } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { createBiller, createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { until } from '../webhooks/webhook-test-kit.ts';
import { linesWith, startService, type ServiceProcess } from '../../platform/runtime/service-process.ts';
import { createDuePayrolls, paymentsAndEvents, snapshotCounts, todayInServiceZone } from '../../platform/queue/nightly-fixtures.ts';

let t: TestApp;
let payDates: Queue;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
});
afterAll(async () => {
  for (const worker of workers) await worker.kill('SIGKILL');
  await payDates?.close();
  await t?.close();
});

const PAYROLLS = 150;
const EMPLOYEES = 4;

function startWorkerProcess(): ServiceProcess {
  const worker = startService('work', { DATABASE_URL: t.database.url, REDIS_URL: t.config.REDIS_URL, QUEUE_PREFIX: t.config.QUEUE_PREFIX });
  workers.push(worker);
  return worker;
}

describe('a worker process killed mid nightly run', () => {
  it('is replaced by another that recovers its jobs, logs each recovery, and the run locks every pay date once with a true summary', async () => {
    const biller = await createBiller(t.db);
    // Locking today: the worker's watchdog then finds today's run there and catches nothing up.
    const runDate = todayInServiceZone();
    const { payrollIds, payments } = await createDuePayrolls(t.db, {
      billerClientId: biller.clientId,
      payrolls: PAYROLLS,
      employeesPerPayroll: EMPLOYEES,
      lockDate: runDate,
      payDate: '2099-01-29',
    });
    const { run } = await triggerNightlyRun(t.db, payDates, runDate, { kind: 'manual', by: 'test' });

    const first = startWorkerProcess();
    await until(
      () => readRunProgress(t.db, run.id),
      (progress) => progress.total - progress.pending >= 10,
      30_000,
    );
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await first.exited;

    // Mid-run: pay dates left, and jobs the dead worker held, which nobody renews any more.
    expect((await readRunProgress(t.db, run.id)).pending).toBeGreaterThan(0);
    const orphaned = (await payDates.getActive()).map((job) => job.id);
    expect(orphaned.length).toBeGreaterThan(0);

    const second = startWorkerProcess();
    await until(
      () => readRunProgress(t.db, run.id),
      (progress) => progress.finishedAt !== null,
      45_000,
    );
    const finishedInMs = Date.now() - killedAt;

    // Each orphaned job was recovered by the new worker, with a line naming it. The run can finish
    // first: a job killed after its transaction committed leaves its pay date locked, so the run waits
    // for nothing, and the job comes back only when the stalled check finds its lock expired.
    const stalled = await until(
      () => linesWith(second.lines, { event: 'job_stalled' }).filter((line) => line.queue === queueNames.payDates),
      (lines) => orphaned.every((id) => lines.some((line) => line.jobId === id)),
      Math.max(5_000, killedAt + STALLED_RECOVERY_PROMISE_MS - Date.now()),
    );
    expect(stalled.every((line) => line.job === 'lock-pay-date' && line.level === 40)).toBe(true);
    // One line per recovery: each orphaned job once.
    expect(orphaned.map((id) => stalled.filter((line) => line.jobId === id).length)).toEqual(orphaned.map(() => 1));
    const recoveredInMs = Math.max(...stalled.map((line) => Number(line.time))) - killedAt;

    const summary = await loadNightlySummary(t.db, run.id);
    expect(summary).toMatchObject({
      pairs: PAYROLLS,
      payrollsLocked: PAYROLLS,
      alreadyLocked: 0,
      pending: 0,
      employees: payments,
      paymentsInstructed: payments,
      totalsByCurrency: { GBP: BigInt(payments * 1_000) },
      failures: [],
    });
    expect(await snapshotCounts(t.db, payrollIds)).toEqual(Array(PAYROLLS).fill(1));
    const { payments: rows, eventsPerPayment } = await paymentsAndEvents(t.db, payrollIds);
    expect(rows).toHaveLength(payments);
    expect(rows.every((p) => p.status === 'instructed' && p.attempts === 1)).toBe(true);
    expect(eventsPerPayment.size).toBe(payments);
    expect([...eventsPerPayment.values()].every((count) => count === 1)).toBe(true);

    expect(await second.kill('SIGTERM')).toBe(0);
    expect(second.stderr.join('')).toBe('');
    if (process.env.PRINT_TIMINGS) {
      process.stderr.write(`worker kill: ${orphaned.length} orphaned pay-date jobs recovered ${recoveredInMs} ms after SIGKILL; run finished after ${finishedInMs} ms\n`);
    }
  }, 90_000);
});
