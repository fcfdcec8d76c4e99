import type { BackoffStrategy, JobsOptions, Queue } from 'bullmq';
import { WebhookAttemptFailed } from './webhook-delivery-service.ts';
import { DELIVERY_ATTEMPTS, retryDelayMs } from './webhook-retry-schedule.ts';

export const dispatchEventsJob = 'dispatch-events';
export const deliverWebhookJob = 'deliver-webhook';

/** The backoff type delivery jobs name; the delivery worker resolves it with `webhookBackoffStrategy`. */
export const WEBHOOK_BACKOFF_TYPE = 'webhook-schedule';

/** How often the dispatcher looks at the outbox. */
export const DISPATCH_EVERY_MS = 2_000;

/** One job per delivery, so the dispatcher running twice still queues each delivery once. */
export const deliveryJobId = (deliveryId: string) => `delivery.${deliveryId}`;

function deliveryJobOptions(jobId: string): JobsOptions {
  return {
    jobId,
    attempts: DELIVERY_ATTEMPTS,
    backoff: { type: WEBHOOK_BACKOFF_TYPE },
    removeOnComplete: { count: 10_000, age: 7 * 86_400 },
    removeOnFail: { count: 10_000, age: 30 * 86_400 },
  };
}

/**
 * Queues delivery jobs. A redelivery gets a job id of its own: the first delivery's job may still be
 * kept (completed or failed), and re-adding its id would be silently ignored.
 */
export async function enqueueDeliveries(queue: Queue, deliveryIds: readonly string[], options: { redelivery?: boolean } = {}): Promise<void> {
  if (deliveryIds.length === 0) return;
  const stamp = Date.now();
  await queue.addBulk(
    deliveryIds.map((deliveryId) => ({
      name: deliverWebhookJob,
      data: { deliveryId },
      opts: deliveryJobOptions(options.redelivery ? `redelivery.${deliveryId}.${stamp}` : deliveryJobId(deliveryId)),
    })),
  );
}

/**
 * The wait before a delivery job's next attempt. The attempt itself works it out (schedule, jitter,
 * Retry-After) and hands it over on the error; any other error (the database was away) falls back
 * to the plain schedule.
 */
export function webhookBackoffStrategy(scale: number, random: () => number = Math.random): BackoffStrategy {
  return (attemptsMade, _type, error) => {
    if (error instanceof WebhookAttemptFailed && error.retryDelayMs !== null) return error.retryDelayMs;
    return retryDelayMs({ failedAttempt: attemptsMade, retryAfterMs: null, scale, random: random() });
  };
}

/** Runs the dispatcher soon (bursts of asks collapse into one job); the schedule runs it anyway. */
export async function requestEventDispatch(queue: Queue): Promise<void> {
  await queue.add(dispatchEventsJob, {}, { deduplication: { id: dispatchEventsJob }, removeOnComplete: true, removeOnFail: { count: 100 } });
}

/** Upserted, so every worker process starting leaves exactly one schedule. */
export async function scheduleEventDispatch(queue: Queue, everyMs = DISPATCH_EVERY_MS): Promise<void> {
  await queue.upsertJobScheduler(
    dispatchEventsJob,
    { every: everyMs },
    { name: dispatchEventsJob, data: {}, opts: { removeOnComplete: true, removeOnFail: { count: 100 } } },
  );
}
