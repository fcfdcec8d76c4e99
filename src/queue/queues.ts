import { Queue, type ConnectionOptions, type DefaultJobOptions } from 'bullmq';
import type { DependencyHealth } from '../runtime/dependency-health.ts';
import { reportRedisErrors } from './connections.ts';

export const queueNames = {
  /** Daily housekeeping: idempotency key purge, payouts. */
  maintenance: 'maintenance',
  /** The nightly trigger and the reconciliation sweep. */
  nightly: 'nightly',
  /** One job per (run, payroll, pay date): lock, then instruct; re-runs and reconciliations. */
  payDates: 'pay-dates',
  /** The outbox dispatcher (every 2 s): events into webhook deliveries. */
  webhookDispatch: 'webhook-dispatch',
  /** One job per webhook delivery, retried on the webhook schedule. */
  webhookDeliveries: 'webhook-deliveries',
} as const;

export type QueueName = (typeof queueNames)[keyof typeof queueNames];

/** Bounded history: enough to inspect recent failures without letting Redis grow forever. */
export const defaultJobOptions: DefaultJobOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 5_000 },
  removeOnComplete: { count: 1_000, age: 7 * 86_400 },
  removeOnFail: { count: 5_000, age: 30 * 86_400 },
};

/**
 * How long a job's lock lives between renewals; the worker renews it every half of this while the
 * job runs, whatever the job's length. Pay-date jobs take milliseconds to about a second (the
 * nightly benchmark: 10,000 locks in 87-138 s at 6 at a time), webhook deliveries up to their 15 s
 * timeout; all of them renew. 15 s leaves 7.5 s for a renewal delayed by a busy event loop, and
 * bounds how long a dead worker's job waits.
 */
export const LOCK_DURATION_MS = 15_000;
/**
 * How often the workers of a queue look for active jobs whose lock has expired (one check per
 * interval across all of them): each check moves jobs the previous one saw active and that have
 * lost their lock, so a dead worker's job is back in the queue at most lock duration + one
 * interval after the last renewal, 20 s, when another worker is running.
 */
export const STALLED_INTERVAL_MS = 5_000;
/**
 * A job whose worker died more than this often is failed rather than retried again: two crashes
 * are a deploy and bad luck, a third is the job itself (a payroll too big for the process). Every
 * job is safe to repeat, so a recovery never does anything twice.
 */
export const MAX_STALLED_COUNT = 2;

/** What the service promises: a dead worker's job is back in the queue within this. */
export const STALLED_RECOVERY_PROMISE_MS = 30_000;

/**
 * The longest a job waits, after its worker's last lock renewal, before a running worker hands it to
 * the queue again. The lock runs out `lockDurationMs` after that renewal, and the first stalled check
 * after that moves the job (each check marks the active jobs; the next one moves those still without
 * a lock, and by then this one was marked, since checks come faster than locks run out). Checks come
 * an interval apart, but once may come two apart: a worker skips its check while another worker's
 * last check is less than an interval old, and when that other worker is the one that died, the next
 * check is the survivor's following one.
 */
export function stalledRecoveryBoundMs(lockDurationMs = LOCK_DURATION_MS, stalledIntervalMs = STALLED_INTERVAL_MS): number {
  return lockDurationMs + 2 * stalledIntervalMs;
}

/** A producer queue; with a health monitor, its connection errors are reported rather than printed. */
export function createQueue(name: QueueName, connection: ConnectionOptions, prefix: string, health?: DependencyHealth): Queue {
  const queue = new Queue(name, { connection, prefix, defaultJobOptions });
  reportRedisErrors(queue, health);
  return queue;
}
