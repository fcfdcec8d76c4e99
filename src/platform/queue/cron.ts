import { getNextMillis } from 'bullmq';

/**
 * The first time after `afterMs` (epoch milliseconds) that a cron pattern fires in a time zone, by the
 * function BullMQ's job scheduler uses, so what is said of a schedule is what the scheduler will do.
 * Undefined for a pattern that never fires again.
 */
export function nextCronFireAfter(pattern: string, timeZone: string, afterMs: number): number | undefined {
  return getNextMillis(afterMs, { pattern, tz: timeZone });
}
