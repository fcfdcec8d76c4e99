import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { startWebhookReceiver, type ReceiverAnswer, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { attemptsOfEndpoint, deliveriesOfEndpoint, dispatch, newBiller, pause, recordEvent, registerEndpoint, until } from './webhook-test-kit.ts';

// The retry schedule scaled as in webhook-delivery.test.ts (5 s -> 1 ms, 5 min -> 60 ms, 30 min ->
// 360 ms): without the breaker a dead endpoint is sent retry after retry within a second. The
// breaker's own timings are set here: open after 3 failures, for 600 ms, doubling to at most 2.4 s.
const SCALE = 0.0002;
const circuit = { failureThreshold: 3, openBaseMs: 600, openMaxMs: 2_400 };

let t: TestApp;
let host: WorkerHost;
let deliveries: Queue;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestApp();
  host = await composition.startWorkers(runtimeOf(t), { schedule: false, webhooks: { retryDelayScale: SCALE, timeoutMs: 2_000, circuit } });
  deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await host?.close();
  await deliveries?.close();
  await t?.close();
});

/** A receiver that is down (503) until told otherwise. */
async function flakyReceiver() {
  const state = { up: false };
  const hooks = await startWebhookReceiver({ respond: (): ReceiverAnswer => (state.up ? { status: 204 } : { status: 503, body: 'down' }) });
  receivers.push(hooks);
  return { hooks, state };
}

/** When the endpoint's circuit first opened, by the application's clock (its row is written from it). */
async function circuitOpenedAt(endpointId: string): Promise<number> {
  const row = await until(
    () => t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirstOrThrow(),
    (endpoint) => endpoint.circuit_open_until !== null,
  );
  return row.circuit_open_until!.getTime() - row.circuit_open_ms!;
}

async function endpointResource(headers: Record<string, string>, id: string) {
  return (await injectJson(t.app, { method: 'GET', url: `/webhook-endpoints/${id}`, headers })).json().webhook_endpoint;
}

/** Every event delivered once with success, every attempt recorded with no gap in its numbers. */
async function expectEachDeliveredOnce(hooks: WebhookReceiver, endpointId: string, eventIds: string[]) {
  const rows = await until(
    () => deliveriesOfEndpoint(t.db, endpointId),
    (all) => all.length === eventIds.length && all.every((row) => row.status === 'succeeded'),
    15_000,
  );
  const successes = hooks.deliveries.filter((d) => d.status === 204).map((d) => d.webhookId);
  expect(successes.sort()).toEqual([...eventIds].sort());
  const attempts = await attemptsOfEndpoint(t.db, endpointId);
  expect(attempts).toHaveLength(hooks.deliveries.length);
  for (const row of rows) {
    const numbers = attempts.filter((a) => a.event_id === row.event_id).map((a) => a.attempt_number);
    expect(numbers).toEqual(Array.from({ length: row.attempts }, (_, i) => i + 1));
  }
}

describe('circuit breaker of an endpoint that keeps failing', () => {
  it('opens after 3 failures in a row: deliveries wait without being sent, then one probe closes it and every event goes out once', async () => {
    const { hooks, state } = await flakyReceiver();
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    const eventIds: string[] = [];
    for (let i = 0; i < 6; i += 1) eventIds.push(await recordEvent(t.db, biller.clientId, 'payment_request.updated'));
    await dispatch(t.db, deliveries);

    // The third failure recorded opens the circuit. Attempts that set out before it did (4 of the
    // biller's deliveries go at once, and retry after 1 ms) may still land just after.
    const openedAt = await circuitOpenedAt(endpoint.id);
    const shown = await endpointResource(biller.headers, endpoint.id);
    expect(shown.consecutive_failures).toBeGreaterThanOrEqual(3);
    expect(Date.parse(shown.deliveries_paused_until)).toBe(openedAt + circuit.openBaseMs);
    expect(shown.failing_since).not.toBeNull();

    // The receiver is back, but nothing new is sent while the circuit is open, though retries are due every few ms.
    state.up = true;
    const straggling = 250;
    await pause(openedAt + circuit.openBaseMs - 50 - Date.now());
    const opening = hooks.deliveries.filter((d) => d.receivedAt <= openedAt + straggling).length;
    expect(opening).toBeGreaterThanOrEqual(3);
    expect(hooks.deliveries).toHaveLength(opening);

    // One probe once it is over; its success sends the rest at once (one still in its own retry
    // wait, 1.44 s at most at this scale, goes when that ends).
    await expectEachDeliveredOnce(hooks, endpoint.id, eventIds);
    const afterOpening = hooks.deliveries.slice(opening);
    expect(afterOpening[0]!.receivedAt - openedAt).toBeGreaterThanOrEqual(circuit.openBaseMs - 50);
    expect(afterOpening.at(-1)!.receivedAt - afterOpening[0]!.receivedAt).toBeLessThan(2_500);
    expect(await endpointResource(biller.headers, endpoint.id)).toMatchObject({ consecutive_failures: 0, deliveries_paused_until: null, failing_since: null });
  });

  it('probes a dead endpoint one delivery at a time, waiting twice as long after each failed probe, up to the longest', async () => {
    const { hooks, state } = await flakyReceiver();
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    const eventIds: string[] = [];
    for (let i = 0; i < 5; i += 1) eventIds.push(await recordEvent(t.db, biller.clientId, 'payment_request.updated'));
    await dispatch(t.db, deliveries);

    const openedAt = await circuitOpenedAt(endpoint.id);
    // Openings of 600, 1200, 2400 and 2400 ms: four probes in about 6.6 s.
    await pause(openedAt + 7_000 - Date.now());
    const probes = hooks.deliveries.filter((d) => d.receivedAt > openedAt + 100);
    expect(probes.length).toBeGreaterThanOrEqual(3);
    expect(probes.length).toBeLessThanOrEqual(5);
    const gaps = [probes[0]!.receivedAt - openedAt, ...probes.slice(1).map((probe, i) => probe.receivedAt - probes[i]!.receivedAt)];
    expect(gaps[0]).toBeGreaterThanOrEqual(600 - 50);
    expect(gaps[1]).toBeGreaterThanOrEqual(1_200 - 50);
    expect(gaps[2]).toBeGreaterThanOrEqual(2_400 - 50);
    for (const gap of gaps.slice(3)) expect(gap).toBeGreaterThanOrEqual(2_400 - 50);
    // The last probe may have reached the receiver before its failure is recorded.
    await vi.waitFor(
      async () => {
        const shown = await endpointResource(biller.headers, endpoint.id);
        expect(shown.consecutive_failures).toBe(hooks.deliveries.length);
        expect(shown.status).toBe('enabled');
      },
      { timeout: 2_000, interval: 50 },
    );

    // Postponed all along, nothing lost: once the endpoint is back every event arrives, once.
    state.up = true;
    await expectEachDeliveredOnce(hooks, endpoint.id, eventIds);
  }, 30_000);
});
