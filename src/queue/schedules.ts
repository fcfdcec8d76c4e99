import type { Queue, RepeatOptions } from 'bullmq';
import type { Config } from '../config/config.ts';
import { nightlyTriggerJob } from '../nightly/nightly-flow.ts';
import { eventDispatchSchedule } from '../webhooks/webhook-jobs.ts';
import { purgeIdempotencyKeysJob } from '../../jobs/purge-idempotency-keys.ts';
import { reconcileSweepJob, RECONCILE_SWEEP_CRON } from '../../jobs/reconcile-sweep.ts';
import { runPayoutsCron, runPayoutsJob } from '../../jobs/run-payouts.ts';
import { queueNames, type QueueName } from './queues.ts';

/** One BullMQ job scheduler: the queue it adds to, its id, when it repeats and the job it adds. */
export interface RecurringSchedule {
  queue: QueueName;
  id: string;
  repeat: RepeatOptions;
  template: { name: string; data: Record<string, unknown>; opts?: { removeOnComplete?: boolean; removeOnFail?: { count: number } } };
}

/** Everything the workers run on a clock, in the service time zone. */
export function recurringSchedules(config: Pick<Config, 'NIGHTLY_CRON' | 'SERVICE_TIME_ZONE'>): RecurringSchedule[] {
  const tz = config.SERVICE_TIME_ZONE;
  return [
    { queue: queueNames.webhookDispatch, ...eventDispatchSchedule() },
    {
      queue: queueNames.maintenance,
      id: purgeIdempotencyKeysJob,
      repeat: { pattern: '30 3 * * *', tz },
      template: { name: purgeIdempotencyKeysJob, data: {} },
    },
    { queue: queueNames.maintenance, id: runPayoutsJob, repeat: { pattern: runPayoutsCron, tz }, template: { name: runPayoutsJob, data: {} } },
    { queue: queueNames.nightly, id: nightlyTriggerJob, repeat: { pattern: config.NIGHTLY_CRON, tz }, template: { name: nightlyTriggerJob, data: {} } },
    { queue: queueNames.nightly, id: reconcileSweepJob, repeat: { pattern: RECONCILE_SWEEP_CRON, tz }, template: { name: reconcileSweepJob, data: {} } },
  ];
}

/**
 * Upserts every job scheduler (idempotent: any number of worker processes leave one each), or with
 * `onlyMissing` only those Redis no longer has, after it lost its data. Returns the ids written.
 */
export async function ensureSchedules(
  queues: Pick<Record<QueueName, Queue>, QueueName>,
  schedules: readonly RecurringSchedule[],
  options: { onlyMissing?: boolean } = {},
): Promise<string[]> {
  const written: string[] = [];
  for (const schedule of schedules) {
    const queue = queues[schedule.queue];
    if (options.onlyMissing && (await queue.getJobScheduler(schedule.id)) !== undefined) continue;
    await queue.upsertJobScheduler(schedule.id, schedule.repeat, schedule.template);
    written.push(schedule.id);
  }
  return written;
}
