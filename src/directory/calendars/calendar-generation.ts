import type { DateTime } from 'luxon';
import type { PayCalendarRule } from './pay-calendar-resource.ts';
import { type HolidayCalendar, formatCalendarDate, nextWorkingDayOnOrAfter, parseCalendarDate, previousWorkingDayOnOrBefore, subtractWorkingDays } from './working-days.ts';

export type PayFrequency = 'weekly' | 'fortnightly' | 'four_weekly' | 'monthly';

export interface PayCalendarSpec {
  frequency: PayFrequency;
  /** The first scheduled (contractual) pay date; it is itself moved if it is a non-working day. */
  anchorPayDate: string;
  count: number;
  cutoffOffsetWorkingDays: number;
  holidays: HolidayCalendar;
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

function scheduledDate(anchor: DateTime<true>, frequency: PayFrequency, index: number): DateTime<true> {
  // Always offset from the anchor rather than from the previous date, so a 31st anchor gives
  // 31 Jan, 28 Feb, 31 Mar (luxon clamps to month end) instead of drifting to the 28th forever.
  return frequency === 'monthly' ? anchor.plus({ months: index }) : anchor.plus({ days: PERIOD_DAYS[frequency] * index });
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
      throw new RangeError(`Pay date ${scheduledIso} moves to ${payDate}, not after the previous pay date ${previous.pay_date}`);
    }
    calendar.push({
      pay_date: payDate,
      payroll_cutoff_date: subtractWorkingDays(payDate, cutoffOffsetWorkingDays, holidays),
      pay_period: payPeriodLabel(frequency, scheduledIso),
    });
  }
  return calendar;
}

/** Two scheduled dates moved onto the same or crossing working days: the rule cannot be kept. */
export class PayDatesCollide extends RangeError {
  constructor(
    readonly scheduledDate: string,
    readonly payDate: string,
    readonly previousPayDate: string,
  ) {
    super(`Pay date ${scheduledDate} moves to ${payDate}, not after the previous pay date ${previousPayDate}`);
  }
}

export interface PayCalendarHorizon {
  /** Pay dates on or after this day are generated. */
  from: string;
  /** Pay dates on or before this day are generated. */
  until: string;
}

/**
 * Scheduled dates are moved to a working day before the horizon is applied, so one moved across
 * its edge is still found: a month's worth of days either side covers any real run of holidays.
 */
const HORIZON_MARGIN_DAYS = 31;

function scheduledDatesOf(rule: PayCalendarRule, from: DateTime<true>, until: DateTime<true>): DateTime<true>[] {
  const first = from.minus({ days: HORIZON_MARGIN_DAYS });
  const last = until.plus({ days: HORIZON_MARGIN_DAYS });
  const dates: DateTime<true>[] = [];
  if (rule.pay_day === 'every_period_from_anchor') {
    const anchor = parseCalendarDate(rule.anchor_date);
    const period = PERIOD_DAYS[rule.frequency];
    // Whole periods from the anchor, backwards too: the anchor names the cycle, not its start.
    let index = Math.ceil(first.diff(anchor, 'days').days / period);
    for (let date = anchor.plus({ days: period * index }); date <= last; date = anchor.plus({ days: period * ++index })) {
      dates.push(date);
    }
    return dates;
  }
  for (let month = first.startOf('month'); month <= last; month = month.plus({ months: 1 })) {
    const day = rule.pay_day === 'last_working_day' ? month.daysInMonth : Math.min(rule.day_of_month, month.daysInMonth);
    dates.push(month.set({ day }));
  }
  return dates;
}

/**
 * The pay dates a pay-calendar rule gives within a horizon, each with its cut-off and pay period.
 *
 * - monthly `last_working_day`: the month's last day, brought back to a working day;
 * - monthly `day_of_month` N: day N (the month's last day when the month is shorter), moved to the
 *   working day before (`earlier`) or after (`later`) when it is not one;
 * - weekly, fortnightly, four-weekly `every_period_from_anchor`: the anchor date and every 7, 14 or
 *   28 days before and after it, moved the same way.
 *
 * The cut-off is `cutoff_working_days` working days before the pay date; the pay period is the tax
 * week or month of the scheduled date (see payPeriodLabel), so a year of 53 weekly pay dates ends
 * in tax week 53. A pay date counts as within the horizon by the day it is paid.
 */
export function payDatesFromRule(rule: PayCalendarRule, horizon: PayCalendarHorizon, holidays: HolidayCalendar): GeneratedPayDate[] {
  const from = parseCalendarDate(horizon.from);
  const until = parseCalendarDate(horizon.until);
  if (until < from) throw new RangeError(`Horizon ends (${horizon.until}) before it starts (${horizon.from})`);
  const moveToWorkingDay = rule.pay_day !== 'last_working_day' && rule.if_not_working_day === 'later' ? nextWorkingDayOnOrAfter : previousWorkingDayOnOrBefore;

  const calendar: GeneratedPayDate[] = [];
  let previous: string | undefined;
  for (const scheduled of scheduledDatesOf(rule, from, until)) {
    const scheduledIso = formatCalendarDate(scheduled);
    const payDate = moveToWorkingDay(scheduledIso, holidays);
    if (previous !== undefined && payDate <= previous) throw new PayDatesCollide(scheduledIso, payDate, previous);
    previous = payDate;
    if (payDate < horizon.from || payDate > horizon.until) continue;
    calendar.push({
      pay_date: payDate,
      payroll_cutoff_date: subtractWorkingDays(payDate, rule.cutoff_working_days, holidays),
      pay_period: payPeriodLabel(rule.frequency, scheduledIso),
    });
  }
  return calendar;
}
