import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { DeliverySlots } from '../../../src/faces/webhooks/webhook-delivery-slots.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import type { WorkerHost, WorkerHostOptions } from '../../../src/faces/workers/worker-host.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { deliveriesOfEndpoint, dispatch, newBiller, pause, recordEvent, registerEndpoint, until } from './webhook-test-kit.ts';

// Issue 31, item 2: with 32 slow endpoints registered by biller B, biller A's webhook arrived after
// 29.4 s instead of 1.4 s, as B's deliveries held all 16 delivery slots. Here B's receiver takes
// SLOW_MS to answer each delivery; A's latency is measured alone (the baseline), behind B's 32 with
// the slots and the queue shared as they were (every slot open to every biller, all of B's deliveries
// in the queue: the control, which shows the setup reproduces the problem), and behind B's 32 with the
// slots shared fairly (4 per biller) and B's share of the queue (8). webhook-backlog.test.ts puts A
// behind thousands of B's deliveries.

const SLOW_MS = 1_500;
const B_ENDPOINTS = 32;
const SCALE = 0.0002;

let t: TestApp;
let deliveries: Queue;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  // B registers its 32 endpoints through the API; the limit of the default installation (10) is item 2's other half.
  t = await startTestApp({ env: { WEBHOOK_ENDPOINTS_PER_BILLER: String(B_ENDPOINTS) } });
  deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await deliveries?.close();
  await t?.close();
});

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}) {
  const started = await startWebhookReceiver(options);
  receivers.push(started);
  return started;
}

/** B's receiver: answers each delivery after SLOW_MS, counting how many it holds at once. */
async function slowReceiver() {
  const load = { now: 0, most: 0 };
  const hooks = await receiver({
    respond: async () => {
      load.now += 1;
      load.most = Math.max(load.most, load.now);
      await pause(SLOW_MS);
      load.now -= 1;
      return { status: 204 };
    },
  });
  return { hooks, load };
}

interface Run {
  /** From the dispatcher queuing A's delivery to A's receiver getting it. */
  latencyOfA: number;
  /** The most deliveries B's receiver held at once. */
  mostOfBAtOnce: number;
}

/**
 * One measurement on a worker host of its own: A's event, alone or dispatched right after one event
 * of B's that goes to B's 32 endpoints. Waits for every delivery to be settled before closing.
 */
async function measure(options: { noisyNeighbour: boolean; hostOptions: WorkerHostOptions }): Promise<Run> {
  const queuedPerBiller = options.hostOptions.webhooks?.queuedPerBiller;
  const host: WorkerHost = await composition.startWorkers(runtimeOf(t), options.hostOptions);
  try {
    const billerA = await newBiller(t);
    const hooksA = await receiver();
    const endpointA = await registerEndpoint(t, billerA.headers, hooksA);
    const billerB = await newBiller(t);
    const slow = await slowReceiver();
    const endpointsB = options.noisyNeighbour
      ? await Promise.all(Array.from({ length: B_ENDPOINTS }, (_, i) => registerEndpoint(t, billerB.headers, slow.hooks, { path: `/b${i}` })))
      : [];

    const dispatchOptions = queuedPerBiller === undefined ? {} : { queuedPerBiller };
    if (options.noisyNeighbour) {
      // B's 32 deliveries are queued first (as many as B may have in the queue), A's behind them.
      await recordEvent(t.db, billerB.clientId, 'payment_request.updated');
      await dispatch(t.db, deliveries, dispatchOptions);
    }
    const eventA = await recordEvent(t.db, billerA.clientId, 'payment_request.updated');
    const started = Date.now();
    await dispatch(t.db, deliveries, dispatchOptions);
    await hooksA.waitFor((r) => r.deliveries.length === 1, 30_000);
    const latencyOfA = hooksA.deliveries[0]!.receivedAt - started;
    expect(hooksA.deliveries[0]!.webhookId).toBe(eventA);

    // Nothing lost, nothing twice: each of B's endpoints gets the event once, at the first attempt.
    await slow.hooks.waitFor((r) => r.deliveries.length === endpointsB.length, 60_000);
    for (const endpoint of [endpointA, ...endpointsB]) {
      await until(
        () => deliveriesOfEndpoint(t.db, endpoint.id),
        (rows) => rows.length === 1 && rows[0]!.status === 'succeeded',
        10_000,
      );
      expect((await deliveriesOfEndpoint(t.db, endpoint.id)).map((row) => [row.status, row.attempts])).toEqual([['succeeded', 1]]);
    }
    // One event to 32 endpoints: one webhook-id, one request per endpoint's path.
    expect(slow.hooks.summary()).toMatchObject({ verified: endpointsB.length, rejected: 0 });
    expect(new Set(slow.hooks.deliveries.map((d) => d.path)).size).toBe(endpointsB.length);
    return { latencyOfA, mostOfBAtOnce: slow.load.most };
  } finally {
    await host.close();
  }
}

describe("one biller's slow endpoints and another biller's deliveries (issue 31, item 2)", () => {
  it("A's latency behind B's 32 slow endpoints stays at its baseline; the shared pool of before is measured beside it", async () => {
    const fair: WorkerHostOptions = { schedule: false, webhooks: { retryDelayScale: SCALE } };
    // As before the fix: all 16 slots open to one biller, and as many of its deliveries in the queue as it has.
    const unshared: WorkerHostOptions = {
      schedule: false,
      webhooks: { retryDelayScale: SCALE, slots: new DeliverySlots({ total: 16, perBiller: 16 }), queuedPerBiller: 1_000 },
    };

    const baseline = await measure({ noisyNeighbour: false, hostOptions: fair });
    const before = await measure({ noisyNeighbour: true, hostOptions: unshared });
    const after = await measure({ noisyNeighbour: true, hostOptions: fair });
    console.info(
      `webhook fairness: A alone ${baseline.latencyOfA} ms; behind B's ${B_ENDPOINTS} endpoints of ${SLOW_MS} ms: ` +
        `${before.latencyOfA} ms with one shared pool (B held ${before.mostOfBAtOnce} at once), ` +
        `${after.latencyOfA} ms with the pool shared per biller (B held ${after.mostOfBAtOnce} at once)`,
    );

    // The control: the setup reproduces the problem (A waits for two rounds of B's 16).
    expect(before.mostOfBAtOnce).toBe(16);
    expect(before.latencyOfA).toBeGreaterThanOrEqual(SLOW_MS);
    // The fix: B never holds more than its 4, and A does not wait for it (a generous margin for a busy machine).
    expect(after.mostOfBAtOnce).toBeLessThanOrEqual(4);
    expect(after.latencyOfA).toBeLessThan(baseline.latencyOfA + 1_000);
    expect(after.latencyOfA).toBeLessThan(SLOW_MS);
  }, 120_000);
});

describe('webhook endpoint limit', () => {
  it('is configurable: this installation lets a biller have 32, and refuses the 33rd with 409', async () => {
    const biller = await newBiller(t);
    const hooks = await receiver();
    for (let i = 0; i < B_ENDPOINTS; i += 1) await registerEndpoint(t, biller.headers, hooks, { path: `/n${i}` });
    const refused = await injectJson(t.app, { method: 'POST', url: '/webhook-endpoints', headers: biller.headers, body: { url: `${hooks.url}/one-more` } });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ status: 409, webhook_endpoint_limit: B_ENDPOINTS });
  });
});
