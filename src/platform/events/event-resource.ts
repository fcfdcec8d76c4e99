import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { EventsTable, EventType } from '../db/tables.ts';
import type { EventPayload } from './outbox.ts';

export const EVENT_TYPES = [
  'mandate.created',
  'mandate.updated',
  'payment_request.created',
  'payment_request.updated',
  'schedule.updated',
  'payout.created',
  'employee.updated',
  'webhook_endpoint.disabled',
  'remittance.received',
  'remittance.overdue',
  'remittance.reversed',
] as const satisfies readonly EventType[];

export const eventTypeSchema = z.enum(EVENT_TYPES).meta({
  id: 'EventType',
  description: 'What happened, as `<resource>.<change>`; the event `data` is the resource as the API showed it then.',
  example: 'payment_request.updated',
});

/** Exactly the stored webhook payload, so catching up through the API sees what receivers got. */
export function toEventResource(row: Pick<Selectable<EventsTable>, 'payload'>): EventPayload {
  return row.payload as EventPayload;
}
