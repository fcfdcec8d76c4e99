import type { Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { uuidSchema } from '../src/shared/schemas.ts';
import {
  attemptDelivery,
  WebhookAttemptFailed,
  type WebhookDeliverySettings,
} from '../src/webhooks/webhook-delivery-service.ts';

const payloadSchema = z.object({ deliveryId: uuidSchema });

/**
 * One attempt per run. A failed attempt throws, so the queue retries the job on the webhook
 * schedule (the error carries the wait); a job that dies mid-attempt is retried as stalled.
 */
export function deliverWebhookProcessor(db: Database, settings: WebhookDeliverySettings) {
  return async (job: Job) => {
    const { deliveryId } = payloadSchema.parse(job.data);
    const outcome = await attemptDelivery(db, deliveryId, { number: job.attemptsMade + 1, of: job.opts.attempts ?? 1 }, settings);
    if (outcome.kind === 'failed') throw new WebhookAttemptFailed(`attempt ${outcome.attempt}: ${outcome.detail}`, outcome.retryDelayMs);
    return outcome;
  };
}
