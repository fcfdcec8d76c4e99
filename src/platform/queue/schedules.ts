import type { QueueName, RecurringSchedule } from './job-catalogue.ts';
import { checkJobPayload } from './job-contract.ts';
import type { JobQueues } from './queues.ts';

/**
 * Upserts every job scheduler (idempotent: any number of worker processes leave one each), or with
 * `onlyMissing` only those Redis no longer has, after it lost its data. Returns the ids written.
 * Each scheduler's job payload is checked against its schema, as enqueueJob checks a job's.
 */
export async function ensureSchedules(
  queues: Pick<JobQueues, QueueName>,
  schedules: readonly RecurringSchedule[],
  options: { onlyMissing?: boolean } = {},
): Promise<string[]> {
  const written: string[] = [];
  for (const schedule of schedules) {
    const queue = queues[schedule.queue];
    if (options.onlyMissing && (await queue.getJobScheduler(schedule.id)) !== undefined) continue;
    const template = { ...schedule.template, data: checkJobPayload(schedule.template.name, schedule.template.data) };
    await queue.upsertJobScheduler(schedule.id, schedule.repeat, template);
    written.push(schedule.id);
  }
  return written;
}
