import { DateTime } from 'luxon';

// Calendar dates are plain 'YYYY-MM-DD' strings. All arithmetic happens in UTC so that no
// daylight-saving transition (or the host's local zone) can ever shift a date by a day.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Throws a RangeError unless `date` is a real 'YYYY-MM-DD' calendar date (so not 2026-02-30),
 * because a malformed date reaching a business rule is a programming error, not a business
 * outcome. Plain arithmetic: rules that only compare dates (which, validated, order as strings)
 * run on every API request, where building a luxon DateTime per date showed in profiles.
 */
export function assertCalendarDate(date: string): void {
  if (!ISO_DATE.test(date)) {
    throw new RangeError(`Expected a 'YYYY-MM-DD' calendar date, got '${date}'`);
  }
  const year = Number(date.slice(0, 4));
  const month = Number(date.slice(5, 7));
  const day = Number(date.slice(8, 10));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const monthDays = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (monthDays === undefined || day < 1 || day > monthDays) {
    throw new RangeError(`Not a valid calendar date: '${date}'`);
  }
}

/** Parses a validated 'YYYY-MM-DD' calendar date (see assertCalendarDate) into a UTC-midnight luxon DateTime. */
export function parseCalendarDate(date: string): DateTime<true> {
  assertCalendarDate(date);
  const parsed = DateTime.fromISO(date, { zone: 'UTC' });
  if (!parsed.isValid) {
    throw new RangeError(`Not a valid calendar date: '${date}'`);
  }
  return parsed;
}

/** Formats a luxon DateTime back into the 'YYYY-MM-DD' form used everywhere in the service. */
export function formatCalendarDate(date: DateTime<true>): string {
  return date.toISODate();
}

/**
 * The bank holidays a calculation skips. Only membership is asked, so a region's calendar can
 * compute any year when first asked (see regionalHolidays) and a plain Set still serves in tests.
 */
export type HolidayCalendar = Pick<ReadonlySet<string>, 'has'>;

/** Saturdays, Sundays and configured holidays are the days on which payroll does nothing. */
export function isWorkingDay(date: string, holidays: HolidayCalendar): boolean {
  return isWorkingDateTime(parseCalendarDate(date), holidays);
}

// Loops below test already-parsed dates; re-validating a string per step would only cost time.
function isWorkingDateTime(date: DateTime<true>, holidays: HolidayCalendar): boolean {
  return date.weekday <= 5 && !holidays.has(formatCalendarDate(date)); // ISO weekday: 6, 7 = Sat, Sun
}

function assertDayCount(days: number): void {
  // Negative counts are rejected rather than flipped, so a sign bug at a call site cannot
  // silently move a lock date into the future.
  if (!Number.isSafeInteger(days) || days < 0) {
    throw new RangeError(`Working-day count must be a non-negative integer, got ${days}`);
  }
}

function stepWorkingDays(date: string, days: number, holidays: HolidayCalendar, direction: 1 | -1): string {
  assertDayCount(days);
  let cursor = parseCalendarDate(date);
  let remaining = days;
  // Terminates because every real calendar has working days: bank holidays are a few days a year.
  while (remaining > 0) {
    cursor = cursor.plus({ days: direction });
    if (isWorkingDateTime(cursor, holidays)) remaining -= 1;
  }
  return formatCalendarDate(cursor);
}

/**
 * The date `days` working days before `date`. The start date itself never counts (it is day 0),
 * whether or not it is a working day; `days` = 0 returns `date` unchanged.
 */
export function subtractWorkingDays(date: string, days: number, holidays: HolidayCalendar): string {
  return stepWorkingDays(date, days, holidays, -1);
}

/**
 * The date `days` working days after `date`. Mirror image of subtractWorkingDays: the start date
 * never counts and `days` = 0 returns `date` unchanged.
 */
export function addWorkingDays(date: string, days: number, holidays: HolidayCalendar): string {
  return stepWorkingDays(date, days, holidays, 1);
}

/**
 * `date` itself when it is a working day, otherwise the last working day before it. UK payroll
 * brings a pay day that falls on a weekend or bank holiday forward, never back.
 */
export function previousWorkingDayOnOrBefore(date: string, holidays: HolidayCalendar): string {
  let cursor = parseCalendarDate(date);
  while (!isWorkingDateTime(cursor, holidays)) {
    cursor = cursor.minus({ days: 1 });
  }
  return formatCalendarDate(cursor);
}

/**
 * `date` itself when it is a working day, otherwise the first working day after it: for pay-day
 * rules that pay late rather than early ("the 1st, later if not a working day").
 */
export function nextWorkingDayOnOrAfter(date: string, holidays: HolidayCalendar): string {
  let cursor = parseCalendarDate(date);
  while (!isWorkingDateTime(cursor, holidays)) {
    cursor = cursor.plus({ days: 1 });
  }
  return formatCalendarDate(cursor);
}
