import { z } from 'zod';
import { mandateResponseSchema } from '../../collections/mandates/mandate-resource.ts';
import { paymentResponseSchema } from '../../collections/payments/payment-resource.ts';
import { scheduleResponseSchema } from '../../collections/schedules/schedule-resource.ts';
import { employeeUpdatePayloadSchema } from '../../directory/payrolls/employee-resource.ts';
import type { EventType } from '../../platform/db/tables.ts';
import { EVENT_TYPES } from '../../platform/events/event-resource.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { remittanceNoticeSchema } from '../../settlement/cash/remittance-service.ts';
import { payoutResponseSchema } from '../../settlement/payouts/payout-resource.ts';
import { webhookEndpointResponseSchema } from './webhook-endpoint-resource.ts';

// Every event is one envelope (id, type, created_at) around the resource it is about, exactly as the
// API showed that resource then. The interface document names the payloads of the mandate, payment
// request, payout and employee events; the others follow the same pattern. Each family is one schema
// with its event types as an enum, so GET /events and every webhook are typed by the same schemas.

function exampleOf(schema: z.ZodType): unknown {
  return (z.globalRegistry.get(schema) as { example?: unknown } | undefined)?.example;
}

function webhookPayload<const Types extends readonly [EventType, ...EventType[]], Data extends z.ZodType>(
  id: string,
  types: Types,
  data: Data,
  description: string,
  example: { type: Types[number]; data?: z.infer<Data> },
) {
  return z
    .object({
      id: z.uuid().meta({ description: 'The event id: also the `webhook-id` header of every delivery of it, so a receiver can drop a repeat.' }),
      type: z.enum(types),
      created_at: z.iso.datetime(),
      data,
    })
    .meta({
      id,
      description,
      example: { id: exampleIds.event, type: example.type, created_at: exampleInstants.updated, data: example.data ?? exampleOf(data) },
    });
}

export const webhookMandatePayloadSchema = webhookPayload(
  'WebhookMandatePayload',
  ['mandate.created', 'mandate.updated'],
  mandateResponseSchema,
  'A mandate was created, or changed (enabled by payroll, moved with its employee, revoked, ended): `data` is the mandate as GET /mandates/{mandate_id} showed it then.',
  { type: 'mandate.updated' },
);

export const webhookPaymentRequestPayloadSchema = webhookPayload(
  'WebhookPaymentRequestPayload',
  ['payment_request.created', 'payment_request.updated'],
  paymentResponseSchema,
  'A payment request was created, or changed (instructed, collected in full or in part, failed, cancelled, paid out): `data` is the payment request as GET /payments/{payment_id} showed it then.',
  { type: 'payment_request.updated' },
);

export const webhookPayoutPayloadSchema = webhookPayload(
  'WebhookPayoutPayload',
  ['payout.created'],
  payoutResponseSchema,
  'A payout to the biller was made: `data` is the payout with its items, as GET /payouts/{payout_id} shows it.',
  { type: 'payout.created' },
);

export const webhookEmployeeUpdatePayloadSchema = webhookPayload(
  'WebhookEmployeeUpdatePayload',
  ['employee.updated'],
  employeeUpdatePayloadSchema,
  "Payroll changed an employment the biller holds a live mandate on (status, dates, contract, salary): `data` is the interface document's Employee Update Payload, the employment without contact details or identifiers.",
  { type: 'employee.updated' },
);

export const webhookSchedulePayloadSchema = webhookPayload(
  'WebhookSchedulePayload',
  ['schedule.updated'],
  scheduleResponseSchema,
  'A schedule changed status (it settled, or was cancelled): `data` is the schedule with its instalments as GET /schedules/{schedule_id} showed it then.',
  { type: 'schedule.updated' },
);

export const webhookRemittancePayloadSchema = webhookPayload(
  'WebhookRemittancePayload',
  ['remittance.received', 'remittance.overdue', 'remittance.reversed'],
  remittanceNoticeSchema,
  "The employer's remittance for a payroll pay date the biller's collections travel in was received, went overdue, or had a credit reversed by the bank: `data` says which pay date and its status, never the employer's amounts.",
  { type: 'remittance.received' },
);

export const webhookEndpointPayloadSchema = webhookPayload(
  'WebhookEndpointPayload',
  ['webhook_endpoint.disabled'],
  webhookEndpointResponseSchema,
  "One of the biller's webhook endpoints was disabled after failing for too long: `data` is the endpoint with the reason. It is delivered to the biller's other endpoints and kept for GET /events.",
  { type: 'webhook_endpoint.disabled' },
);

const payloadFamilies = [
  webhookMandatePayloadSchema,
  webhookPaymentRequestPayloadSchema,
  webhookPayoutPayloadSchema,
  webhookEmployeeUpdatePayloadSchema,
  webhookSchedulePayloadSchema,
  webhookRemittancePayloadSchema,
  webhookEndpointPayloadSchema,
] as const;

