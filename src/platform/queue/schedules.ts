import type { Queue } from 'bullmq';
import type { QueueName, RecurringSchedule } from './job-catalogue.ts';

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
