import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { uuidSchema } from '../src/shared/schemas.ts';
import {
  attemptDelivery,
  WebhookAttemptFailed,
  type WebhookDeliverySettings,
} from '../src/webhooks/webhook-delivery-service.ts';
import { deliveryJobWaiting } from '../src/webhooks/webhook-jobs.ts';

const payloadSchema = z.object({ deliveryId: uuidSchema });

/**
 * One attempt per run. A failed attempt throws, so the queue retries the job on the webhook
 * schedule (the error carries the wait); a job that dies mid-attempt is retried as stalled. A
 * delivery that must wait (its endpoint's circuit is open, its biller's slots are in use) goes
 * back to the queue as delayed, with its attempts untouched.
 */
export function deliverWebhookProcessor(db: Database, settings: WebhookDeliverySettings) {
  return async (job: Job, token?: string) => {
    const { deliveryId } = payloadSchema.parse(job.data);
    const waiting = deliveryJobWaiting(job, token);
    const outcome = await attemptDelivery(db, deliveryId, { number: job.attemptsMade + 1, of: job.opts.attempts ?? 1 }, settings, {
      waiter: waiting.waiter,
    });
    if (outcome.kind === 'postponed' || outcome.kind === 'deferred') return waiting.park(outcome.until);
    if (outcome.kind === 'failed') throw new WebhookAttemptFailed(`attempt ${outcome.attempt}: ${outcome.detail}`, outcome.retryDelayMs);
    return outcome;
  };
}
