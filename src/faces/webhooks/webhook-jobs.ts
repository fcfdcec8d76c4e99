import type { Database } from '../../platform/db/connection.ts';
import { deliverWebhookJob, deliveryJobId, deliveryJobOptions, dispatchEventsJob, redeliveryJobId, requestedDispatchJobOptions } from '../../platform/queue/job-catalogue.ts';
import { enqueueJob, enqueueJobs } from '../../platform/queue/job-contract.ts';
import type { JobQueue } from '../../platform/queue/queues.ts';
import { admitDueDeliveries, type AdmittedDelivery } from './webhook-admission.ts';
import { listAdmittedBefore, listAdmittedDeliveriesAfter, oldestUndispatchedEventAt, releaseDelivery } from './webhook-repository.ts';
import { retryDelayMs } from './webhook-retry-schedule.ts';

/** Queues the jobs of admitted deliveries, in the order given, under the ids their rows record. */
export async function enqueueAdmitted(queue: JobQueue, admitted: readonly AdmittedDelivery[]): Promise<void> {
  await enqueueJobs(
    queue,
    deliverWebhookJob,
    admitted.map(({ deliveryId, jobId }) => ({ payload: { deliveryId }, options: deliveryJobOptions(jobId) })),
  );
}

/**
 * Queues delivery jobs outside admission: an operator's redelivery (a job id of its own, since the
 * delivery's earlier jobs may still be kept, and re-adding an id is silently ignored), or, without
 * `redelivery`, under the delivery's id of before admission. Each job takes its delivery when it
 * runs if no job holds it and its biller's share of the queue has room; otherwise the delivery goes
 * out in its biller's turn.
 */
export async function enqueueDeliveries(queue: JobQueue, deliveryIds: readonly string[], options: { redelivery?: boolean } = {}): Promise<void> {
  const stamp = Date.now();
  await enqueueJobs(
    queue,
    deliverWebhookJob,
    deliveryIds.map((deliveryId) => ({
      payload: { deliveryId },
      options: deliveryJobOptions(options.redelivery ? redeliveryJobId(deliveryId, stamp) : deliveryJobId(deliveryId)),
    })),
  );
}

/** Tops up a biller's share of the queue (webhook-admission.ts): what a delivery job does when it ends. */
export interface DeliveryAdmitter {
  topUp(billerClientId: string): Promise<void>;
}

/**
 * The top-up of one worker host. Top-ups of one biller in this process run one at a time: a request
 * while one runs is served by the next run, which starts once that one ends and serves every request
 * made meanwhile (so many jobs of a biller ending together make two rounds, not one each, and at
 * most one per process waits on the biller's advisory lock, holding a database connection).
 *
 * When what a biller has waiting is not due yet (a retry, an open circuit), a timer in this process
 * tops it up when it is, so that a retry goes out on time without waiting for the dispatcher's next
 * sweep (the sweep still catches what a process that stopped never admitted). One timer per biller,
 * the earliest; timers do nothing once the queue is closing, and do not keep the process alive.
 */
