import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { EventType } from '../db/tables.ts';
import type { PagingQuery } from '../shared/paging.ts';
import { applyPaging } from '../db/keyset-paging.ts';
import { eventPayloadSql } from '../payments/payment-event-repository.ts';

export interface NewEvent {
  id: string;
  type: EventType;
  billerClientId: string;
  resourceType: string;
  resourceId: string;
  payload: unknown;
  createdAt: Date;
}

/**
 * `insert into events` of any number of events through one parameter (a lock or a cascade writes
 * hundreds at once): a statement of its own (insertEvents) or a WITH clause of the statement that
 * makes the change, so the change and its events cost one round trip.
 */
export function insertEventsSql(events: readonly NewEvent[]): RawBuilder<unknown> {
  const rows = events.map((event) => ({
    id: event.id,
    type: event.type,
    biller_client_id: event.billerClientId,
    resource_type: event.resourceType,
    resource_id: event.resourceId,
    payload: event.payload,
    created_at: event.createdAt.toISOString(),
  }));
  return sql`
    insert into events (id, type, biller_client_id, resource_type, resource_id, payload, created_at)
    select e.id, e.type, e.biller_client_id, e.resource_type, e.resource_id, e.payload, e.created_at
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as e(
      id uuid, type text, biller_client_id uuid, resource_type text, resource_id uuid, payload jsonb, created_at timestamptz)
    order by e.created_at
  `;
}

export async function insertEvents(db: Executor, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await insertEventsSql(events).execute(db);
}

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
  return db
    .selectFrom('events')
    .select(eventSelection)
    .where('id', '=', eventId)
    .where('biller_client_id', '=', billerClientId)
    .executeTakeFirst();
}

export async function listEvents(
  db: Executor,
  billerClientId: string,
  filters: { type?: string | undefined; resourceId?: string | undefined },
  paging: PagingQuery,
) {
  let query = db.selectFrom('events').select(eventSelection).where('biller_client_id', '=', billerClientId);
  if (filters.type) query = query.where('type', '=', filters.type as EventType);
  if (filters.resourceId) query = query.where('resource_id', '=', filters.resourceId);
  return applyPaging(query, 'events', paging).execute();
}
