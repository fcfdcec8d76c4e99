import type { Executor } from '../db/connection.ts';
import type { EventType } from '../db/tables.ts';
import type { PagingQuery } from '../shared/paging.ts';
import { applyPaging } from '../shared/paging.ts';

export interface NewEvent {
  id: string;
  type: EventType;
  billerClientId: string;
  resourceType: string;
  resourceId: string;
  payload: unknown;
  createdAt: Date;
}

export async function insertEvents(db: Executor, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('events')
    .values(
      events.map((event) => ({
        id: event.id,
        type: event.type,
        biller_client_id: event.billerClientId,
        resource_type: event.resourceType,
        resource_id: event.resourceId,
        payload: JSON.stringify(event.payload),
        created_at: event.createdAt as never,
      })),
    )
    .execute();
}

export async function findEvent(db: Executor, billerClientId: string, eventId: string) {
  return db
    .selectFrom('events')
    .selectAll()
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
  let query = db.selectFrom('events').selectAll().where('biller_client_id', '=', billerClientId);
  if (filters.type) query = query.where('type', '=', filters.type as EventType);
  if (filters.resourceId) query = query.where('resource_id', '=', filters.resourceId);
  return applyPaging(query, 'events', paging).execute();
}
