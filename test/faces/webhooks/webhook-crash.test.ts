import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { composition } from '../../../bin/composition.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { attemptsOfEndpoint, deliveriesOfEndpoint, dispatch, newBiller, pause, recordEvent, registerEndpoint, until } from './webhook-test-kit.ts';

let t: TestApp;
let deliveries: Queue;
let hooks: WebhookReceiver;
const hosts: WorkerHost[] = [];

/** Short locks, so the job of a worker that died is handed on within about a second. */
const crashOptions = { schedule: false, lockDurationMs: 1_000, stalledIntervalMs: 500, webhooks: { retryDelayScale: 0.0002 } };

let releaseFirst: () => void = () => {};
const firstHeld = new Promise<void>((resolve) => {
  releaseFirst = resolve;
});

beforeAll(async () => {
  t = await startTestApp();
  deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
  // The first request hangs until the test lets go, then its connection dies: the worker sending it is gone.
  hooks = await startWebhookReceiver({
    respond: async (delivery) => {
      if (hooks.deliveries.indexOf(delivery) === 0) {
        await firstHeld;
        return { status: 0, drop: true };
      }
      return { status: 204 };
    },
  });
});
afterAll(async () => {
  releaseFirst();
  for (const host of hosts) await host.close();
  await hooks?.close();
  await deliveries?.close();
  await t?.close();
});

describe('at-least-once delivery', () => {
  it('delivers an event whose worker crashed mid-delivery, through another worker, with the same webhook-id', async () => {
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    const eventId = await recordEvent(t.db, biller.clientId, 'payment_request.updated');

    const crashing = await composition.startWorkers(runtimeOf(t), crashOptions);
    hosts.push(crashing);
    await dispatch(t.db, deliveries);
    await hooks.waitFor((r) => r.deliveries.length === 1);

    // The crash: the worker drops its Redis connection and lock renewal mid-job, and its request dies.
    await Promise.all(crashing.workers.map((worker) => worker.close(true)));
    releaseFirst();
    // What the dying process managed to write: a failed attempt, no answer.
    await until(
      () => attemptsOfEndpoint(t.db, endpoint.id),
      (rows) => rows.length === 1,
    );
    // Nothing else sends it while no worker runs: the lock outlives the crash, then nobody holds it.
    await pause(1_500);
    expect(hooks.deliveries).toHaveLength(1);

    const successor = await composition.startWorkers(runtimeOf(t), crashOptions);
    hosts.push(successor);
    await until(
      () => deliveriesOfEndpoint(t.db, endpoint.id),
      (rows) => rows[0]?.status === 'succeeded',
      15_000,
    );

    expect(hooks.deliveries.map((d) => [d.webhookId, d.verified])).toEqual([
      [eventId, true],
      [eventId, true],
    ]);
    expect(hooks.deliveries[1]!.body).toBe(hooks.deliveries[0]!.body);
    const attempts = await attemptsOfEndpoint(t.db, endpoint.id);
    expect(attempts.map((a) => [a.attempt_number, a.status_code])).toEqual([
      [1, null],
      [2, 204],
    ]);
    expect(attempts[0]!.error).toBeTruthy();
    expect(hooks.summary()).toMatchObject({ byType: { 'payment_request.updated': 1 }, verified: 2, duplicates: 1 });
  });
});
