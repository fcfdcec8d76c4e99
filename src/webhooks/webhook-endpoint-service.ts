import type { Executor } from '../db/connection.ts';
import type { EventType } from '../db/tables.ts';
import { notFound, unprocessable } from '../http/problem.ts';
import { pageOf, type PagingQuery } from '../shared/paging.ts';
import { toWebhookEndpointResource, type WebhookEndpointResource } from './webhook-endpoint-resource.ts';
import {
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  markEndpointDeleted,
  replaceEndpointSecret,
} from './webhook-repository.ts';
import { generateWebhookSecret, SECRET_ROTATION_GRACE_MS } from './webhook-signature.ts';
import { resolveWebhookTarget, WebhookTargetRefused, type TargetPolicy } from './webhook-target.ts';
import { isUuid } from '../shared/schemas.ts';


export interface NewEndpointInput {
  billerClientId: string;
  url: string;
  description: string | null;
  eventTypes: readonly EventType[];
}

export type WebhookEndpointWithSecret = WebhookEndpointResource & { secret: string };

/** The URL is checked (and its host resolved) now; every delivery checks it again. */
export async function createWebhookEndpoint(db: Executor, input: NewEndpointInput, policy: TargetPolicy): Promise<WebhookEndpointWithSecret> {
  try {
    await resolveWebhookTarget(input.url, policy);
  } catch (error) {
    if (!(error instanceof WebhookTargetRefused)) throw error;
    throw unprocessable('webhook-url-not-allowed', error.message, [{ pointer: '/url', detail: error.message }]);
  }
  const secret = generateWebhookSecret();
  const row = await insertEndpoint(db, { ...input, eventTypes: [...new Set(input.eventTypes)], secret });
  return { ...toWebhookEndpointResource(row), secret };
}

export async function getWebhookEndpoint(db: Executor, billerClientId: string, endpointId: string): Promise<WebhookEndpointResource> {
  const row = isUuid(endpointId) ? await findEndpoint(db, billerClientId, endpointId) : undefined;
  if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
  return toWebhookEndpointResource(row);
}

export async function listWebhookEndpoints(db: Executor, billerClientId: string, paging: PagingQuery) {
  const { items, paging: page } = pageOf(await listEndpoints(db, billerClientId, paging), paging);
  return { webhook_endpoints: items.map((row) => toWebhookEndpointResource(row)), paging: page };
}

/** Deliveries still queued for it are abandoned when their turn comes. */
export async function deleteWebhookEndpoint(db: Executor, billerClientId: string, endpointId: string): Promise<void> {
  const deleted = isUuid(endpointId) ? await markEndpointDeleted(db, billerClientId, endpointId) : undefined;
  if (!deleted) throw notFound(`Webhook endpoint ${endpointId}`);
}

/**
 * A new secret signs from now on; the one it replaces keeps signing beside it for 24 hours, so a
 * receiver can deploy the new secret without rejecting a single delivery in between.
 */
export async function rotateWebhookSecret(
  db: Executor,
  billerClientId: string,
  endpointId: string,
  now = new Date(),
): Promise<WebhookEndpointWithSecret> {
  const secret = generateWebhookSecret();
  const graceUntil = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS);
  const row = isUuid(endpointId) ? await replaceEndpointSecret(db, billerClientId, endpointId, secret, graceUntil) : undefined;
  if (!row) throw notFound(`Webhook endpoint ${endpointId}`);
  return { ...toWebhookEndpointResource(row, now), secret };
}
