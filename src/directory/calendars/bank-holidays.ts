import Holidays from 'date-holidays';
import { z } from 'zod';
import type { BankHolidayRegion } from '../../platform/db/tables.ts';
import type { HolidayCalendar } from './working-days.ts';
import { assertCalendarDate } from './working-days.ts';

export const bankHolidayRegions = ['england-and-wales', 'scotland', 'northern-ireland'] as const satisfies readonly BankHolidayRegion[];

// No component id: payroll and provider resources name the region too, and zod allows an id once.
export const bankHolidayRegionSchema = z.enum(bankHolidayRegions).meta({
  description: 'Whose bank holidays a payroll keeps: England and Wales, Scotland or Northern Ireland',
  example: 'scotland',
});

/**
 * date-holidays names the UK nations by their ISO 3166-2 subdivision codes. Wales keeps exactly
 * England's bank holidays (the Banking and Financial Dealings Act 1971 treats them as one), so
 * England's list stands for both.
 */
const LIBRARY_STATE: Record<BankHolidayRegion, string> = {
  'england-and-wales': 'ENG',
  scotland: 'SCT',
  'northern-ireland': 'NIR',
};

export interface PublicBankHoliday {
  date: string;
  name: string;
}

const calendars = new Map<BankHolidayRegion, Holidays>();
const byYear = new Map<string, readonly PublicBankHoliday[]>();

function libraryFor(region: BankHolidayRegion): Holidays {
  let holidays = calendars.get(region);
  if (!holidays) {
    // Only public holidays: the library also lists observances (Mother's Day) no bank closes for.
    holidays = new Holidays('GB', LIBRARY_STATE[region], { types: ['public', 'bank'] });
    calendars.set(region, holidays);
  }
  return holidays;
}

function isWeekend(date: string): boolean {
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
  return weekday === 0 || weekday === 6;
}

/**
 * The bank holidays of a region in one year, as gov.uk publishes them: a holiday falling on a
 * weekend is listed by its substitute weekday only (the library lists both, and the weekend day
 * is no working day anyway). Sorted by date.
 */
export function publicBankHolidays(region: BankHolidayRegion, year: number): readonly PublicBankHoliday[] {
  if (!Number.isSafeInteger(year) || year < 1 || year > 9999) throw new RangeError(`Not a year: ${year}`);
  const key = `${region}:${year}`;
  let holidays = byYear.get(key);
  if (!holidays) {
    const seen = new Set<string>();
    holidays = libraryFor(region)
      .getHolidays(year, 'en')
      // The library's date is "YYYY-MM-DD hh:mm:ss" in the country's own time zone: the calendar day.
      .map((holiday) => ({ date: holiday.date.slice(0, 10), name: holiday.name }))
      .filter((holiday) => !isWeekend(holiday.date) && !seen.has(holiday.date) && seen.add(holiday.date))
      .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    byYear.set(key, holidays);
  }
  return holidays;
}

/** Every bank holiday of a region from `fromYear` to `toYear`, both included. */
export function publicBankHolidaysBetween(region: BankHolidayRegion, fromYear: number, toYear: number): PublicBankHoliday[] {
  const out: PublicBankHoliday[] = [];
  for (let year = fromYear; year <= toYear; year++) out.push(...publicBankHolidays(region, year));
  return out;
}

/**
 * A region's non-working days for any year: the library's bank holidays and the one-off days an
 * operator added. Years are computed when first asked, so date arithmetic may run past any horizon
 * without a list running out.
 */
export function regionalHolidays(region: BankHolidayRegion, adHocDates: Iterable<string> = []): HolidayCalendar {
  const adHoc = new Set<string>();
  for (const date of adHocDates) {
    assertCalendarDate(date);
    adHoc.add(date);
  }
  const years = new Map<number, ReadonlySet<string>>();
  return {
    has(date: string): boolean {
      if (adHoc.has(date)) return true;
      const year = Number(date.slice(0, 4));
      let dates = years.get(year);
      if (!dates) {
        dates = new Set(publicBankHolidays(region, year).map((holiday) => holiday.date));
        years.set(year, dates);
      }
      return dates.has(date);
    },
  };
}
