import { formatCalendarDate, parseCalendarDate } from '../../directory/calendars/working-days.ts';

export const INSTALMENT_INTERVALS = ['weekly', 'fortnightly', 'four_weekly', 'monthly'] as const;
export type InstalmentInterval = (typeof INSTALMENT_INTERVALS)[number];

export const MAX_INSTALMENTS = 120;

const WEEKS_PER_INTERVAL: Record<Exclude<InstalmentInterval, 'monthly'>, number> = {
  weekly: 1,
  fortnightly: 2,
  four_weekly: 4,
};

/**
 * Due dates of `count` instalments, the first on `startDate`. Monthly instalments keep the start's
 * day of month, clamped to the end of shorter months (a 31 January start is due 28 or 29 February,
 * then 31 March again): each date is computed from the start, never from the previous clamped one,
 * so the day does not drift.
 */
export function instalmentDueDates(startDate: string, interval: InstalmentInterval, count: number): string[] {
  const start = parseCalendarDate(startDate);
  if (!Number.isInteger(count) || count < 1 || count > MAX_INSTALMENTS) {
    throw new RangeError(`instalment count must be an integer from 1 to ${MAX_INSTALMENTS}, got ${count}`);
  }
  const dates: string[] = [];
  for (let i = 0; i < count; i++) {
    const due = interval === 'monthly' ? start.plus({ months: i }) : start.plus({ weeks: i * WEEKS_PER_INTERVAL[interval] });
    dates.push(formatCalendarDate(due));
  }
  return dates;
}
