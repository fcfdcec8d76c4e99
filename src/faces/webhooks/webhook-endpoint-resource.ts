import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { WebhookEndpointsTable } from '../../platform/db/tables.ts';
import { eventTypeSchema } from '../../platform/events/event-resource.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';

export const webhookEndpointStatusSchema = z.enum(['enabled', 'disabled']).meta({
  id: 'WebhookEndpointStatus',
  description: '`disabled` once deliveries stopped (see `disabled_reason`); otherwise `enabled`.',
  example: 'enabled',
});

/** The example every webhook endpoint view of /openapi.json shows. */
const webhookEndpointExample = {
  id: exampleIds.webhookEndpoint,
  url: 'https://hooks.northwind-lending.example/deductions',
  description: 'Collections and payouts',
  event_types: ['payment_request.updated', 'payout.created'],
  status: 'enabled',
  disabled_reason: null,
  failing_since: null,
  consecutive_failures: 0,
  deliveries_paused_until: null,
  previous_secret_expires_at: null,
  created_at: exampleInstants.created,
};
const webhookSecretExample = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

export const webhookEndpointResponseSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    description: z.string().nullable(),
    /** The event types delivered here; empty means every type. */
    event_types: z.array(eventTypeSchema),
    status: webhookEndpointStatusSchema,
    /** Why deliveries stopped: the receiver answered 410 Gone, or it kept failing for 5 days. */
    disabled_reason: z.string().nullable(),
    /** Start of the current run of failed attempts; null once an attempt succeeds. */
    failing_since: z.iso.datetime().nullable(),
    consecutive_failures: z.int().min(0).meta({ description: 'Failed delivery attempts since the last success.' }),
    deliveries_paused_until: z.iso
      .datetime()
      .nullable()
      .meta({
        description:
          'Set while deliveries to the endpoint wait (its circuit breaker is open): after 5 failed attempts in a row they wait 1 minute, ' +
          'then one delivery is sent as a probe; its success resumes the others, its failure doubles the wait (up to an hour). ' +
          'Waiting deliveries keep their place in the retry schedule. Null while deliveries go out.',
      }),
    /** While set, the secret replaced by the last rotation still signs too (until this instant). */
    previous_secret_expires_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({
    id: 'WebhookEndpoint',
    description: "A URL that receives the caller's events, signed with the endpoint's secret (never shown here).",
    example: webhookEndpointExample,
  });

/** Only the answers to creation and rotation carry the secret; it is never shown again. */
export const webhookEndpointWithSecretSchema = webhookEndpointResponseSchema.extend({ secret: z.string().startsWith('whsec_') }).meta({
  id: 'WebhookEndpointWithSecret',
  description: 'A webhook endpoint with its signing secret, shown only in the answer that created or rotated it.',
  example: { ...webhookEndpointExample, secret: webhookSecretExample },
});

export type WebhookEndpointResource = z.infer<typeof webhookEndpointResponseSchema>;

export const webhookEndpointEnvelopeSchema = z.object({ webhook_endpoint: webhookEndpointResponseSchema }).meta({
  id: 'WebhookEndpointEnvelope',
  description: 'One webhook endpoint.',
  example: { webhook_endpoint: webhookEndpointExample },
});
export const webhookEndpointSecretEnvelopeSchema = z.object({ webhook_endpoint: webhookEndpointWithSecretSchema }).meta({
  id: 'WebhookEndpointSecretEnvelope',
  description: 'A webhook endpoint with its signing secret, shown this once.',
  example: { webhook_endpoint: { ...webhookEndpointExample, secret: webhookSecretExample } },
});
export const webhookEndpointsPageSchema = z.object({ webhook_endpoints: z.array(webhookEndpointResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'ListWebhookEndpointsResponse',
  description: 'A page of webhook endpoints, newest first.',
  example: { webhook_endpoints: [webhookEndpointExample], paging: pagingExample },
});

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

export function toWebhookEndpointResource(row: WebhookEndpointRow, now = new Date()): WebhookEndpointResource {
  const graceEnds = row.previous_secret_expires_at;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: row.event_types as WebhookEndpointResource['event_types'],
    status: row.status,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since ? isoInstant(row.failing_since) : null,
    consecutive_failures: row.consecutive_failures,
    deliveries_paused_until: row.circuit_open_until && row.circuit_open_until.getTime() > now.getTime() ? isoInstant(row.circuit_open_until) : null,
    previous_secret_expires_at: graceEnds && graceEnds.getTime() > now.getTime() ? isoInstant(graceEnds) : null,
    created_at: isoInstant(row.created_at),
  };
}
