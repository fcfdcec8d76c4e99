import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import type { WebhookDeliverySettings } from '../src/faces/webhooks/webhook-delivery-service.ts';
import { dispatchPendingEvents } from '../src/faces/webhooks/webhook-dispatch-service.ts';
import { enqueueAdmitted, releaseLostAdmissions } from '../src/faces/webhooks/webhook-jobs.ts';
import { dispatchEventsJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';
import type { JobQueue } from '../src/platform/queue/queues.ts';

/**
 * Outbox to deliveries, then every biller's due backlog admitted to the queue, a share per biller;
 * first, admissions whose job was lost go back to the backlog. Safe to run twice or side by side: a
 * repeat finds nothing new to create, and admission never hands a delivery to two jobs.
 */
export function dispatchEventsProcessor(db: Database, deliveries: JobQueue, settings: Pick<WebhookDeliverySettings, 'queuedPerBiller'>) {
  return async (job: Job) => {
    payloadOf(job, dispatchEventsJob);
    const lostJobs = await releaseLostAdmissions(db, deliveries);
    const summary = await dispatchPendingEvents(db, (admitted) => enqueueAdmitted(deliveries, admitted), { perBiller: settings.queuedPerBiller });
    return { ...summary, lostJobs };
  };
}
