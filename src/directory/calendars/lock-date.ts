import { type HolidayCalendar, assertCalendarDate, previousWorkingDayOnOrBefore, subtractWorkingDays } from './working-days.ts';

/**
 * The day the nightly run locks a pay date: the payroll cutoff minus the provider's lead time in
 * working days (weekends and holidays skipped).
 *
 * - Lead time n > 0: step back n working days from the cutoff; the cutoff day itself never counts,
 *   working day or not. So a Saturday cutoff with n = 1 locks on the Friday before it.
 * - Lead time 0: the lock must still happen on a day the service (and the provider) works, so a
 *   cutoff on a weekend or holiday locks on the last working day on or before it. Consequently a
 *   non-working cutoff gives the same lock date for n = 0 and n = 1 - intended: both mean "the
 *   last working day before the provider stops accepting changes".
 */
export function lockDate(payrollCutoffDate: string, leadTimeWorkingDays: number, holidays: HolidayCalendar): string {
  if (leadTimeWorkingDays === 0) {
    return previousWorkingDayOnOrBefore(payrollCutoffDate, holidays);
  }
  return subtractWorkingDays(payrollCutoffDate, leadTimeWorkingDays, holidays);
}

/**
 * A lock is due once its date has arrived, not only on the exact day: a missed nightly run
 * (outage, deploy) must still lock the pay date on the next run rather than skip it forever.
 */
export function isLockDue(lockDate: string, today: string): boolean {
  // Validated 'YYYY-MM-DD' strings order lexicographically exactly as they order in time.
  assertCalendarDate(lockDate);
  assertCalendarDate(today);
  return lockDate <= today;
}

/** One formatter per zone: building an Intl.DateTimeFormat costs far more than using one. */
const dayFormatters = new Map<string, Intl.DateTimeFormat>();

function dayFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = dayFormatters.get(timeZone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    } catch {
      throw new RangeError(`serviceToday: invalid time zone '${timeZone}'`);
    }
    dayFormatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The last answer per zone and minute: the date can only change on a minute boundary. */
const lastDay = new Map<string, { minute: number; date: string }>();

/**
 * The calendar date at instant `now` in the service time zone. "Today" for lock purposes is the
 * UK calendar day, so 23:30 UTC in summer (00:30 BST) is already tomorrow. Every API write asks,
 * so this uses Intl (the same IANA data luxon reads) with a cached formatter, and remembers the
 * answer for the rest of the minute (UTC offsets have been whole minutes everywhere since 1972).
 */
export function serviceToday(now: Date, timeZone: string): string {
  const ms = now.getTime();
  if (Number.isNaN(ms)) {
    throw new RangeError('serviceToday: invalid Date');
  }
  const minute = Math.floor(ms / 60_000);
  const last = lastDay.get(timeZone);
  if (last?.minute === minute) return last.date;
  const parts: Record<string, string> = {};
  for (const part of dayFormatter(timeZone).formatToParts(now)) parts[part.type] = part.value;
  const date = `${parts.year!.padStart(4, '0')}-${parts.month}-${parts.day}`;
  lastDay.set(timeZone, { minute, date });
  return date;
}
