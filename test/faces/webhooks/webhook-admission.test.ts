import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { recordEvents } from '../../../src/platform/events/outbox.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { attemptDelivery, webhookDeliverySettings } from '../../../src/faces/webhooks/webhook-delivery-service.ts';
import { dispatchPendingEvents } from '../../../src/faces/webhooks/webhook-dispatch-service.ts';
import { enqueueAdmitted, LOST_ADMISSION_AFTER_MS, releaseLostAdmissions, requeueLostDeliveries } from '../../../src/faces/webhooks/webhook-jobs.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { deliveriesOfEndpoint, dispatch, newBiller, pause, registerEndpoint, until } from './webhook-test-kit.ts';

// Admission (src/faces/webhooks/webhook-admission.ts): a biller's backlog waits in the database and at most
// its share (WEBHOOK_QUEUED_PER_BILLER, 8) is in the delivery queue at once; a delivery is held by one
// job at a time; a job that is lost gives its delivery back to the backlog, nothing lost, nothing twice.

let t: TestApp;
let deliveries: Queue;
let hooks: WebhookReceiver;
let host: WorkerHost | undefined;

beforeAll(async () => {
  t = await startTestApp();
  deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
  hooks = await startWebhookReceiver();
});
afterAll(async () => {
  await host?.close();
  await hooks?.close();
  await deliveries?.close();
  await t?.close();
});

async function endpointWithEvents(count: number) {
  const biller = await newBiller(t);
  const path = `/${randomUUID()}`;
  const endpoint = await registerEndpoint(t, biller.headers, hooks, { path });
  await recordEvents(
    t.db,
    Array.from({ length: count }, () => {
      const resourceId = randomUUID();
      return { type: 'mandate.updated' as const, billerClientId: biller.clientId, resourceType: 'mandate', resourceId, data: { id: resourceId } };
    }),
  );
  return { biller, endpoint, path };
}

const heldOf = async (endpointId: string) => (await deliveriesOfEndpoint(t.db, endpointId)).filter((row) => row.job_id !== null);

