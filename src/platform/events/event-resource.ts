import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { EventsTable, EventType } from '../db/tables.ts';
import { exampleIds, exampleInstants } from '../shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../shared/paging.ts';
import type { EventPayload } from './outbox.ts';

export const EVENT_TYPES = [
  'mandate.created',
  'mandate.updated',
  'payment_request.created',
  'payment_request.updated',
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

/** The example every event view of /openapi.json shows: a payment request that was collected. */
const eventExample = {
  id: exampleIds.event,
  type: 'payment_request.updated',
  created_at: '2026-11-28T03:10:41.225Z',
  data: {
    id: exampleIds.payment,
    mandate_id: exampleIds.mandate,
    schedule_id: null,
    instalment_number: null,
    status: 'collected',
    status_reason: null,
    amount: 2500,
    currency: 'GBP',
    collected_amount: 2500,
    paid_out_amount: 0,
    attempts: 1,
    due_date: '2026-11-30',
    target_pay_date: '2026-11-27',
    allow_post_due_date_deduction: false,
    metadata: { invoice: 'INV-2026-0042' },
    version: 3,
    created_at: exampleInstants.created,
    updated_at: '2026-11-28T03:10:41.225Z',
    cancelled_at: null,
  },
};

export const eventResponseSchema = z
  .object({
    id: z.uuid(),
    type: eventTypeSchema,
    created_at: z.iso.datetime(),
    /** The resource as the API showed it when the event happened, with its status and version. */
    data: z.record(z.string(), z.unknown()),
  })
  .meta({
    id: 'Event',
    description: "Something that happened to one of the caller's resources: exactly the payload its webhook delivery carried.",
    example: eventExample,
  });

export const eventEnvelopeSchema = z.object({ event: eventResponseSchema }).meta({ id: 'EventEnvelope', description: 'One event.', example: { event: eventExample } });
export const eventsPageSchema = z.object({ events: z.array(eventResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'GetEventsPagedResponse',
  description: 'A page of events, newest first.',
  example: { events: [eventExample], paging: pagingExample },
});

/** Exactly the stored webhook payload, so catching up through the API sees what receivers got. */
export function toEventResource(row: Pick<Selectable<EventsTable>, 'payload'>): EventPayload {
  return row.payload as EventPayload;
}
