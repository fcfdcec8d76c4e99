import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database } from '../../platform/db/connection.ts';
import { admitDueDeliveries, type AdmittedEnqueuer } from './webhook-admission.ts';
import {
  findEndpointById,
  findEventById,
  insertDeliveriesForEvents,
  listEndpointsForEvent,
  rowLockUndispatchedEvents,
  markEventsDispatched,
  reopenDelivery,
} from './webhook-repository.ts';

export const DISPATCH_BATCH_SIZE = 500;
/** Bounds one dispatcher run; whatever is left is the next run's (two seconds later). */
const MAX_BATCHES_PER_RUN = 20;

/** Queues jobs for deliveries outside admission (an operator's redelivery): see enqueueDeliveries. */
export type DeliveryEnqueuer = (deliveryIds: string[]) => Promise<void>;

export interface DispatchSummary {
  events: number;
  /** Deliveries created. */
  deliveries: number;
  /** Deliveries admitted to the queue (any biller's backlog that was due, not only these events'). */
  admitted: number;
}

export interface DispatchOptions {
  /** WEBHOOK_QUEUED_PER_BILLER. */
  perBiller?: number;
  batchSize?: number;
}

/**
 * Turns outbox events into deliveries, oldest first, and marks the events dispatched in the same
 * transaction: the deliveries wait in their billers' backlogs in the database, so nothing is lost
 * between the two, and the unique (event, endpoint) rows make a repeated batch a no-op. Then admits
 * every biller's due backlog, a share per biller (webhook-admission.ts): this run's deliveries, and
 * retries now due, endpoints whose circuit reopened, anything a lost wake-up left behind.
 */
export async function dispatchPendingEvents(db: Database, enqueue: AdmittedEnqueuer, options: DispatchOptions = {}): Promise<DispatchSummary> {
  const batchSize = options.batchSize ?? DISPATCH_BATCH_SIZE;
  const summary: DispatchSummary = { events: 0, deliveries: 0, admitted: 0 };
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch += 1) {
    const { events, deliveries } = await db.transaction().execute(async (trx) => {
      const ids = (await rowLockUndispatchedEvents(trx, batchSize)).map((event) => event.id);
      const inserted = await insertDeliveriesForEvents(trx, ids);
      await markEventsDispatched(trx, ids);
      return { events: ids.length, deliveries: inserted };
    });
    summary.events += events;
    summary.deliveries += deliveries;
    if (events < batchSize) break;
  }
  const round = await admitDueDeliveries(db, enqueue, options.perBiller === undefined ? {} : { perBiller: options.perBiller });
  summary.admitted = round.admitted.length;
  return summary;
}

export class RedeliveryRefused extends Error {
  override readonly name = 'RedeliveryRefused';
}

export interface Redelivery {
  deliveryId: string;
  endpointId: string;
  url: string;
}

/**
 * Sends an event again: to one endpoint, or to every enabled endpoint of its biller that takes its
 * type (including endpoints registered after it happened). Each gets a fresh run of the retry
 * schedule; the webhook-id stays the event id, so receivers that deduplicate see a repeat. The
 * reopened deliveries are first in their biller's backlog; `enqueue` queues a job for each, which
 * takes it if the biller's share of the queue has room (otherwise it goes out in its biller's turn).
 */
export async function redeliverEvent(
  db: Database,
  enqueue: DeliveryEnqueuer,
  request: {
    eventId: string;
    endpointId?: string | undefined;
    /** Who asked, recorded in the audit log with the reopened deliveries (the console records; the CLI's shell user does not). */
    actor?: Actor | undefined;
  },
): Promise<Redelivery[]> {
  const event = await findEventById(db, request.eventId);
  if (!event) throw new RedeliveryRefused(`There is no event ${request.eventId}`);

  let endpoints;
  if (request.endpointId) {
    const endpoint = await findEndpointById(db, request.endpointId);
    // Another biller's endpoint must never receive this biller's event, even at an operator's request.
    if (!endpoint || endpoint.biller_client_id !== event.biller_client_id) {
      throw new RedeliveryRefused(`Endpoint ${request.endpointId} does not belong to the biller of event ${event.id}`);
    }
    if (endpoint.status !== 'enabled') {
      throw new RedeliveryRefused(`Endpoint ${endpoint.id} is disabled (${endpoint.disabled_reason ?? 'no reason recorded'})`);
    }
    if (endpoint.event_types.length > 0 && !endpoint.event_types.includes(event.type)) {
      throw new RedeliveryRefused(`Endpoint ${endpoint.id} does not take ${event.type} events`);
    }
    endpoints = [endpoint];
  } else {
    endpoints = await listEndpointsForEvent(db, event.biller_client_id, event.type);
    if (endpoints.length === 0) throw new RedeliveryRefused(`No enabled endpoint of the biller of event ${event.id} takes ${event.type} events`);
  }

  const redeliveries = await db.transaction().execute(async (trx) => {
    const reopened: Redelivery[] = [];
    for (const endpoint of endpoints) {
      reopened.push({ deliveryId: await reopenDelivery(trx, event.id, endpoint.id), endpointId: endpoint.id, url: endpoint.url });
    }
    if (request.actor) {
      await recordAction(trx, {
        actor: request.actor,
        action: 'webhook_delivery.redelivered',
        resourceType: 'event',
        resourceId: event.id,
        reason: null,
        after: { eventType: event.type, deliveries: reopened.map(({ deliveryId, endpointId }) => ({ deliveryId, endpointId })) },
      });
    }
    return reopened;
  });
  await enqueue(redeliveries.map((redelivery) => redelivery.deliveryId));
  return redeliveries;
}
