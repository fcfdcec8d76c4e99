import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import type { Queue } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { collectStatus, formatStatus } from '../../../src/faces/cli/status-command.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { scheduleRecurringJobs, type WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { composition } from '../../../bin/composition.ts';
import { redeliverEvent, RedeliveryRefused } from '../../../src/faces/webhooks/webhook-dispatch-service.ts';
import { secretBoxFor } from '../../../src/platform/shared/secret-box.ts';
import { createWebhookEndpoint } from '../../../src/faces/webhooks/webhook-endpoint-service.ts';
import { enqueueDeliveries, requestEventDispatch } from '../../../src/faces/webhooks/webhook-jobs.ts';
import { startWebhookReceiver, type ReceiverAnswer, type ReceivedDelivery, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import type { HostResolver } from '../../../src/faces/webhooks/webhook-target.ts';
import { createEmploymentWorld } from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { attemptsOfEndpoint, deliveriesOfEndpoint, dispatch, newBiller, pause, recordEvent, registerEndpoint, until } from './webhook-test-kit.ts';

/** The retry schedule in milliseconds: 5 s -> 1 ms, 5 min -> 60 ms, 30 min -> 360 ms. */
const SCALE = 0.0002;

let t: TestApp;
let host: WorkerHost;
let deliveries: Queue;
let dispatcher: Queue;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestApp();
  host = await composition.startWorkers(runtimeOf(t), { schedule: false, webhooks: { retryDelayScale: SCALE } });
  deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
  dispatcher = createQueue(queueNames.webhookDispatch, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await host?.close();
  await Promise.all([deliveries?.close(), dispatcher?.close()]);
  await t?.close();
});

async function receiver(respond?: (delivery: ReceivedDelivery) => ReceiverAnswer | Promise<ReceiverAnswer>) {
  const started = await startWebhookReceiver(respond ? { respond } : {});
  receivers.push(started);
  return started;
}

/** Answers from a script, per webhook-id: the n-th delivery of an event gets the n-th answer (then the last). */
function scripted(...answers: ReceiverAnswer[]) {
  const seen = new Map<string, number>();
  return (delivery: ReceivedDelivery) => {
    const count = seen.get(delivery.webhookId!) ?? 0;
    seen.set(delivery.webhookId!, count + 1);
    return answers[Math.min(count, answers.length - 1)]!;
  };
}

