import { nextCronFireAfter } from '../../platform/config/cron.ts';

/**
 * When the nightly run is next due after `now`: the next fire of its cron pattern in the service time
 * zone, computed by the function BullMQ's job scheduler uses, so what `status` says is what the
 * scheduler will do. Null for a pattern that never fires again.
 */
export function nextNightlyRunAt(cron: string, timeZone: string, now: Date): Date | null {
  const next = nextCronFireAfter(cron, timeZone, now.getTime());
  return next === undefined ? null : new Date(next);
}
