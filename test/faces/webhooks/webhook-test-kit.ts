import type { Queue } from 'bullmq';
import { expect } from 'vitest';
import type { Database } from '../../../src/platform/db/connection.ts';
import type { EventType } from '../../../src/platform/db/tables.ts';
import { recordEvents } from '../../../src/platform/events/outbox.ts';
import type { WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import { dispatchPendingEvents } from '../../../src/faces/webhooks/webhook-dispatch-service.ts';
import { enqueueAdmitted } from '../../../src/faces/webhooks/webhook-jobs.ts';
import { createBiller } from '../../support/factories.ts';
import { authHeaders, injectJson, type TestApp } from '../../support/test-app.ts';

/** Waits for a condition that workers make true in the background. */
export async function until<T>(probe: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function newBiller(t: TestApp) {
  const credentials = await createBiller(t.db);
  return { clientId: credentials.clientId, headers: await authHeaders(t.app, credentials) };
}

/** Registers an endpoint through the API and teaches the receiver its secret. */
export async function registerEndpoint(
  t: TestApp,
  headers: Record<string, string>,
  receiver: WebhookReceiver,
  options: { path?: string; eventTypes?: EventType[] } = {},
): Promise<{ id: string; secret: string }> {
  const response = await injectJson(t.app, {
    method: 'POST',
    url: '/webhook-endpoints',
    headers,
    body: { url: `${receiver.url}${options.path ?? '/hooks'}`, ...(options.eventTypes ? { event_types: options.eventTypes } : {}) },
  });
  expect(response.statusCode, response.body).toBe(201);
  const { id, secret } = response.json().webhook_endpoint as { id: string; secret: string };
  receiver.addSecret(secret);
  return { id, secret };
}

/** Writes one outbox event (as a state change would) and returns its id. */
export async function recordEvent(db: Database, billerClientId: string, type: EventType = 'mandate.updated'): Promise<string> {
  const resourceId = crypto.randomUUID();
  await recordEvents(db, [{ type, billerClientId, resourceType: type.split('.')[0]!, resourceId, data: { id: resourceId, status: 'active', version: 3 } }]);
  const row = await db.selectFrom('events').select('id').where('resource_id', '=', resourceId).executeTakeFirstOrThrow();
  return row.id;
}

/** One dispatcher run: events into deliveries, and every biller's due backlog admitted to `deliveries`. */
export function dispatch(db: Database, deliveries: Queue, options: { queuedPerBiller?: number } = {}) {
  return dispatchPendingEvents(db, (admitted) => enqueueAdmitted(deliveries, admitted), options.queuedPerBiller === undefined ? {} : { perBiller: options.queuedPerBiller });
}

export async function attemptsOfEndpoint(db: Database, endpointId: string) {
  return db
    .selectFrom('webhook_delivery_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select(['d.event_id', 'a.attempt_number', 'a.status_code', 'a.error', 'a.response_snippet', 'a.latency_ms'])
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('a.attempted_at')
    .orderBy('a.attempt_number')
    .execute();
}

export async function deliveriesOfEndpoint(db: Database, endpointId: string) {
  return db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).orderBy('created_at').execute();
}
