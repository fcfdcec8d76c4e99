import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { EventType } from '../db/tables.ts';

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
 * hundreds at once), so they cost one round trip. Payment events written in the same statement as the
 * payments use insertPaymentEventsSql instead.
 */
function insertEventsSql(events: readonly NewEvent[]): RawBuilder<unknown> {
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
