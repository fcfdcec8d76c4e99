import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { dispatchPendingEvents } from '../src/webhooks/webhook-dispatch-service.ts';
import { enqueueDeliveries } from '../src/webhooks/webhook-jobs.ts';

const payloadSchema = z.object({}).passthrough();

/** Outbox to deliveries. Safe to run twice or side by side: a repeat finds nothing new to queue. */
export function dispatchEventsProcessor(db: Database, deliveries: Queue) {
  return async (job: Job) => {
    payloadSchema.parse(job.data ?? {});
    return dispatchPendingEvents(db, (deliveryIds) => enqueueDeliveries(deliveries, deliveryIds));
  };
}
