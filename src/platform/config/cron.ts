import { CronExpressionParser } from 'cron-parser';

/**
 * The first time after `afterMs` (epoch milliseconds) that a cron pattern fires in a time zone, as BullMQ's
 * job scheduler computes it: its own parser (cron-parser, pinned to the version BullMQ pins), asked the
 * way its getNextMillis asks, so what is said of a schedule is what the scheduler will do. Undefined for a
 * pattern that never fires again; a pattern the scheduler cannot read throws, as it does there. Not
 * BullMQ itself: the configuration reads patterns, and every command reads the configuration.
 */
export function nextCronFireAfter(pattern: string, timeZone: string | undefined, afterMs: number): number | undefined {
  const expression = CronExpressionParser.parse(pattern, { currentDate: new Date(afterMs), ...(timeZone ? { tz: timeZone } : {}) });
  try {
    return expression.next().getTime();
  } catch {
    return undefined;
  }
}