async function endpointRow(id: string) {
  return t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('delivery to a receiver that verifies with the standardwebhooks package', () => {
  it('delivers real events, signed and exactly as stored, and the receiver rejects a tampered body', async () => {
    const hooks = await receiver();
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    const world = await createEmploymentWorld(t.db);
    const created = await injectJson(t.app, {
      method: 'POST',
      url: '/mandates',
      headers: { ...biller.headers, 'idempotency-key': randomUUID() },
      body: {
        mandate_record: {
          employee_id: world.employee.id,
          payroll_id: world.payroll.id,
          // The consumer must be the employee (the mandate is tied to the person).
          consumer: { given_name: 'Alex', family_name: world.employee.family_name, date_of_birth: world.employee.date_of_birth },
          authorisation_source: { type: 'online', authorised_at: '2026-01-15T10:30:00+01:00' },
        },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const payoutEventId = await recordEvent(t.db, biller.clientId, 'payout.created');

    // Through the dispatcher job, as the every-2-seconds schedule would run it.
    await requestEventDispatch(dispatcher);
    await hooks.waitFor((r) => r.summary().verified === 2);

    const events = await t.db.selectFrom('events').selectAll().where('biller_client_id', '=', biller.clientId).orderBy('sequence').execute();
    expect(events.map((e) => e.type)).toEqual(['mandate.created', 'payout.created']);
    expect(events[1]!.id).toBe(payoutEventId);
    for (const event of events) {
      const delivery = hooks.deliveries.find((d) => d.webhookId === event.id)!;
      expect(delivery.verified).toBe(true);
      expect(delivery.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(Math.abs(Number(delivery.timestamp) - Date.now() / 1000)).toBeLessThan(30);
      expect(delivery.body).toBe(JSON.stringify(event.payload));
      const shown = await injectJson(t.app, { method: 'GET', url: `/events/${event.id}`, headers: biller.headers });
      expect(JSON.parse(delivery.body)).toEqual(shown.json().event);
    }
    const mandateEvent = JSON.parse(hooks.deliveries.find((d) => d.type === 'mandate.created')!.body);
    expect(mandateEvent.data).toMatchObject({ id: created.json().mandate.id, status: 'pending_enablement', version: expect.any(Number) });
    expect(hooks.summary()).toEqual({ byType: { 'mandate.created': 1, 'payout.created': 1 }, verified: 2, duplicates: 0, rejected: 0 });

    // The receiver has answered; the sender records each answer just after, so wait for the records.
    await vi.waitFor(
      async () => {
        const rows = await deliveriesOfEndpoint(t.db, endpoint.id);
        expect(rows.map((row) => [row.status, row.attempts, row.last_status_code])).toEqual([
          ['succeeded', 1, 204],
          ['succeeded', 1, 204],
        ]);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect((await attemptsOfEndpoint(t.db, endpoint.id)).map((a) => [a.attempt_number, a.status_code, a.error])).toEqual([
      [1, 204, null],
      [1, 204, null],
    ]);
    expect(events.every((event) => event.dispatched_at !== null)).toBe(true);

    // The same signed headers over a changed body: the public library refuses it, and so does the receiver.
    const genuine = hooks.deliveries[0]!;
    const tampered = genuine.body.replace(/"version":\s*\d+/, '"version":999');
    expect(tampered).not.toBe(genuine.body);
    const signedHeaders = { 'webhook-id': genuine.webhookId!, 'webhook-timestamp': genuine.timestamp!, 'webhook-signature': genuine.signature! };
    expect(new Webhook(endpoint.secret).verify(genuine.body, signedHeaders)).toEqual(JSON.parse(genuine.body));
    expect(() => new Webhook(endpoint.secret).verify(tampered, signedHeaders)).toThrow(/No matching signature/);
    const replay = await fetch(`${hooks.url}/hooks`, { method: 'POST', headers: signedHeaders, body: tampered });
    expect(replay.status).toBe(401);
    expect(hooks.summary()).toMatchObject({ verified: 2, rejected: 1 });
  });
});

describe('retries', () => {
  it('an endpoint that fails twice then succeeds gets one success and two recorded failures, all with one webhook-id', async () => {
    const hooks = await receiver(scripted({ status: 500, body: 'database is down' }, { status: 502 }, { status: 200, body: 'ok' }));
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    const eventId = await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);

    await until(
      () => deliveriesOfEndpoint(t.db, endpoint.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(hooks.deliveries.map((d) => [d.webhookId, d.verified, d.status])).toEqual([
      [eventId, true, 500],
      [eventId, true, 502],
      [eventId, true, 200],
    ]);
    const attempts = await attemptsOfEndpoint(t.db, endpoint.id);
    expect(attempts.map((a) => [a.attempt_number, a.status_code, a.response_snippet])).toEqual([
      [1, 500, 'database is down'],
      [2, 502, ''],
      [3, 200, 'ok'],
    ]);
    expect(attempts.every((a) => a.latency_ms >= 0 && a.error === null)).toBe(true);
    const [delivery] = await deliveriesOfEndpoint(t.db, endpoint.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3, last_status_code: 200, next_attempt_at: null });
    expect(delivery!.succeeded_at).toBeInstanceOf(Date);
    // The success ended the failing streak the first failure started.
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: 'enabled', failing_since: null });
    expect(hooks.summary()).toMatchObject({ verified: 3, duplicates: 2, byType: { 'mandate.updated': 1 } });
  });

  it('waits at least as long as Retry-After asks, though the (scaled) schedule says 1 ms', async () => {
    const hooks = await receiver(scripted({ status: 503, headers: { 'retry-after': '2' } }, { status: 204 }));
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);

    await hooks.waitFor((r) => r.deliveries.length === 2, 10_000);
    const [first, second] = hooks.deliveries;
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(2_000);
    expect(second!.receivedAt - first!.receivedAt).toBeLessThan(6_000);
    await until(
      () => deliveriesOfEndpoint(t.db, endpoint.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect((await attemptsOfEndpoint(t.db, endpoint.id)).map((a) => a.status_code)).toEqual([503, 204]);
  });

  it('a 410 Gone disables the endpoint at once, tells the owner by event, and nothing more is sent there', async () => {
    const gone = await receiver(() => ({ status: 410 }));
    const other = await receiver();
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, gone);
    const watcher = await registerEndpoint(t, biller.headers, other, { eventTypes: ['webhook_endpoint.disabled'] });
    await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);

    await until(
      () => endpointRow(endpoint.id),
      (row) => row.status === 'disabled',
    );
    expect(await endpointRow(endpoint.id)).toMatchObject({ disabled_reason: 'The receiver answered 410 Gone' });
    expect((await deliveriesOfEndpoint(t.db, endpoint.id)).map((d) => [d.status, d.attempts])).toEqual([['failed', 1]]);
    const disabledEvents = await t.db
      .selectFrom('events')
      .selectAll()
      .where('biller_client_id', '=', biller.clientId)
      .where('type', '=', 'webhook_endpoint.disabled')
      .execute();
    expect(disabledEvents).toHaveLength(1);
    expect(disabledEvents[0]!.payload).toMatchObject({ data: { id: endpoint.id, status: 'disabled', disabled_reason: 'The receiver answered 410 Gone' } });

    // The owner's other endpoint hears about it; the disabled one gets neither that nor later events.
    await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);
    await other.waitFor((r) => r.summary().verified === 1);
    expect(other.deliveries[0]!.type).toBe('webhook_endpoint.disabled');
    await pause(300);
    expect(gone.deliveries).toHaveLength(1);
    expect(await deliveriesOfEndpoint(t.db, endpoint.id)).toHaveLength(1);
    expect(await deliveriesOfEndpoint(t.db, watcher.id)).toHaveLength(1);
    const listed = await injectJson(t.app, { method: 'GET', url: `/webhook-endpoints/${endpoint.id}`, headers: biller.headers });
    expect(listed.json().webhook_endpoint).toMatchObject({ status: 'disabled', disabled_reason: 'The receiver answered 410 Gone' });
  });

  it('disables an endpoint that has failed for 5 days straight, with an event, and shows it in `deductions status`', async () => {
    const failing = await receiver(() => ({ status: 500 }));
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, failing);
    // Four days of failures: one more failure does not disable yet.
    await t.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 4 * 86_400_000) })
      .where('id', '=', endpoint.id)
      .execute();
    await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);
    await failing.waitFor((r) => r.deliveries.length >= 2);
    expect((await endpointRow(endpoint.id)).status).toBe('enabled');

    const report = await collectStatus(runtimeOf(t));
    expect(report.webhooks.troubledEndpoints.find((e) => e.id === endpoint.id)).toMatchObject({ status: 'enabled', pendingDeliveries: 1 });

    await t.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 5 * 86_400_000 - 60_000) })
      .where('id', '=', endpoint.id)
      .execute();
    await until(
      () => endpointRow(endpoint.id),
      (row) => row.status === 'disabled',
    );
    expect((await endpointRow(endpoint.id)).disabled_reason).toBe('Every delivery failed for 5 days');
    const [delivery] = await deliveriesOfEndpoint(t.db, endpoint.id);
    expect(delivery!.status).toBe('failed');
    const event = await t.db
      .selectFrom('events')
      .select('payload')
      .where('biller_client_id', '=', biller.clientId)
      .where('type', '=', 'webhook_endpoint.disabled')
      .executeTakeFirstOrThrow();
    expect(event.payload).toMatchObject({ data: { id: endpoint.id, status: 'disabled' } });
    const requests = failing.deliveries.length;
    await pause(500);
    expect(failing.deliveries).toHaveLength(requests);

    const after = await collectStatus(runtimeOf(t));
    expect(after.webhooks.troubledEndpoints.find((e) => e.id === endpoint.id)).toMatchObject({
      status: 'disabled',
      disabledReason: 'Every delivery failed for 5 days',
      pendingDeliveries: 0,
    });
    expect(after.queues.map((q) => q.name)).toEqual(expect.arrayContaining(['webhook-dispatch', 'webhook-deliveries']));
    const text = formatStatus(after);
    expect(text).toContain(endpoint.id);
    expect(text).toContain('DISABLED: Every delivery failed for 5 days');
  });
});

