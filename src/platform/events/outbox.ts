import type { Executor } from '../db/connection.ts';
import type { EventType } from '../db/tables.ts';
import { timeOrderedUuid } from '../shared/time-ordered-uuid.ts';
import { insertEvents, type NewEvent } from './events-repository.ts';

export interface EventPayload {
  id: string;
  type: EventType;
  created_at: string;
  data: unknown;
}

export interface EventToRecord {
  type: EventType;
  billerClientId: string;
  resourceType: string;
  resourceId: string;
  /** The resource snapshot (with status and version) as the API would show it. */
  data: unknown;
}

/**
 * Builds the webhook envelope once, so the stored payload is exactly what receivers will get. The id is
 * time-ordered, like those of the events built in SQL (insertPaymentUpdatedEvents).
 */
export function buildEvent(event: EventToRecord, now = new Date()): NewEvent {
  const id = timeOrderedUuid(now.getTime());
  const payload: EventPayload = { id, type: event.type, created_at: now.toISOString(), data: event.data };
  return { id, type: event.type, billerClientId: event.billerClientId, resourceType: event.resourceType, resourceId: event.resourceId, payload, createdAt: now };
}

/**
 * Writes events through the caller's executor: pass the transaction that makes the change, so the
 * change and its event commit (or vanish) together.
 */
export async function recordEvents(trx: Executor, events: readonly EventToRecord[]): Promise<void> {
  const now = new Date();
  await insertEvents(
    trx,
    events.map((event) => buildEvent(event, now)),
  );
}
