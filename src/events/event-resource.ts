import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { EventsTable, EventType } from '../db/tables.ts';
import { pagingResponseSchema } from '../shared/paging.ts';
import type { EventPayload } from './outbox.ts';

export const EVENT_TYPES = [
  'mandate.created',
  'mandate.updated',
  'payment_request.created',
  'payment_request.updated',
  'payout.created',
  'employee.updated',
  'webhook_endpoint.disabled',
] as const satisfies readonly EventType[];

export const eventTypeSchema = z.enum(EVENT_TYPES).meta({ id: 'EventType' });

export const eventResponseSchema = z
  .object({
    id: z.uuid(),
    type: eventTypeSchema,
    created_at: z.iso.datetime(),
    /** The resource as the API showed it when the event happened, with its status and version. */
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });

export const eventEnvelopeSchema = z.object({ event: eventResponseSchema }).meta({ id: 'EventEnvelope' });
export const eventsPageSchema = z
  .object({ events: z.array(eventResponseSchema), paging: pagingResponseSchema })
  .meta({ id: 'GetEventsPagedResponse' });

/** Exactly the stored webhook payload, so catching up through the API sees what receivers got. */
export function toEventResource(row: Pick<Selectable<EventsTable>, 'payload'>): EventPayload {
  return row.payload as EventPayload;
}
