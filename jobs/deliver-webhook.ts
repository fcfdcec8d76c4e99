import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { deliverWebhookJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';
import type { JobQueue } from '../src/platform/queue/queues.ts';
import { attemptDelivery, WebhookAttemptFailed, type WebhookDeliverySettings } from '../src/faces/webhooks/webhook-delivery-service.ts';
import { deliveryAdmitter } from '../src/faces/webhooks/webhook-jobs.ts';
import { deliveryJobWaiting } from '../src/faces/workers/delivery-job-waiting.ts';

/**
 * One attempt per job, by the job that holds the delivery (webhook-admission.ts). A failed attempt
 * completes the job with the delivery back in its biller's backlog until its retry is due (its last
 * allowed attempt fails the job, for good); a job that dies mid-attempt is retried as stalled. A
 * delivery whose endpoint's circuit is open goes back to the backlog; one that must wait for a
 * delivery slot goes back to the queue as delayed, still held. Whenever the job gives its delivery
 * back, it tops up its biller's share of the queue from the backlog.
 */
export function deliverWebhookProcessor(db: Database, settings: WebhookDeliverySettings, deliveries: JobQueue) {
  const admitter = deliveryAdmitter(db, deliveries, settings.queuedPerBiller);
  return async (job: Job, token?: string) => {
    const { deliveryId } = payloadOf(job, deliverWebhookJob);
    const waiting = deliveryJobWaiting(job, token);
    const outcome = await attemptDelivery(db, deliveryId, null, settings, { job: { id: job.id!, waiter: waiting.waiter } });
    if (outcome.kind === 'deferred') return waiting.park(outcome.until);
    if (outcome.released) await admitter.topUp(outcome.released.billerClientId);
    if (outcome.kind === 'failed' && outcome.final) {
      throw new WebhookAttemptFailed(`attempt ${outcome.attempt}: ${outcome.detail}`, null, { final: true });
    }
    return outcome;
  };
}