/** One event of any type, as GET /events answers it and as its webhook delivered it. */
export const eventResponseSchema = z.discriminatedUnion('type', payloadFamilies).meta({
  id: 'Event',
  description: "Something that happened to one of the caller's resources: exactly the payload its webhook delivery carried. `type` says which payload it is.",
  example: exampleOf(webhookPaymentRequestPayloadSchema),
});

export type WebhookEvent = z.infer<typeof eventResponseSchema>;

export const eventEnvelopeSchema = z
  .object({ event: eventResponseSchema })
  .meta({ id: 'EventEnvelope', description: 'One event.', example: { event: exampleOf(webhookPaymentRequestPayloadSchema) } });

export const eventsPageSchema = z.object({ events: z.array(eventResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'GetEventsPagedResponse',
  description: 'A page of events, newest first.',
  example: { events: [exampleOf(webhookPaymentRequestPayloadSchema)], paging: pagingExample },
});

/** What /openapi.json publishes under `webhooks` for one event type. */
export interface PublishedWebhook {
  type: EventType;
  summary: string;
  payload: z.ZodType;
  example: unknown;
}

/** An example's resource as it would be at this event: its family's example with what the event changed. */
function changed(schema: z.ZodType, changes: Record<string, unknown>): Record<string, unknown> {
  return { ...(exampleOf(schema) as Record<string, unknown>), ...changes };
}

const sent = { created: exampleInstants.created, updated: exampleInstants.updated } as const;

/**
 * Each event type's summary and the data its example carries: the resource as it stands at that
 * event (a mandate is created pending enablement, a payout is created pending, an endpoint is
 * disabled...), so the reference never shows an event with data it could not carry.
 */
const eventExamples: Record<EventType, { summary: string; data: unknown }> = {
  'mandate.created': {
    summary: 'A mandate was created',
    data: changed(mandateResponseSchema, { status: 'pending_enablement', version: 1, updated_at: sent.created }),
  },
  'mandate.updated': { summary: 'A mandate changed', data: exampleOf(mandateResponseSchema) },
  'payment_request.created': { summary: 'A payment request was created', data: exampleOf(paymentResponseSchema) },
  'payment_request.updated': {
    summary: 'A payment request changed',
    data: changed(paymentResponseSchema, { status: 'collected', collected_amount: 2500, attempts: 1, version: 3, updated_at: sent.updated }),
  },
  'payout.created': {
    summary: 'A payout was made',
    data: changed(payoutResponseSchema, { status: 'pending', paid_at: null, version: 1 }),
  },
  'employee.updated': { summary: 'An employment changed', data: exampleOf(employeeUpdatePayloadSchema) },
  'schedule.updated': {
    summary: 'A schedule changed status',
    data: (() => {
      const schedule = exampleOf(scheduleResponseSchema) as { instalments: Array<Record<string, unknown>> };
      return changed(scheduleResponseSchema, {
        status: 'completed',
        status_reason: 'all_instalments_collected',
        version: 2,
        updated_at: sent.updated,
        instalments: schedule.instalments.map((instalment) => ({ ...instalment, status: 'collected' })),
        expected_payments: [],
      });
    })(),
  },
  'webhook_endpoint.disabled': {
    summary: 'A webhook endpoint was disabled',
    data: changed(webhookEndpointResponseSchema, {
      status: 'disabled',
      disabled_reason: 'the receiver answered 410 Gone',
      failing_since: sent.created,
      consecutive_failures: 1,
    }),
  },
  'remittance.received': { summary: 'A remittance was received', data: changed(remittanceNoticeSchema, { status: 'received' }) },
  'remittance.overdue': { summary: 'A remittance is overdue', data: changed(remittanceNoticeSchema, { status: 'late' }) },
  'remittance.reversed': { summary: 'A remittance credit was reversed', data: changed(remittanceNoticeSchema, { status: 'shortfall' }) },
};

/** Every event type with the payload schema its deliveries carry, in EVENT_TYPES order; each example has an id of its own. */
export const publishedWebhooks: readonly PublishedWebhook[] = EVENT_TYPES.map((type, index) => {
  const payload = payloadFamilies.find((family) => (family.shape.type.options as readonly string[]).includes(type));
  if (!payload) throw new Error(`event type ${type} has no webhook payload schema`);
  const { summary, data } = eventExamples[type];
  const id = `${exampleIds.event.slice(0, -2)}${String(index + 20).padStart(2, '0')}`;
  return { type, summary, payload, example: { id, type, created_at: sent.updated, data } };
});

/** The payload schema of an event type, to hold what is delivered to what is published. */
export function webhookPayloadSchemaOf(type: EventType): z.ZodType {
  return publishedWebhooks.find((webhook) => webhook.type === type)!.payload;
}
