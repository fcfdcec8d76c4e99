import type { Executor } from '../../platform/db/connection.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { EventType } from '../../platform/db/tables.ts';
import { eventPayloadSql } from '../../collections/payments/payment-event-repository.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';

// Reading events as their webhooks carry them, for GET /events (a delivery reads its own event the
// same way, eventPayloadSql in webhook-repository.ts). Here rather than in src/platform/events, which payments
// write through: rendering a narrow payment event needs the payment's resource schema, and events
// importing payments would make the two folders import each other.

/** What a reader of events selects from `events`: its columns, with the payload rendered where stored narrow. */
export const eventSelection = [
  'id',
  'sequence',
  'type',
  'biller_client_id',
  'resource_type',
  'resource_id',
  'created_at',
  'dispatched_at',
  eventPayloadSql('events').as('payload'),
] as const;

export async function findEvent(db: Executor, billerClientId: string, eventId: string) {
  return db.selectFrom('events').select(eventSelection).where('id', '=', eventId).where('biller_client_id', '=', billerClientId).executeTakeFirst();
}

export async function listEvents(db: Executor, billerClientId: string, filters: { type?: string | undefined; resourceId?: string | undefined }, paging: PagingQuery) {
  let query = db.selectFrom('events').select(eventSelection).where('biller_client_id', '=', billerClientId);
  if (filters.type) query = query.where('type', '=', filters.type as EventType);
  if (filters.resourceId) query = query.where('resource_id', '=', filters.resourceId);
  return applyPaging(query, 'events', paging).execute();
}
