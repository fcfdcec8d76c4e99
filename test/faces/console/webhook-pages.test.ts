import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { attemptDelivery, webhookDeliverySettings } from '../../../src/faces/webhooks/webhook-delivery-service.ts';
import { dispatchPendingEvents } from '../../../src/faces/webhooks/webhook-dispatch-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import { signedInAs } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { deliveriesOfEndpoint, newBiller, recordEvent, registerEndpoint } from '../webhooks/webhook-test-kit.ts';

let t: TestApp;
let deliveries: Queue;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestApp();
  deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await deliveries?.close();
  await t?.close();
});

async function receiver(status: number) {
  const started = await startWebhookReceiver({ respond: () => ({ status, body: status >= 500 ? 'down for maintenance' : '' }) });
  receivers.push(started);
  return started;
}

/**
 * A biller whose endpoint answered 500 to a real delivery attempt (through the delivery service, as
 * the worker makes it), so the endpoint is failing; no worker runs, so queued jobs stay waiting.
 */
async function failingEndpoint() {
  const biller = await newBiller(t);
  const failing = await receiver(500);
  const endpoint = await registerEndpoint(t, biller.headers, failing);
  const eventId = await recordEvent(t.db, biller.clientId, 'payout.created');
  await dispatchPendingEvents(t.db, async () => {});
  const [delivery] = await deliveriesOfEndpoint(t.db, endpoint.id);
  const outcome = await attemptDelivery(t.db, delivery!.id, { number: 1, of: 5 }, webhookDeliverySettings(t.config));
  expect(outcome).toMatchObject({ kind: 'failed', final: false });
  expect(failing.deliveries).toHaveLength(1);
  return { biller, endpoint, eventId, deliveryId: delivery!.id, url: `${failing.url}/hooks` };
}

async function queuedDeliveryIds(): Promise<string[]> {
  const jobs = await deliveries.getJobs(['waiting', 'delayed', 'prioritized']);
  return jobs.map((job) => (job.data as { deliveryId: string }).deliveryId);
}

describe('console webhooks page', () => {
  it('lists a failing endpoint with its failed attempt, and the endpoint page shows its attempts', async () => {
    const { endpoint, eventId, url } = await failingEndpoint();
    const attempt = await t.db
      .selectFrom('webhook_delivery_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(['a.status_code', 'a.latency_ms', 'a.attempted_at'])
      .where('d.endpoint_id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    expect(attempt.status_code).toBe(500);

    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const page = await browser.get('/console/webhooks');
    expect(page.statusCode).toBe(200);
    // The command that prints the same list (test/faces/cli/webhook-commands.test.ts runs it).
    expect(page.body).toContain('The same list on the command line: <code>deductions webhooks list</code>');
    const section = page.body.slice(page.body.indexOf(`id="endpoint-${endpoint.id}"`));
    expect(section).toContain(url);
    expect(section).toContain('failing</span> since');
    expect(section).toContain(`<code>${eventId}</code>`);
    expect(section).toMatch(/<td>1<\/td><td>500<\/td><td>—<\/td>/);
    expect(section).toContain(attempt.attempted_at.toISOString().slice(0, 19).replace('T', ' '));
    expect(section).toContain(`action="/console/webhooks/events/${eventId}/redeliver"`);

    const detail = await browser.get(`/console/webhooks/endpoints/${endpoint.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain(url);
    expect(detail.body).toMatch(/<td>1<\/td><td>500<\/td>/);
    expect(detail.body).toContain(`<input type="hidden" name="endpointId" value="${endpoint.id}">`);

    expect((await browser.get('/console/webhooks/endpoints/00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
  });

  it('lets an operator redeliver: deliveries reopened and created, jobs queued and the action audited', async () => {
    const { biller, endpoint, eventId, deliveryId } = await failingEndpoint();
    // Registered after the event: a redelivery to the biller's endpoints reaches it too, as a new delivery.
    const healthy = await receiver(204);
    const later = await registerEndpoint(t, biller.headers, healthy);
    expect(await deliveriesOfEndpoint(t.db, later.id)).toEqual([]);

    const { browser, user } = await signedInAs(t.app, t.db, 'operator');
    await browser.get('/console/webhooks');
    const answer = await browser.post(`/console/webhooks/events/${eventId}/redeliver`);
    expect(answer.statusCode, answer.body).toBe(303);
    expect(answer.headers.location).toBe('/console/webhooks');

    const [created] = await deliveriesOfEndpoint(t.db, later.id);
    expect(created).toMatchObject({ event_id: eventId, status: 'pending', attempts: 0 });
    const [reopened] = await deliveriesOfEndpoint(t.db, endpoint.id);
    expect(reopened).toMatchObject({ id: deliveryId, status: 'pending', next_attempt_at: null });
    expect(await queuedDeliveryIds()).toEqual(expect.arrayContaining([created!.id, deliveryId]));

    const audit = await t.db.selectFrom('audit_log').selectAll().where('action', '=', 'webhook_delivery.redelivered').where('resource_id', '=', eventId).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_kind: 'console', actor: user.email, resource_type: 'event' });
    expect(JSON.stringify(audit[0]!.after)).toContain(created!.id);

    // To one endpoint, from its page's form.
    const before = (await queuedDeliveryIds()).length;
    await browser.get(`/console/webhooks/endpoints/${later.id}`);
    const toOne = await browser.post(`/console/webhooks/events/${eventId}/redeliver`, { endpointId: later.id });
    expect(toOne.statusCode).toBe(303);
    expect(toOne.headers.location).toBe(`/console/webhooks/endpoints/${later.id}`);
    expect((await queuedDeliveryIds()).length).toBe(before + 1);
    const notice = await browser.get(`/console/webhooks/endpoints/${later.id}`);
    expect(notice.body).toContain(`Event ${eventId} queued again to ${healthy.url}/hooks.`);
  });

  it('shows viewers and finance no redeliver form and refuses their redelivery', async () => {
    const { endpoint, eventId } = await failingEndpoint();
    for (const role of ['viewer', 'finance'] as const) {
      const { browser } = await signedInAs(t.app, t.db, role);
      const page = await browser.get('/console/webhooks');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`<code>${eventId}</code>`);
      expect(page.body).not.toContain('/redeliver');
      const queuedBefore = await queuedDeliveryIds();
      const refused = await browser.post(`/console/webhooks/events/${eventId}/redeliver`, { endpointId: endpoint.id });
      expect(refused.statusCode).toBe(403);
      expect(await queuedDeliveryIds()).toEqual(queuedBefore);
      const [delivery] = await deliveriesOfEndpoint(t.db, endpoint.id);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
      expect(delivery!.next_attempt_at).not.toBeNull();
    }
    const audit = await t.db.selectFrom('audit_log').select('id').where('action', '=', 'webhook_delivery.redelivered').where('resource_id', '=', eventId).execute();
    expect(audit).toEqual([]);
  });

  it('explains a refused redelivery instead of queueing anything', async () => {
    const { eventId } = await failingEndpoint();
    const other = await failingEndpoint();
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const queuedBefore = await queuedDeliveryIds();
    const refused = await browser.post(`/console/webhooks/events/${eventId}/redeliver`, { endpointId: other.endpoint.id });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('does not belong to the biller');
    expect(refused.body).toContain('<title>The event was not delivered again · ');
    expect(await queuedDeliveryIds()).toEqual(queuedBefore);
  });
});
