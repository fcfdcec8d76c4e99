import { Queue, type ConnectionOptions, type DefaultJobOptions } from 'bullmq';

export const queueNames = {
  /** Daily housekeeping: idempotency key purge. */
  maintenance: 'maintenance',
  /** The nightly trigger and one parent job per run date. */
  nightly: 'nightly',
  /** One job per (payroll, pay date): lock, then instruct. */
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

export function createQueue(name: QueueName, connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(name, { connection, prefix, defaultJobOptions });
}
