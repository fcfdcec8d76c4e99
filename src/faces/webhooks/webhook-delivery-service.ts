import type { Config } from '../../platform/config/config.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { recordEvents } from '../../platform/events/outbox.ts';
import { queueNames, queueWorkers } from '../../platform/queue/job-catalogue.ts';
import { secretBoxFor, type SecretBox } from '../../platform/shared/secret-box.ts';
import { admitDeliveryToJob } from './webhook-admission.ts';
import { circuitAfterFailure, circuitSettings, circuitState, probeLeaseUntil, type CircuitSettings } from './webhook-circuit-breaker.ts';
import { DeliverySlots, waitDelayMs, type DeliveryWaiter } from './webhook-delivery-slots.ts';
import { toWebhookEndpointResource, type WebhookEndpointRow } from './webhook-endpoint-resource.ts';
import { openEndpointSecrets } from './webhook-endpoint-service.ts';
import {
  abandonBacklogOfRemovedEndpoints,
  circuitOfRow,
  claimCircuitProbe,
  clearEndpointFailing,
  disableEndpoint,
  findDeliveryContext,
  rowLockEndpointCircuit,
  markDeliveryAbandoned,
  markEndpointFailing,
  recordAttempt,
  releaseDelivery,
} from './webhook-repository.ts';
import { DELIVERY_ATTEMPTS, parseRetryAfter, retryDelayMs } from './webhook-retry-schedule.ts';
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
  /** WEBHOOK_QUEUED_PER_BILLER: deliveries of one biller admitted to the queue at once (webhook-admission.ts). */
  queuedPerBiller: number;
}

/** `concurrency`: the delivery queue's, which the slots are shared out of (the job catalogue's unless a worker host says otherwise). */
export function webhookDeliverySettings(config: Config, overrides: Partial<WebhookDeliverySettings> & { concurrency?: number } = {}): WebhookDeliverySettings {
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
    queuedPerBiller: config.WEBHOOK_QUEUED_PER_BILLER,
    ...settings,
  };
}

/**
 * Where an attempt sits in its delivery's run of the retry schedule (a redelivery starts a new run).
 * The delivery's row counts it; a direct call may say it instead.
 */
export interface JobAttempt {
  /** 1 for the run's first attempt. */
  number: number;
  /** The run's last allowed attempt. */
  of: number;
}

export type DeliveryOutcome = (
  | { kind: 'skipped'; reason: string }
  /** Nothing sent: the endpoint's circuit is open (or being probed): the delivery waits in the backlog until `until` or the probe's success. */
  | { kind: 'postponed'; until: Date; reason: string }
  /** Nothing sent: the biller's share of this process's delivery slots is in use: the job waits, holding its delivery, until `until` or a free slot. */
  | { kind: 'deferred'; until: Date; reason: string }
  | { kind: 'succeeded'; attempt: number; statusCode: number }
  | { kind: 'endpoint_disabled'; attempt: number; reason: string }
  | { kind: 'failed'; attempt: number; detail: string; final: boolean; retryDelayMs: number | null }
) & {
  /** Set when the job gave its delivery back (settled, or to the backlog): the biller has room in its share for another. */
  released?: { billerClientId: string };
};

export type AttemptVerdict = 'success' | 'gone' | 'failure';

/** Only a 2xx answer delivers; 410 Gone means the receiver wants no more; everything else is retried. */
export function attemptVerdict(statusCode: number | null): AttemptVerdict {
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return 'success';
  if (statusCode === 410) return 'gone';
  return 'failure';
}

/**
 * A delivery's failed attempt, as its job's error: a delivery's last attempt fails its job, for good
 * (named UnrecoverableError, which the queue retries no more: the next attempt, had there been one,
 * would have been a new admission, not a retry of the job). `retryDelayMs` is what the schedule
 * (and Retry-After) said to wait.
 */
export class WebhookAttemptFailed extends Error {
  override readonly name: string;
  readonly retryDelayMs: number | null;

