import type { Config } from '../config/config.ts';
import type { Database, Executor } from '../db/connection.ts';
import { recordEvents } from '../events/outbox.ts';
import { secretBoxFor, type SecretBox } from '../shared/secret-box.ts';
import { toWebhookEndpointResource, type WebhookEndpointRow } from './webhook-endpoint-resource.ts';
import { openEndpointSecrets } from './webhook-endpoint-service.ts';
import {
  clearEndpointFailing,
  disableEndpoint,
  findDeliveryContext,
  markDeliveryAbandoned,
  markEndpointFailing,
  recordAttempt,
} from './webhook-repository.ts';
import { parseRetryAfter, retryDelayMs } from './webhook-retry-schedule.ts';
import { postWebhook, type WebhookPostResult } from './webhook-sender.ts';
import { signingSecrets, webhookHeaders } from './webhook-signature.ts';
import { resolveWebhookTarget, systemResolver, WebhookTargetRefused, type HostResolver } from './webhook-target.ts';

/** The receiver must answer within this; a slower answer counts as a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** An endpoint that has not taken a single delivery for this long is switched off. */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000;

export interface WebhookDeliverySettings {
  /** WEBHOOK_ALLOW_PRIVATE: http and private addresses allowed (local development and tests). */
  allowPrivate: boolean;
  resolveHost: HostResolver;
  timeoutMs: number;
  /** Multiplies the retry schedule; 1 in production. */
  retryDelayScale: number;
  random: () => number;
  /** Opens the endpoints' sealed signing secrets. */
  secrets: SecretBox;
}

export function webhookDeliverySettings(config: Config, overrides: Partial<WebhookDeliverySettings> = {}): WebhookDeliverySettings {
  return {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    secrets: secretBoxFor(config),
    resolveHost: systemResolver,
    timeoutMs: DELIVERY_TIMEOUT_MS,
    retryDelayScale: 1,
    random: Math.random,
    ...overrides,
  };
}

/** Where this attempt sits in its queue job: the retry schedule restarts with each (re)delivery job. */
export interface JobAttempt {
  /** 1 for the job's first attempt. */
  number: number;
  /** The job's last allowed attempt. */
  of: number;
}

export type DeliveryOutcome =
  | { kind: 'skipped'; reason: string }
  | { kind: 'succeeded'; attempt: number; statusCode: number }
  | { kind: 'endpoint_disabled'; attempt: number; reason: string }
  | { kind: 'failed'; attempt: number; detail: string; final: boolean; retryDelayMs: number | null };

export type AttemptVerdict = 'success' | 'gone' | 'failure';

/** Only a 2xx answer delivers; 410 Gone means the receiver wants no more; everything else is retried. */
export function attemptVerdict(statusCode: number | null): AttemptVerdict {
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return 'success';
  if (statusCode === 410) return 'gone';
  return 'failure';
}

/** The signal a retrying queue job carries: how long the schedule (and Retry-After) says to wait. */
export class WebhookAttemptFailed extends Error {
  override readonly name = 'WebhookAttemptFailed';
  readonly retryDelayMs: number | null;

  constructor(detail: string, retryDelayMs: number | null) {
    super(detail);
    this.retryDelayMs = retryDelayMs;
  }
}

async function disableWithEvent(trx: Executor, endpointId: string, reason: string, failingFor?: { milliseconds: number }) {
  const disabled: WebhookEndpointRow | undefined = await disableEndpoint(trx, endpointId, reason, failingFor);
  if (disabled) {
    await recordEvents(trx, [
      {
        type: 'webhook_endpoint.disabled',
        billerClientId: disabled.biller_client_id,
        resourceType: 'webhook_endpoint',
        resourceId: disabled.id,
        data: toWebhookEndpointResource(disabled),
      },
    ]);
  }
  return disabled;
}