export function deliveryAdmitter(db: Database, queue: JobQueue, perBiller: number): DeliveryAdmitter {
  const flights = new Map<string, { running: Promise<void>; next: Promise<void> | null }>();
  const wakeUps = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  const wakeAt = (billerClientId: string, at: number) => {
    const pending = wakeUps.get(billerClientId);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(
      () => {
        wakeUps.delete(billerClientId);
        // A wake-up that fails is the dispatcher's sweep's to make up.
        topUp(billerClientId).catch(() => undefined);
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    wakeUps.set(billerClientId, { at, timer });
  };

  const admit = async (billerClientId: string) => {
    if (queue.closing) return;
    const round = await admitDueDeliveries(db, (admitted) => enqueueAdmitted(queue, admitted), { perBiller, billerIds: [billerClientId] });
    for (const [biller, at] of round.nextDueAt) wakeAt(biller, at.getTime());
  };

  const start = (billerClientId: string): Promise<void> => {
    const running = admit(billerClientId).finally(() => {
      const flight = flights.get(billerClientId);
      if (flight?.running === running && flight.next === null) flights.delete(billerClientId);
    });
    return running;
  };

  const topUp = (billerClientId: string): Promise<void> => {
    const flight = flights.get(billerClientId);
    if (!flight) {
      const running = start(billerClientId);
      flights.set(billerClientId, { running, next: null });
      return running;
    }
    if (flight.next) return flight.next;
    const next = flight.running
      .catch(() => undefined)
      .then(() => {
        flight.next = null;
        flight.running = start(billerClientId);
        return flight.running;
      });
    flight.next = next;
    return next;
  };

  return { topUp };
}

/**
 * The wait before a delivery job runs again after an error of ours (the database was away mid-job):
 * the webhook schedule. A failed attempt at the receiver is not retried by its job: its retry is a
 * later admission, due when the attempt's own schedule (jitter, Retry-After) says, which the
 * delivery's row records; and a delivery's last failed attempt fails its job for good.
 */
export function webhookBackoffStrategy(scale: number, random: () => number = Math.random): (attemptsMade: number, type?: string, error?: Error) => number {
  return (attemptsMade) => retryDelayMs({ failedAttempt: attemptsMade, retryAfterMs: null, scale, random: random() });
}

/** Runs the dispatcher soon (bursts of asks collapse into one job); the schedule runs it anyway. */
export async function requestEventDispatch(queue: JobQueue): Promise<void> {
  await enqueueJob(queue, dispatchEventsJob, {}, requestedDispatchJobOptions);
}

/**
 * The outbox is the source of truth: an event still undispatched after `olderThan` means the
 * dispatcher has not run (its schedule lost with Redis's data, or its job stuck), so ask for a
 * run now. Returns whether it asked.
 */
export async function requestDispatchOfStaleEvents(db: Database, dispatch: JobQueue, olderThan: Date): Promise<boolean> {
  const oldest = await oldestUndispatchedEventAt(db);
  if (oldest === null || oldest > olderThan) return false;
  await requestEventDispatch(dispatch);
  return true;
}

const RECOVERY_PAGE = 500;

/**
 * After Redis lost its data, every admitted delivery's job is queued again under the id its row
 * records (so two workers recovering at once still queue one). The backlog needs no jobs: the
 * dispatcher admits it. Returns how many were queued again.
 */
export async function requeueLostDeliveries(db: Database, deliveries: JobQueue): Promise<number> {
  let requeued = 0;
  let after: string | null = null;
  for (;;) {
    const page = await listAdmittedDeliveriesAfter(db, after, RECOVERY_PAGE);
    if (page.length === 0) return requeued;
    const states = await Promise.all(page.map(({ jobId }) => deliveries.getJobState(jobId)));
    const lost = page.filter((_, i) => states[i] === 'unknown');
    await enqueueJobs(
      deliveries,
      deliverWebhookJob,
      lost.map(({ id, jobId }) => ({ payload: { deliveryId: id }, options: deliveryJobOptions(jobId) })),
    );
    requeued += lost.length;
    after = page.at(-1)!.id;
  }
}

/** An admission older than this whose job is gone, or done, lost its job: its queuing failed, or Redis or an operator dropped it. */
export const LOST_ADMISSION_AFTER_MS = 60_000;
const LOST_ADMISSION_PAGE = 200;

/**
 * The dispatcher's sweep for admissions whose job was lost: a delivery admitted over
 * LOST_ADMISSION_AFTER_MS ago whose job is not waiting, delayed or running (it is unknown to Redis,
 * or finished without giving the delivery back: failed for good after errors of ours, or stalled too
 * often) goes back to the backlog, to be admitted again under a new job. Compare-and-set on the job
 * id, so a delivery its job gave back meanwhile is left alone. Returns how many went back.
 */
export async function releaseLostAdmissions(db: Database, deliveries: JobQueue, now = new Date()): Promise<number> {
  const old = await listAdmittedBefore(db, new Date(now.getTime() - LOST_ADMISSION_AFTER_MS), LOST_ADMISSION_PAGE);
  const states = await Promise.all(old.map(({ jobId }) => deliveries.getJobState(jobId)));
  const lost = old.filter((_, i) => ['unknown', 'completed', 'failed'].includes(states[i]!));
  const released = await Promise.all(lost.map(({ id, jobId }) => releaseDelivery(db, id, jobId)));
  return released.filter(Boolean).length;
}