  constructor(detail: string, retryDelayMs: number | null, options: { final?: boolean } = {}) {
    super(detail);
    this.name = options.final ? 'UnrecoverableError' : 'WebhookAttemptFailed';
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
   * The queue job making the attempt. It attempts the delivery only if it holds it (its id is the
   * delivery's job_id), or, queued outside admission, once handed it (admitDeliveryToJob); and gives
   * it back when done. `waiter` wakes it when it had to wait for a delivery slot. Without a job (a
   * direct call) the delivery is attempted whoever holds it, and nothing is given back.
   */
  job?: { id: string; waiter: DeliveryWaiter };
}

/**
 * One attempt at one delivery: POST the event's stored payload, signed with the endpoint's current
 * secrets, to an address checked just now, then record the attempt and its consequences for the
 * endpoint, and give the delivery back to the backlog (to be admitted again when its retry is due) or
 * settle it, in one transaction. The webhook-id is the event id, the same on every attempt.
 *
 * Before anything is sent, two things may make the delivery wait without spending an attempt: the
 * endpoint's open circuit (postponed: the delivery goes back to the backlog, and is admitted once the
 * circuit's opening is over, one delivery as the probe, the others after its success), and the
 * biller's share of this process's delivery slots (deferred: the caller puts the job back in the
 * queue until then, still holding the delivery; the waiter is woken sooner when a slot of the
 * biller's frees).
 */
export async function attemptDelivery(
  db: Database,
  deliveryId: string,
  attempt: JobAttempt | null,
  settings: WebhookDeliverySettings,
  options: AttemptOptions = {},
): Promise<DeliveryOutcome> {
  const now = options.now ?? (() => new Date());
  const { slots } = settings;
  const delivery = await findDeliveryContext(db, deliveryId);
  if (!delivery) return { kind: 'skipped', reason: 'no such delivery' };
  const { job } = options;
  const billerId = delivery.biller_client_id;
  // A job leaves its biller's line once past it, so that no later wake moves it.
  const leaveLine = () => {
    if (job) slots.forget(job.waiter.key, billerId);
  };
  if (job && delivery.job_id !== job.id) {
    const held = delivery.job_id !== null;
    if (held || delivery.delivery_status !== 'pending') {
      leaveLine();
      return { kind: 'skipped', reason: held ? `the delivery is held by job ${delivery.job_id}` : `delivery already ${delivery.delivery_status}` };
    }
    if (!(await admitDeliveryToJob(db, { deliveryId, billerClientId: billerId }, job.id, settings.queuedPerBiller))) {
      leaveLine();
      return { kind: 'skipped', reason: `not this job's: the biller's ${settings.queuedPerBiller} in the queue are taken, or its retry is not due; it waits in its backlog` };
    }
  }
  // From here on the job holds the delivery (or a direct call attempts it regardless).
  const released = job ? { released: { billerClientId: billerId } } : {};
  const giveBack = async (executor: Executor = db) => {
    if (job) await releaseDelivery(executor, deliveryId, job.id);
  };
  if (delivery.delivery_status !== 'pending') {
    leaveLine();
    await giveBack();
    return { kind: 'skipped', reason: `delivery already ${delivery.delivery_status}`, ...released };
  }
  if (delivery.endpoint_deleted_at !== null || delivery.endpoint_status !== 'enabled') {
    leaveLine();
    await db.transaction().execute(async (trx) => {
      await markDeliveryAbandoned(trx, deliveryId);
      await giveBack(trx);
      // The rest of what waits for the removed endpoint goes with it.
      await abandonBacklogOfRemovedEndpoints(trx, billerId);
    });
    return { kind: 'skipped', reason: delivery.endpoint_deleted_at ? 'endpoint deleted' : 'endpoint disabled', ...released };
  }

  const postpone = async (until: Date, reason: string): Promise<DeliveryOutcome> => {
    leaveLine();
    await giveBack();
    return { kind: 'postponed', until, reason, ...released };
  };
  const circuit = circuitOfRow(delivery);
  const state = circuitState(circuit, now());
  if (state === 'open') return postpone(circuit.openUntil!, `the endpoint's circuit is open after ${circuit.consecutiveFailures} failed attempts in a row`);

  const slot = slots.take(billerId, job?.waiter);
  if (!slot.granted) {
    return {
      kind: 'deferred',
      until: new Date(now().getTime() + waitDelayMs(slot.placeInLine, slots.rules.perBiller)),
      reason: `the biller already has ${slots.runningCount(billerId)} deliveries running`,
    };
  }
  try {
    const probe = state === 'half_open';
    if (probe) {
      const leaseUntil = probeLeaseUntil(now(), settings.timeoutMs);
      if (!(await claimCircuitProbe(db, delivery.endpoint_id, circuit.openUntil!, leaseUntil))) {
        return await postpone(leaseUntil, 'another delivery is probing the endpoint');
      }
    }
    const numbering = attempt ?? { number: delivery.attempts - delivery.attempts_before_run + 1, of: DELIVERY_ATTEMPTS };
    const outcome = await sendAndRecord(db, delivery, numbering, settings, { now, probe, jobId: job?.id });
    // The endpoint this attempt disabled takes what waits for it along.
    if (outcome.kind === 'endpoint_disabled') await abandonBacklogOfRemovedEndpoints(db, billerId);
    return { ...outcome, ...released };
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
  options: { now: () => Date; probe: boolean; jobId: string | undefined },
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
    // Settled, or back to the backlog until its retry is due: either way the job is done with it.
    releasedBy: options.jobId,
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

    const circuit = await rowLockEndpointCircuit(trx, delivery.endpoint_id);
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