describe('admission', () => {
  it("admits a biller's share (8) of its backlog, another biller's in turn; four dispatchers at once admit a share once, each delivery to one job", async () => {
    // No worker runs yet: the jobs stay in the queue.
    const b = await endpointWithEvents(40);
    const a = await endpointWithEvents(1);
    expect(await dispatch(t.db, deliveries)).toMatchObject({ events: 41, deliveries: 41, admitted: 9 });

    const heldOfB = await heldOf(b.endpoint.id);
    expect(heldOfB).toHaveLength(8);
    expect(heldOfB.every((row) => row.job_id === `delivery.${row.id}.1` && row.admissions === 1 && row.admitted_at !== null)).toBe(true);
    const backlogOfB = (await deliveriesOfEndpoint(t.db, b.endpoint.id)).filter((row) => row.job_id === null);
    expect(backlogOfB).toHaveLength(32);
    expect(backlogOfB.every((row) => row.status === 'pending' && row.admissions === 0)).toBe(true);
    const [heldOfA] = await heldOf(a.endpoint.id);
    expect(heldOfA).toBeDefined();

    // The queue holds exactly those jobs: 8 of B's, and A's first or second (billers take turns), never ninth.
    const queued = await deliveries.getJobs(['waiting'], 0, -1, true);
    expect(queued.map((job) => job.id).sort()).toEqual([...heldOfB, heldOfA!].map((row) => row.job_id).sort());
    expect(queued.findIndex((job) => job.id === heldOfA!.job_id)).toBeLessThanOrEqual(1);

    // Four dispatchers at once, over a third biller's backlog of 40: its share is admitted once.
    const c = await endpointWithEvents(40);
    const runs = await Promise.all([1, 2, 3, 4].map(() => dispatch(t.db, deliveries)));
    expect(runs.reduce((sum, run) => sum + run.deliveries, 0)).toBe(40);
    expect(runs.reduce((sum, run) => sum + run.admitted, 0)).toBe(8);
    const heldOfC = await heldOf(c.endpoint.id);
    expect(new Set(heldOfC.map((row) => row.job_id)).size).toBe(8);
    expect((await deliveries.getJobs(['waiting'])).filter((job) => heldOfC.some((row) => row.job_id === job.id))).toHaveLength(8);
    expect(await deliveries.count()).toBe(17);

    // Dispatching again admits nothing more: B's share is full, A's backlog empty.
    expect((await dispatch(t.db, deliveries)).admitted).toBe(0);

    // Only the job that holds a delivery attempts it. Another job (an operator's redelivery) takes a
    // delivery only from the backlog and only while the biller's share has room: B's is full.
    const settings = webhookDeliverySettings(t.config);
    const waiter = { key: 'k', wake: () => {} };
    expect(await attemptDelivery(t.db, heldOfB[0]!.id, null, settings, { job: { id: 'redelivery.x.1', waiter } })).toMatchObject({
      kind: 'skipped',
      reason: `the delivery is held by job ${heldOfB[0]!.job_id}`,
    });
    expect(await attemptDelivery(t.db, backlogOfB[0]!.id, null, settings, { job: { id: 'redelivery.y.1', waiter } })).toMatchObject({
      kind: 'skipped',
      reason: "not this job's: the biller's 8 in the queue are taken, or its retry is not due; it waits in its backlog",
    });
    expect(hooks.deliveries.filter((d) => d.path === b.path)).toEqual([]);
    expect(await heldOf(b.endpoint.id)).toEqual(heldOfB);
  });

  it('a job lost before reaching Redis gives its delivery back after a minute; after Redis lost its data, a held delivery gets its job back under its id, once', async () => {
    const lost = await endpointWithEvents(1);
    const live = await endpointWithEvents(1);
    // Both admitted; only the live one's job reaches Redis (the other's queuing died with its process).
    await dispatchPendingEvents(t.db, async (admitted) => {
      const [liveRow] = await heldOf(live.endpoint.id);
      await enqueueAdmitted(
        deliveries,
        admitted.filter((one) => one.deliveryId === liveRow!.id),
      );
    });
    const [lostRow] = await heldOf(lost.endpoint.id);
    const [liveRow] = await heldOf(live.endpoint.id);
    expect(await deliveries.getJobState(lostRow!.job_id!)).toBe('unknown');

    // Within the minute nothing is taken back (a job may still be on its way to Redis); a minute on, the lost one is.
    expect(await releaseLostAdmissions(t.db, deliveries)).toBe(0);
    const later = new Date(Date.now() + LOST_ADMISSION_AFTER_MS + 1_000);
    expect(await releaseLostAdmissions(t.db, deliveries, later)).toBe(1);
    expect(await heldOf(lost.endpoint.id)).toEqual([]);
    expect(await heldOf(live.endpoint.id)).toEqual([liveRow]);

    // Redis loses the live one's job: two recoveries at once queue it again, once, under the id its row records.
    await (await deliveries.getJob(liveRow!.job_id!))!.remove();
    const requeued = await Promise.all([requeueLostDeliveries(t.db, deliveries), requeueLostDeliveries(t.db, deliveries)]);
    expect(requeued[0]! + requeued[1]!).toBeGreaterThanOrEqual(1);
    expect(await deliveries.getJobState(liveRow!.job_id!)).toBe('waiting');
    expect((await deliveries.getJobs(['waiting'])).filter((job) => (job.data as { deliveryId: string }).deliveryId === liveRow!.id)).toHaveLength(1);

    // Workers start: everything goes out, each once; the lost one under a new admission.
    host = await composition.startWorkers(runtimeOf(t), { schedule: false, webhooks: { retryDelayScale: 0.0002 } });
    await dispatch(t.db, deliveries);
    for (const { endpoint, path } of [lost, live]) {
      const [row] = await until(
        () => deliveriesOfEndpoint(t.db, endpoint.id),
        (rows) => rows[0]?.status === 'succeeded',
      );
      expect(row).toMatchObject({ attempts: 1, job_id: null, admitted_at: null });
      await hooks.waitFor((r) => r.deliveries.some((d) => d.path === path));
    }
    expect((await deliveriesOfEndpoint(t.db, lost.endpoint.id))[0]!.admissions).toBe(2);
    expect((await deliveriesOfEndpoint(t.db, live.endpoint.id))[0]!.admissions).toBe(1);
    await pause(200);
    expect(hooks.deliveries.filter((d) => d.path === lost.path || d.path === live.path)).toHaveLength(2);
  });
});
