import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { WebhookEndpointsTable } from '../db/tables.ts';
import { eventTypeSchema } from '../events/event-resource.ts';
import { pagingResponseSchema } from '../shared/paging.ts';
import { isoInstant } from '../shared/schemas.ts';

export const webhookEndpointStatusSchema = z.enum(['enabled', 'disabled']).meta({ id: 'WebhookEndpointStatus' });

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
    /** While set, the secret replaced by the last rotation still signs too (until this instant). */
    previous_secret_expires_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

/** Only the answers to creation and rotation carry the secret; it is never shown again. */
export const webhookEndpointWithSecretSchema = webhookEndpointResponseSchema
  .extend({ secret: z.string().startsWith('whsec_') })
  .meta({ id: 'WebhookEndpointWithSecret' });

export type WebhookEndpointResource = z.infer<typeof webhookEndpointResponseSchema>;

export const webhookEndpointEnvelopeSchema = z
  .object({ webhook_endpoint: webhookEndpointResponseSchema })
  .meta({ id: 'WebhookEndpointEnvelope' });
export const webhookEndpointSecretEnvelopeSchema = z
  .object({ webhook_endpoint: webhookEndpointWithSecretSchema })
  .meta({ id: 'WebhookEndpointSecretEnvelope' });
export const webhookEndpointsPageSchema = z
  .object({ webhook_endpoints: z.array(webhookEndpointResponseSchema), paging: pagingResponseSchema })
  .meta({ id: 'ListWebhookEndpointsResponse' });

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
    previous_secret_expires_at: graceEnds && graceEnds.getTime() > now.getTime() ? isoInstant(graceEnds) : null,
    created_at: isoInstant(row.created_at),
  };
}
