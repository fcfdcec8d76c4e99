import { DelayedError, type Job } from 'bullmq';
import type { DeliveryWaiter } from '../webhooks/webhook-delivery-slots.ts';

// Worker-side, with BullMQ's own job: a delivery job parks itself here (the webhook area produces its
// jobs through the job contract and never imports BullMQ).

/**
 * How a delivery job that may not start now (its biller's share of this process's delivery slots is
 * in use) waits without holding a worker slot, still holding its delivery: `park` moves it to the
 * delayed set until `until` (BullMQ's moveToDelayed spends none of its attempts) and ends the run
 * with DelayedError, which the worker takes for neither a success nor a failure. `waiter.wake` moves
 * it back to the waiting line sooner; a wake that comes before the move is done is kept and acted on
 * once it is.
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
