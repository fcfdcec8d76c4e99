import type { Config } from '../config/config.ts';
import type { Database, Executor } from '../db/connection.ts';
import { recordEvents } from '../events/outbox.ts';
import { queueNames, queueWorkers } from '../queue/job-catalogue.ts';
import { secretBoxFor, type SecretBox } from '../shared/secret-box.ts';
import { circuitAfterFailure, circuitSettings, circuitState, probeLeaseUntil, type CircuitSettings } from './webhook-circuit-breaker.ts';
import { DeliverySlots, waitDelayMs, type DeliveryWaiter } from './webhook-delivery-slots.ts';
import { toWebhookEndpointResource, type WebhookEndpointRow } from './webhook-endpoint-resource.ts';
import { openEndpointSecrets } from './webhook-endpoint-service.ts';
import {
  circuitOfRow,
  claimCircuitProbe,
  clearEndpointFailing,
  disableEndpoint,
  findDeliveryContext,
  lockEndpointCircuit,
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
  /** The endpoints' circuit breaker (webhook-circuit-breaker.ts); its timings scale with the retry schedule. */
  circuit: CircuitSettings;
  /** This process's delivery slots, shared fairly between billers (webhook-delivery-slots.ts): one per worker host. */
  slots: DeliverySlots;
}

/** `concurrency`: the delivery queue's, which the slots are shared out of (the job catalogue's unless a worker host says otherwise). */
export function webhookDeliverySettings(
  config: Config,
  overrides: Partial<WebhookDeliverySettings> & { concurrency?: number } = {},
): WebhookDeliverySettings {
  const { concurrency = queueWorkers[queueNames.webhookDeliveries].concurrency, ...settings } = overrides;
  return {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    secrets: secretBoxFor(config),
    resolveHost: systemResolver,
    timeoutMs: DELIVERY_TIMEOUT_MS,
    retryDelayScale: 1,
    random: Math.random,
    circuit: circuitSettings(settings.retryDelayScale ?? 1),
    slots: new DeliverySlots({ total: concurrency, perBiller: config.WEBHOOK_DELIVERIES_PER_BILLER }),
    ...settings,
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
  /** Nothing sent: the endpoint's circuit is open (or being probed), so the delivery waits until `until` or its success. */
  | { kind: 'postponed'; until: Date; reason: string }
  /** Nothing sent: the biller's share of the delivery slots is in use, so the delivery waits until `until` or a free slot. */
  | { kind: 'deferred'; until: Date; reason: string }
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

export interface AttemptOptions {
  now?: () => Date;
  /**
   * The queue job, to wake when a delivery that must wait (postponed, deferred) may go ahead. Without
   * one (a direct call) the outcome only says until when to wait.
   */
  waiter?: DeliveryWaiter;
}

/**
 * One attempt at one delivery: POST the event's stored payload, signed with the endpoint's current
 * secrets, to an address checked just now, then record the attempt and its consequences for the
 * endpoint in one transaction. The webhook-id is the event id, the same on every attempt.
 *
 * Before anything is sent, two things may make the delivery wait without spending an attempt:
 * the endpoint's open circuit (postponed), and the biller's share of this process's delivery slots
 * (deferred). The caller puts the job back in the queue until then; the waiter is woken sooner when
 * the endpoint answers another delivery, or a slot of the biller's frees.
 */
export async function attemptDelivery(
  db: Database,
  deliveryId: string,
  jobAttempt: JobAttempt,
  settings: WebhookDeliverySettings,
  options: AttemptOptions = {},
): Promise<DeliveryOutcome> {
  const now = options.now ?? (() => new Date());
  const { slots } = settings;
  const delivery = await findDeliveryContext(db, deliveryId);
  if (!delivery) return { kind: 'skipped', reason: 'no such delivery' };
  const { waiter } = options;
  // A job leaves a line once past what it waited for, so that no later wake moves it while it waits for its retry.
  const leaveLines = (lines: { billerId?: string; endpointId?: string }) => {
    if (waiter) slots.forget(waiter.key, lines);
  };
  const bothLines = { billerId: delivery.biller_client_id, endpointId: delivery.endpoint_id };
  if (delivery.delivery_status !== 'pending') {
    leaveLines(bothLines);
    return { kind: 'skipped', reason: `delivery already ${delivery.delivery_status}` };
  }
  if (delivery.endpoint_deleted_at !== null || delivery.endpoint_status !== 'enabled') {
    leaveLines(bothLines);
    await markDeliveryAbandoned(db, deliveryId);
    return { kind: 'skipped', reason: delivery.endpoint_deleted_at ? 'endpoint deleted' : 'endpoint disabled' };
  }

  const postpone = (until: Date, reason: string): DeliveryOutcome => {
    leaveLines({ billerId: delivery.biller_client_id });
    if (waiter) slots.waitForEndpoint(delivery.endpoint_id, waiter);
    return { kind: 'postponed', until, reason };
  };
  const circuit = circuitOfRow(delivery);
  const state = circuitState(circuit, now());
  if (state === 'open') return postpone(circuit.openUntil!, `the endpoint's circuit is open after ${circuit.consecutiveFailures} failed attempts in a row`);

  leaveLines({ endpointId: delivery.endpoint_id });
  const slot = slots.take(delivery.biller_client_id, waiter);
  if (!slot.granted) {
    return {
      kind: 'deferred',
      until: new Date(now().getTime() + waitDelayMs(slot.placeInLine, slots.rules.perBiller)),
      reason: `the biller already has ${slots.runningCount(delivery.biller_client_id)} deliveries running`,
    };
  }
  try {
    const probe = state === 'half_open';
    if (probe) {
      const leaseUntil = probeLeaseUntil(now(), settings.timeoutMs);
      if (!(await claimCircuitProbe(db, delivery.endpoint_id, circuit.openUntil!, leaseUntil))) {
        return postpone(leaseUntil, 'another delivery is probing the endpoint');
      }
    }
    const outcome = await sendAndRecord(db, delivery, jobAttempt, settings, { now, probe });
    if (probe || outcome.kind === 'succeeded') slots.wakeEndpointWaiters(delivery.endpoint_id);
    return outcome;
  } finally {
    slot.release();
  }
}

type DeliveryContext = NonNullable<Awaited<ReturnType<typeof findDeliveryContext>>>;

async function sendAndRecord(
  db: Database,
  delivery: DeliveryContext,
  jobAttempt: JobAttempt,
  settings: WebhookDeliverySettings,
  options: { now: () => Date; probe: boolean },
): Promise<DeliveryOutcome> {
  const { now } = options;
  const deliveryId = delivery.delivery_id;
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

    const circuit = await lockEndpointCircuit(trx, delivery.endpoint_id);
    await markEndpointFailing(trx, delivery.endpoint_id, circuitAfterFailure(circuit, { at: now(), probe: options.probe }, settings.circuit));
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