function describe(result: WebhookPostResult): string {
  return result.statusCode === null ? (result.error ?? 'no answer') : `HTTP ${result.statusCode}`;
}

/**
 * One attempt at one delivery: POST the event's stored payload, signed with the endpoint's current
 * secrets, to an address checked just now, then record the attempt and its consequences for the
 * endpoint in one transaction. The webhook-id is the event id, the same on every attempt.
 */
export async function attemptDelivery(
  db: Database,
  deliveryId: string,
  jobAttempt: JobAttempt,
  settings: WebhookDeliverySettings,
  now: () => Date = () => new Date(),
): Promise<DeliveryOutcome> {
  const delivery = await findDeliveryContext(db, deliveryId);
  if (!delivery) return { kind: 'skipped', reason: 'no such delivery' };
  if (delivery.delivery_status !== 'pending') return { kind: 'skipped', reason: `delivery already ${delivery.delivery_status}` };
  if (delivery.endpoint_deleted_at !== null || delivery.endpoint_status !== 'enabled') {
    await markDeliveryAbandoned(db, deliveryId);
    return { kind: 'skipped', reason: delivery.endpoint_deleted_at ? 'endpoint deleted' : 'endpoint disabled' };
  }

  const sentAt = now();
  const body = JSON.stringify(delivery.payload);
  let result: WebhookPostResult;
  try {
    const target = await resolveWebhookTarget(delivery.url, settings);
    const headers = webhookHeaders(signingSecrets(openEndpointSecrets(delivery, settings.secrets), sentAt), delivery.event_id, sentAt, body);
    result = await postWebhook({ target, headers: { ...headers }, body, timeoutMs: settings.timeoutMs });
  } catch (error) {
    if (!(error instanceof WebhookTargetRefused)) throw error;
    result = { statusCode: null, retryAfter: undefined, responseSnippet: null, error: `refused: ${error.message}`, latencyMs: 0 };
  }

  const attempt = {
    deliveryId,
    statusCode: result.statusCode,
    latencyMs: result.latencyMs,
    responseSnippet: result.responseSnippet,
    error: result.error,
  };
  const verdict = attemptVerdict(result.statusCode);

  return db.transaction().execute(async (trx): Promise<DeliveryOutcome> => {
    if (verdict === 'success') {
      const number = await recordAttempt(trx, { ...attempt, deliveryStatus: 'succeeded', nextAttemptAt: null });
      await clearEndpointFailing(trx, delivery.endpoint_id);
      return { kind: 'succeeded', attempt: number, statusCode: result.statusCode! };
    }

    if (verdict === 'gone') {
      const reason = 'The receiver answered 410 Gone';
      const number = await recordAttempt(trx, { ...attempt, deliveryStatus: 'failed', nextAttemptAt: null });
      await disableWithEvent(trx, delivery.endpoint_id, reason);
      return { kind: 'endpoint_disabled', attempt: number, reason };
    }

    await markEndpointFailing(trx, delivery.endpoint_id);
    const reason = 'Every delivery failed for 5 days';
    const disabled = await disableWithEvent(trx, delivery.endpoint_id, reason, { milliseconds: DISABLE_AFTER_FAILING_MS });
    const final = disabled !== undefined || jobAttempt.number >= jobAttempt.of;
    const delay = final
      ? null
      : retryDelayMs({
          failedAttempt: jobAttempt.number,
          retryAfterMs: parseRetryAfter(result.retryAfter, sentAt),
          scale: settings.retryDelayScale,
          random: settings.random(),
        });
    const number = await recordAttempt(trx, {
      ...attempt,
      deliveryStatus: final ? 'failed' : 'pending',
      nextAttemptAt: delay === null ? null : new Date(sentAt.getTime() + delay),
    });
    if (disabled) return { kind: 'endpoint_disabled', attempt: number, reason };
    return { kind: 'failed', attempt: number, detail: describe(result), final, retryDelayMs: delay };
  });
}
