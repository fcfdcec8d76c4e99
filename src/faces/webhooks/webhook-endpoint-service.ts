import type { Executor } from '../../platform/db/connection.ts';
import type { EventType } from '../../platform/db/tables.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { pageOf, type PagingQuery } from '../../platform/shared/paging.ts';
import { toWebhookEndpointResource, type WebhookEndpointResource } from './webhook-endpoint-resource.ts';
import {
  countEndpoints,
  findEndpoint,
  insertEndpoint,
  advisoryLockBillerEndpoints,
  listEndpoints,
  rowLockAllEndpointSecrets,
  markEndpointDeleted,
  replaceEndpointSecret,
  updateEndpointSecrets,
} from './webhook-repository.ts';
import { generateWebhookSecret, SECRET_ROTATION_GRACE_MS } from './webhook-signature.ts';
import { resolveWebhookTarget, WebhookTargetRefused, type TargetPolicy } from './webhook-target.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import type { SecretBox } from '../../platform/shared/secret-box.ts';

export interface NewEndpointInput {
  billerClientId: string;
  url: string;
  description: string | null;
  eventTypes: readonly EventType[];
}

export type WebhookEndpointWithSecret = WebhookEndpointResource & { secret: string };

/** How endpoint secrets are stored: sealed (src/platform/shared/secret-box.ts); the plain secret is only ever in the answer. */
const SECRET_PURPOSE = 'webhook-endpoint-secret';

/** The secrets that sign a delivery now, opened from their sealed storage. */
export function openEndpointSecrets<E extends { secret: string; previous_secret: string | null }>(endpoint: E, secrets: SecretBox): E {
  return {
    ...endpoint,
    secret: secrets.open(endpoint.secret, SECRET_PURPOSE),
    previous_secret: endpoint.previous_secret === null ? null : secrets.open(endpoint.previous_secret, SECRET_PURPOSE),
  };
}

/** What one biller may register: WEBHOOK_ENDPOINTS_PER_BILLER. */
export interface EndpointLimits {
  endpointsPerBiller: number;
}

/**
 * The URL is checked (and its host resolved) now; every delivery checks it again. A biller has at
 * most `limits.endpointsPerBiller` endpoints (deleted ones do not count): each endpoint is one more
 * delivery of every event, so without a bound one biller could multiply its share of the delivery
 * workers at will. Run in a transaction, so the count and the insert hold the biller's advisory lock together.
 */
export async function createWebhookEndpoint(
  db: Executor,
  input: NewEndpointInput,
  policy: TargetPolicy,
  secrets: SecretBox,
  limits: EndpointLimits,
): Promise<WebhookEndpointWithSecret> {
  try {
    await resolveWebhookTarget(input.url, policy);
  } catch (error) {
    if (!(error instanceof WebhookTargetRefused)) throw error;
    throw new InvalidError('webhook-url-not-allowed', error.message, { errors: [{ pointer: '/url', detail: error.message }] });
  }
  await advisoryLockBillerEndpoints(db, input.billerClientId);
  const existing = await countEndpoints(db, input.billerClientId);
  if (existing >= limits.endpointsPerBiller) {
    throw new ConflictError(
      'webhook-endpoint-limit-reached',
      `A biller may have ${limits.endpointsPerBiller} webhook endpoints, and this one has ${existing}: delete one to register another`,
      { members: { webhook_endpoint_limit: limits.endpointsPerBiller } },
    );
  }
  const secret = generateWebhookSecret();
  const row = await insertEndpoint(db, { ...input, eventTypes: [...new Set(input.eventTypes)], secret: secrets.seal(secret, SECRET_PURPOSE) });
  return { ...toWebhookEndpointResource(row), secret };
}

export async function getWebhookEndpoint(db: Executor, billerClientId: string, endpointId: string): Promise<WebhookEndpointResource> {
  const row = isUuid(endpointId) ? await findEndpoint(db, billerClientId, endpointId) : undefined;
  if (!row) throw new NotFoundError(`Webhook endpoint ${endpointId}`);
  return toWebhookEndpointResource(row);
}

export async function listWebhookEndpoints(db: Executor, billerClientId: string, paging: PagingQuery) {
  const { items, paging: page } = pageOf(await listEndpoints(db, billerClientId, paging), paging);
  return { webhook_endpoints: items.map((row) => toWebhookEndpointResource(row)), paging: page };
}

/** Deliveries still queued for it are abandoned when their turn comes. */
export async function deleteWebhookEndpoint(db: Executor, billerClientId: string, endpointId: string): Promise<void> {
  const deleted = isUuid(endpointId) ? await markEndpointDeleted(db, billerClientId, endpointId) : undefined;
  if (!deleted) throw new NotFoundError(`Webhook endpoint ${endpointId}`);
}

/**
 * A new secret signs from now on; the one it replaces keeps signing beside it for 24 hours, so a
 * receiver can deploy the new secret without rejecting a single delivery in between.
 */
export async function rotateWebhookSecret(db: Executor, billerClientId: string, endpointId: string, secrets: SecretBox, now = new Date()): Promise<WebhookEndpointWithSecret> {
  const secret = generateWebhookSecret();
  const graceUntil = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS);
  const sealed = secrets.seal(secret, SECRET_PURPOSE);
  const row = isUuid(endpointId) ? await replaceEndpointSecret(db, billerClientId, endpointId, sealed, graceUntil) : undefined;
  if (!row) throw new NotFoundError(`Webhook endpoint ${endpointId}`);
  return { ...toWebhookEndpointResource(row, now), secret };
}

/**
 * Brings every stored endpoint secret under the current master key: plain text (stored before
 * secrets were encrypted) is sealed, a value sealed under an earlier key is re-wrapped. Returns how
 * many endpoints changed; a second run changes none.
 */
export async function resealWebhookSecrets(trx: Executor, secrets: SecretBox): Promise<number> {
  let changed = 0;
  for (const row of await rowLockAllEndpointSecrets(trx)) {
    const stale = secrets.needsResealing(row.secret) || (row.previous_secret !== null && secrets.needsResealing(row.previous_secret));
    if (!stale) continue;
    await updateEndpointSecrets(trx, row.id, {
      secret: secrets.reseal(row.secret, SECRET_PURPOSE),
      previous_secret: row.previous_secret === null ? null : secrets.reseal(row.previous_secret, SECRET_PURPOSE),
    });
    changed += 1;
  }
  return changed;
}
