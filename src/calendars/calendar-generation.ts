import type { DateTime } from 'luxon';
import {
  formatCalendarDate,
  parseCalendarDate,
  previousWorkingDayOnOrBefore,
  subtractWorkingDays,
} from './working-days.ts';

export type PayFrequency = 'weekly' | 'fortnightly' | 'four_weekly' | 'monthly';

export interface PayCalendarSpec {
  frequency: PayFrequency;
  /** The first scheduled (contractual) pay date; it is itself moved if it is a non-working day. */
  anchorPayDate: string;
  count: number;
  cutoffOffsetWorkingDays: number;
  holidays: ReadonlySet<string>;
}

export interface GeneratedPayDate {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
}

const PERIOD_DAYS = { weekly: 7, fortnightly: 14, four_weekly: 28 } as const;

function taxYearStart(date: DateTime<true>): number {
  // The UK tax year runs 6 April to 5 April.
  return date.month > 4 || (date.month === 4 && date.day >= 6) ? date.year : date.year - 1;
}

/**
 * The pay period label: the HMRC tax week (weekly-based frequencies) or tax month (monthly) of
 * the scheduled pay date, and the year the tax year started, e.g. '8-2026'. It is taken from the
 * scheduled date, not the working-day-adjusted one: HMRC reports the normal pay day when a
 * payment is made early for a weekend or bank holiday, and it keeps labels unique - an adjusted
 * date can fall back into the previous period's tax week (e.g. Easter Monday 6 April 2026 paid on
 * Good Friday's eve).
 */
export function payPeriodLabel(frequency: PayFrequency, scheduledPayDate: string): string {
  const date = parseCalendarDate(scheduledPayDate);
  const year = taxYearStart(date);
  if (frequency === 'monthly') {
    // Tax month 1 runs 6 April - 5 May, so days 1-5 belong to the previous calendar month's period.
    const calendarMonth = date.day >= 6 ? date.month : date.month - 1;
    const taxMonth = ((calendarMonth - 4 + 12) % 12) + 1;
    return `${taxMonth}-${year}`;
  }
  const yearStart = parseCalendarDate(`${year}-04-06`);
  const taxWeek = Math.floor(date.diff(yearStart, 'days').days / 7) + 1;
  return `${taxWeek}-${year}`;
}

function scheduledDate(
  anchor: DateTime<true>,
  frequency: PayFrequency,
  index: number,
): DateTime<true> {
  // Always offset from the anchor rather than from the previous date, so a 31st anchor gives
  // 31 Jan, 28 Feb, 31 Mar (luxon clamps to month end) instead of drifting to the 28th forever.
  return frequency === 'monthly'
    ? anchor.plus({ months: index })
    : anchor.plus({ days: PERIOD_DAYS[frequency] * index });
}

/**
 * A synthetic payroll calendar for the sandbox provider and the demo. Pay dates falling on a
 * weekend or holiday are brought forward to the previous working day (UK payroll convention);
 * the cutoff is the pay date minus `cutoffOffsetWorkingDays` working days.
 */
export function generatePayCalendar(spec: PayCalendarSpec): GeneratedPayDate[] {
  const { frequency, count, cutoffOffsetWorkingDays, holidays } = spec;
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`count must be a non-negative integer, got ${count}`);
  }
  const anchor = parseCalendarDate(spec.anchorPayDate);

  const calendar: GeneratedPayDate[] = [];
  for (let i = 0; i < count; i++) {
    const scheduled = scheduledDate(anchor, frequency, i);
    const scheduledIso = formatCalendarDate(scheduled);
    const payDate = previousWorkingDayOnOrBefore(scheduledIso, holidays);
    const previous = calendar[calendar.length - 1];
    // Only a run of a week or more of holidays could do this; refuse rather than emit a calendar
    // with two pay dates on one day.
    if (previous !== undefined && payDate <= previous.pay_date) {
      throw new RangeError(
        `Pay date ${scheduledIso} moves to ${payDate}, not after the previous pay date ${previous.pay_date}`,
      );
    }
    calendar.push({
      pay_date: payDate,
      payroll_cutoff_date: subtractWorkingDays(payDate, cutoffOffsetWorkingDays, holidays),
      pay_period: payPeriodLabel(frequency, scheduledIso),
    });
  }
  return calendar;
}