describe('tenant isolation', () => {
  it("a biller's endpoint never receives another biller's events", async () => {
    const hooksA = await receiver();
    const hooksB = await receiver();
    const billerA = await newBiller(t);
    const billerB = await newBiller(t);
    const endpointA = await registerEndpoint(t, billerA.headers, hooksA);
    const endpointB = await registerEndpoint(t, billerB.headers, hooksB);
    const eventsA = [
      await recordEvent(t.db, billerA.clientId),
      await recordEvent(t.db, billerA.clientId, 'payment_request.created'),
      await recordEvent(t.db, billerA.clientId, 'employee.updated'),
    ];
    const eventsB = [await recordEvent(t.db, billerB.clientId, 'payout.created')];
    await dispatch(t.db, deliveries);

    await hooksA.waitFor((r) => r.summary().verified === 3);
    await hooksB.waitFor((r) => r.summary().verified === 1);
    await pause(300);
    expect(hooksA.deliveries.map((d) => d.webhookId).sort()).toEqual([...eventsA].sort());
    expect(hooksB.deliveries.map((d) => d.webhookId)).toEqual(eventsB);
    expect(hooksA.summary().rejected + hooksB.summary().rejected).toBe(0);
    const crossed = await t.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
      .select('d.id')
      .whereRef('e.biller_client_id', '!=', 'w.biller_client_id')
      .execute();
    expect(crossed).toEqual([]);

    // Not even an operator's redelivery crosses tenants.
    await expect(redeliverEvent(t.db, async () => {}, { eventId: eventsB[0]!, endpointId: endpointA.id })).rejects.toThrow(RedeliveryRefused);
    expect(await deliveriesOfEndpoint(t.db, endpointA.id)).toHaveLength(3);
    expect(await deliveriesOfEndpoint(t.db, endpointB.id)).toHaveLength(1);
  });
});

