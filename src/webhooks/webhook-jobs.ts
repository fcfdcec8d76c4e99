import { DelayedError, type BackoffStrategy, type Job, type Queue } from 'bullmq';
import type { Database } from '../db/connection.ts';
import {
  deliverWebhookJob,
  deliveryJobId,
  deliveryJobOptions,
  dispatchEventsJob,
  redeliveryJobId,
  requestedDispatchJobOptions,
} from '../queue/job-catalogue.ts';
import type { DeliveryWaiter } from './webhook-delivery-slots.ts';
import { WebhookAttemptFailed } from './webhook-delivery-service.ts';
import { listPendingDeliveriesAfter, oldestUndispatchedEventAt } from './webhook-repository.ts';
import { retryDelayMs } from './webhook-retry-schedule.ts';

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
      opts: deliveryJobOptions(options.redelivery ? redeliveryJobId(deliveryId, stamp) : deliveryJobId(deliveryId)),
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

/**
 * How a delivery job that may not go ahead now (its endpoint's circuit is open, its biller's slots
 * are in use) waits without holding a worker slot: `park` moves it to the delayed set until `until`
 * (BullMQ's moveToDelayed spends none of its attempts) and ends the run with DelayedError, which the
 * worker takes for neither a success nor a failure. `waiter.wake` moves it back to the waiting line
 * sooner; a wake that comes before the move is done is kept and acted on once it is.
 */
export function deliveryJobWaiting(job: Job, token: string | undefined): { waiter: DeliveryWaiter; park(until: Date): Promise<never> } {
  let parked: Promise<void> | undefined;
  let woken = false;
  // A job no longer delayed (its delay ran out, or another wake came first) has nothing to promote.
  const promote = () => job.promote().catch(() => undefined);
  return {
    waiter: {
      key: job.id!,
      wake: () => {
        woken = true;
        if (parked) void parked.then(promote, () => undefined);
      },
    },
    async park(until) {
      parked = job.moveToDelayed(until.getTime(), token);
      await parked;
      if (woken) await promote();
      throw new DelayedError();
    },
  };
}

/** Runs the dispatcher soon (bursts of asks collapse into one job); the schedule runs it anyway. */
export async function requestEventDispatch(queue: Queue): Promise<void> {
  await queue.add(dispatchEventsJob, {}, requestedDispatchJobOptions);
}

/**
 * The outbox is the source of truth: an event still undispatched after `olderThan` means the
 * dispatcher has not run (its schedule lost with Redis's data, or its job stuck), so ask for a
 * run now. Returns whether it asked.
 */
export async function requestDispatchOfStaleEvents(db: Database, dispatch: Queue, olderThan: Date): Promise<boolean> {
  const oldest = await oldestUndispatchedEventAt(db);
  if (oldest === null || oldest > olderThan) return false;
  await requestEventDispatch(dispatch);
  return true;
}

const RECOVERY_PAGE = 500;

/**
 * After Redis lost its data, every pending delivery whose job is gone gets a job again (under the
 * delivery's own job id, so two workers recovering at once still queue one). The database's
 * pending rows are the list. A delivery whose job still exists is left alone, and so is one whose
 * job finished: a pending delivery with a finished job has been reopened for redelivery, which
 * runs under a job id of its own. Returns how many were queued again.
 */
export async function requeueLostDeliveries(db: Database, deliveries: Queue): Promise<number> {
  let requeued = 0;
  let after: string | null = null;
  for (;;) {
    const ids = await listPendingDeliveriesAfter(db, after, RECOVERY_PAGE);
    if (ids.length === 0) return requeued;
    const states = await Promise.all(ids.map((id) => deliveries.getJobState(deliveryJobId(id))));
    const lost = ids.filter((_, i) => states[i] === 'unknown');
    await enqueueDeliveries(deliveries, lost);
    requeued += lost.length;
    after = ids.at(-1)!;
  }
}
