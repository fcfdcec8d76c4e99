import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunProgress } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary, triggerNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { composition } from '../../../bin/composition.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { newBiller, registerEndpoint, until } from '../../faces/webhooks/webhook-test-kit.ts';
import { createDuePayrolls, deleteQueueKeys, paymentsAndEvents, snapshotCounts, todayInServiceZone } from './nightly-fixtures.ts';

let t: TestApp;
let hooks: WebhookReceiver;
let host: WorkerHost | undefined;

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  hooks = await startWebhookReceiver();
});
afterAll(async () => {
  await host?.close();
  await hooks?.close();
  await t?.close();
});

const PAYROLLS = 40;
const EMPLOYEES = 5;

describe('Redis loses its data mid nightly run', () => {
  it('the same worker process finishes the run, locks each pay date once, re-creates the schedules and delivers every event', async () => {
    const biller = await newBiller(t);
    await registerEndpoint(t, biller.headers, hooks);
    const runDate = todayInServiceZone();
    const { payrollIds, payments } = await createDuePayrolls(t.db, {
      billerClientId: biller.clientId,
      payrolls: PAYROLLS,
      employeesPerPayroll: EMPLOYEES,
      lockDate: runDate,
      payDate: '2099-01-29',
    });

    // Started before the workers, so the watchdog's catch-up finds today's run already there.
    const payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    const { run } = await triggerNightlyRun(t.db, payDates, runDate, { kind: 'manual', by: 'test' });
    await payDates.close();
    expect(run.pay_dates_due).toBe(PAYROLLS);

    host = await composition.startWorkers(runtimeOf(t), {
      schedule: true,
      payDateConcurrency: 1,
      watchdog: { intervalMs: 200, undispatchedAfterMs: 1_000 },
    });
    await until(
      () => readRunProgress(t.db, run.id),
      (progress) => progress.total - progress.pending >= 5,
      20_000,
    );

    const lostAt = Date.now();
    expect(await deleteQueueKeys(t.redis, t.config.QUEUE_PREFIX)).toBeGreaterThan(0);
    const atLoss = await readRunProgress(t.db, run.id);
    expect(atLoss.pending).toBeGreaterThan(0);

    await until(
      () => readRunProgress(t.db, run.id),
      (progress) => progress.finishedAt !== null,
      30_000,
    );
    const healedInMs = Date.now() - lostAt;

    const summary = await loadNightlySummary(t.db, run.id);
    expect(summary).toMatchObject({ pairs: PAYROLLS, payrollsLocked: PAYROLLS, alreadyLocked: 0, pending: 0, paymentsInstructed: payments, failures: [] });
    expect(await snapshotCounts(t.db, payrollIds)).toEqual(Array(PAYROLLS).fill(1));
    const { payments: rows, eventsPerPayment } = await paymentsAndEvents(t.db, payrollIds);
    expect(rows.every((p) => p.status === 'instructed' && p.attempts === 1)).toBe(true);
    expect([...eventsPerPayment.values()]).toEqual(Array(payments).fill(1));

    // Every event of the run reaches the receiver: those queued before the loss and those after.
    const eventIds = new Set((await t.db.selectFrom('events').select('id').where('biller_client_id', '=', biller.clientId).execute()).map((e) => e.id));
    expect(eventIds.size).toBe(payments);
    await hooks.waitFor((receiver) => new Set(receiver.deliveries.filter((d) => d.verified).map((d) => d.webhookId)).size >= payments, 30_000);
    const delivered = new Set(hooks.deliveries.filter((d) => d.verified).map((d) => d.webhookId));
    expect([...eventIds].every((id) => delivered.has(id))).toBe(true);
    const healedAndDeliveredInMs = Date.now() - lostAt;

    // The schedules are back, one of each.
    const schedulers = await Promise.all(
      [queueNames.webhookDispatch, queueNames.nightly, queueNames.maintenance].map(async (name) => (await host!.queues[name].getJobSchedulers()).map((s) => s.key)),
    );
    expect(schedulers.flat().sort()).toEqual(['dispatch-events', 'nightly-trigger', 'purge-idempotency-keys', 'reconcile-sweep', 'run-payouts']);

    if (process.env.PRINT_TIMINGS) {
      process.stderr.write(`redis data loss: run finished ${healedInMs} ms after the loss, every webhook delivered after ${healedAndDeliveredInMs} ms\n`);
    }
  });
});