describe('dispatcher', () => {
  it('honours the event type filter and queues each delivery once however often it runs', async () => {
    const hooks = await receiver();
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks, { eventTypes: ['payout.created'] });
    await recordEvent(t.db, biller.clientId, 'mandate.created');
    const payoutEvent = await recordEvent(t.db, biller.clientId, 'payout.created');

    const runs = await Promise.all([dispatch(t.db, deliveries), dispatch(t.db, deliveries), dispatch(t.db, deliveries)]);
    expect(runs.reduce((sum, run) => sum + run.deliveries, 0)).toBeGreaterThanOrEqual(1);
    await dispatch(t.db, deliveries);
    await hooks.waitFor((r) => r.deliveries.length === 1);
    await pause(300);
    expect(hooks.deliveries.map((d) => d.webhookId)).toEqual([payoutEvent]);
    expect((await deliveriesOfEndpoint(t.db, endpoint.id)).map((d) => d.event_id)).toEqual([payoutEvent]);
    const undispatched = await t.db.selectFrom('events').select('id').where('biller_client_id', '=', biller.clientId).where('dispatched_at', 'is', null).execute();
    expect(undispatched).toEqual([]);
  });

  it('redelivers an event on request: a new attempt with the same webhook-id', async () => {
    const hooks = await receiver();
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    const eventId = await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);
    await until(
      () => deliveriesOfEndpoint(t.db, endpoint.id),
      (rows) => rows[0]?.status === 'succeeded',
    );

    const redelivered = await redeliverEvent(t.db, (ids) => enqueueDeliveries(deliveries, ids, { redelivery: true }), { eventId });
    expect(redelivered.map((r) => r.endpointId)).toEqual([endpoint.id]);
    await hooks.waitFor((r) => r.deliveries.length === 2);
    expect(hooks.deliveries.map((d) => [d.webhookId, d.verified])).toEqual([
      [eventId, true],
      [eventId, true],
    ]);
    await until(
      () => deliveriesOfEndpoint(t.db, endpoint.id),
      (rows) => rows[0]?.status === 'succeeded' && rows[0].attempts === 2,
    );
    await expect(redeliverEvent(t.db, async () => {}, { eventId: randomUUID() })).rejects.toThrow(/no event/);
  });
});

describe('secret rotation', () => {
  it('signs with both secrets during the grace period, then with the new one only', async () => {
    const hooks = await receiver();
    const biller = await newBiller(t);
    const endpoint = await registerEndpoint(t, biller.headers, hooks);
    const rotated = await injectJson(t.app, { method: 'POST', url: `/webhook-endpoints/${endpoint.id}/rotate-secret`, headers: biller.headers });
    const newSecret = rotated.json().webhook_endpoint.secret as string;

    // The receiver still knows only the old secret, and verifies.
    await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);
    await hooks.waitFor((r) => r.deliveries.length === 1);
    const during = hooks.deliveries[0]!;
    expect(during.verified).toBe(true);
    expect(during.signature!.split(' ')).toHaveLength(2);
    const headersOf = (d: ReceivedDelivery) => ({ 'webhook-id': d.webhookId!, 'webhook-timestamp': d.timestamp!, 'webhook-signature': d.signature! });
    expect(() => new Webhook(newSecret).verify(during.body, headersOf(during))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(during.body, headersOf(during))).not.toThrow();

    // Grace over: only the new secret signs.
    await t.db
      .updateTable('webhook_endpoints')
      .set({ previous_secret_expires_at: new Date(Date.now() - 1_000) })
      .where('id', '=', endpoint.id)
      .execute();
    hooks.addSecret(newSecret);
    await recordEvent(t.db, biller.clientId);
    await dispatch(t.db, deliveries);
    await hooks.waitFor((r) => r.deliveries.length === 2);
    const after = hooks.deliveries[1]!;
    expect(after.verified).toBe(true);
    expect(after.signature!.split(' ')).toHaveLength(1);
    expect(() => new Webhook(newSecret).verify(after.body, headersOf(after))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(after.body, headersOf(after))).toThrow();
  });
});

describe('private addresses at delivery time (WEBHOOK_ALLOW_PRIVATE=false)', () => {
  it('refuses to connect when the host now resolves to 127.0.0.1 (DNS rebinding), and records why', async () => {
    // A listener where the connection would land: it must never see one.
    let connections = 0;
    const trap: Server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    const port = (trap.address() as { port: number }).port;

    let answer = '93.184.216.34';
    const resolveHost: HostResolver = async () => [{ address: answer, family: 4 }];
    const biller = await newBiller(t);
    const endpoint = await createWebhookEndpoint(
      t.db,
      { billerClientId: biller.clientId, url: `https://rebind.biller.test:${port}/hooks`, description: null, eventTypes: [] },
      { allowPrivate: false, resolveHost },
      secretBoxFor(t.config),
      { endpointsPerBiller: t.config.WEBHOOK_ENDPOINTS_PER_BILLER },
    );
    answer = '127.0.0.1';

    const prefix = `${t.config.QUEUE_PREFIX}-strict`;
    const strictRuntime = { ...runtimeOf(t), config: { ...t.config, WEBHOOK_ALLOW_PRIVATE: false, QUEUE_PREFIX: prefix } };
    const strictHost = await composition.startWorkers(strictRuntime, { schedule: false, webhooks: { retryDelayScale: SCALE, resolveHost } });
    const strictDeliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), prefix);
    try {
      await recordEvent(t.db, biller.clientId);
      await dispatch(t.db, strictDeliveries);
      const attempts = await until(
        () => attemptsOfEndpoint(t.db, endpoint.id),
        (rows) => rows.length >= 2,
      );
      for (const attempt of attempts) {
        expect(attempt.status_code).toBeNull();
        expect(attempt.error).toBe(`refused: The host rebind.biller.test resolves to a special-purpose address (127.0.0.1: Loopback 127.0.0.0/8)`);
      }
      expect(connections).toBe(0);
      expect((await endpointRow(endpoint.id)).failing_since).toBeInstanceOf(Date);
    } finally {
      // The delivery would wait in the database for the next dispatcher of any host: the endpoint goes.
      await t.db.updateTable('webhook_endpoints').set({ deleted_at: new Date() }).where('id', '=', endpoint.id).execute();
      await strictHost.close();
      await strictDeliveries.obliterate({ force: true });
      await strictDeliveries.close();
      const keys = await t.redis.keys(`${prefix}:*`);
      if (keys.length > 0) await t.redis.del(...keys);
      await new Promise((resolve) => trap.close(resolve));
    }
  });
});

// Last in the file: from here on the dispatcher runs by itself.
describe('dispatch schedule', () => {
  it('runs the dispatcher every 2 seconds once the worker schedules are registered', async () => {
    const hooks = await receiver();
    const biller = await newBiller(t);
    await registerEndpoint(t, biller.headers, hooks);
    await scheduleRecurringJobs(runtimeOf(t));
    const schedulers = await dispatcher.getJobSchedulers();
    expect(schedulers).toEqual([expect.objectContaining({ key: 'dispatch-events', every: 2_000 })]);

    const eventId = await recordEvent(t.db, biller.clientId);
    await hooks.waitFor((r) => r.deliveries.length === 1, 6_000);
    expect(hooks.deliveries[0]!.webhookId).toBe(eventId);
  });
});
