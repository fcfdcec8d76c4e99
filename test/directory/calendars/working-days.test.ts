import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { DateTime } from 'luxon';
import { addWorkingDays, assertCalendarDate, isWorkingDay, previousWorkingDayOnOrBefore, subtractWorkingDays } from '../../../src/directory/calendars/working-days.ts';
import { publicBankHolidaysBetween } from '../../../src/directory/calendars/bank-holidays.ts';

const UK = new Set(publicBankHolidaysBetween('england-and-wales', 2025, 2027).map((h) => h.date));
const NONE: ReadonlySet<string> = new Set();

// Independent of the code under test: plain UTC epoch-day arithmetic, no luxon.
const DAY_MS = 86_400_000;
const EPOCH_2024 = Date.UTC(2024, 0, 1);
const isoFromOffset = (offset: number): string => new Date(EPOCH_2024 + offset * DAY_MS).toISOString().slice(0, 10);
const offsetOf = (iso: string): number => (Date.parse(`${iso}T00:00:00Z`) - EPOCH_2024) / DAY_MS;
const naiveIsWorking = (iso: string, holidays: ReadonlySet<string>): boolean => {
  const dow = new Date(`${iso}T00:00:00Z`).getUTCDay(); // 0 = Sunday
  return dow !== 0 && dow !== 6 && !holidays.has(iso);
};
/** Working days d with from <= d < to. */
const countWorkingInHalfOpen = (from: string, to: string, holidays: ReadonlySet<string>): number => {
  let n = 0;
  for (let o = offsetOf(from); o < offsetOf(to); o++) if (naiveIsWorking(isoFromOffset(o), holidays)) n++;
  return n;
};

const dateArb = fc.integer({ min: 0, max: 365 * 5 }).map(isoFromOffset); // 2024 .. 2028
const holidaysArb = fc.oneof(
  fc.constant<ReadonlySet<string>>(UK),
  fc.constant<ReadonlySet<string>>(NONE),
  fc.uniqueArray(fc.integer({ min: -30, max: 365 * 5 + 60 }), { maxLength: 120 }).map((offsets): ReadonlySet<string> => new Set(offsets.map(isoFromOffset))),
);

describe('isWorkingDay', () => {
  it.each<[string, ReadonlySet<string>, boolean, string]>([
    ['2026-04-01', UK, true, 'Wednesday'],
    ['2026-04-02', UK, true, 'Thursday before Easter'],
    ['2026-04-03', UK, false, 'Good Friday'],
    ['2026-04-04', UK, false, 'Saturday'],
    ['2026-04-05', UK, false, 'Sunday (Easter Day)'],
    ['2026-04-06', UK, false, 'Easter Monday'],
    ['2026-04-07', UK, true, 'Tuesday after Easter'],
    ['2026-12-25', UK, false, 'Christmas Day (Friday)'],
    ['2026-12-26', UK, false, 'Boxing Day itself is a Saturday'],
    ['2026-12-28', UK, false, 'substitute Boxing Day'],
    ['2026-12-29', UK, true, 'Tuesday after Christmas'],
    ['2027-12-27', UK, false, 'substitute Christmas Day'],
    ['2028-02-29', UK, true, 'leap day, Tuesday'],
    ['2026-04-03', NONE, true, 'Good Friday when no holidays are configured'],
    ['2026-04-06', NONE, true, 'Easter Monday when no holidays are configured'],
    ['2026-04-04', NONE, false, 'Saturday is never a working day'],
    ['2026-04-05', NONE, false, 'Sunday is never a working day'],
    ['2026-04-08', new Set(['2026-04-08']), false, 'any configured holiday'],
  ])('%s -> %s (%s)', (date, holidays, expected) => {
    expect(isWorkingDay(date, holidays)).toBe(expected);
  });

  it.each([
    ['2024-02-29', true, 'leap year'],
    ['2000-02-29', true, 'century divisible by 400'],
    ['2026-02-29', false, 'not a leap year'],
    ['2100-02-29', false, 'century not divisible by 400'],
    ['2026-04-30', true, 'last day of a 30-day month'],
    ['2026-04-31', false, 'day 31 of a 30-day month'],
    ['2026-12-31', true, 'last day of the year'],
    ['2026-00-10', false, 'month 0'],
    ['2026-13-10', false, 'month 13'],
    ['2026-01-00', false, 'day 0'],
    ['2026-01-32', false, 'day 32'],
  ])('assertCalendarDate %s -> valid %s (%s)', (date, valid) => {
    if (valid) expect(() => assertCalendarDate(date)).not.toThrow();
    else expect(() => assertCalendarDate(date)).toThrow(RangeError);
  });

  it('property: assertCalendarDate accepts exactly the dates luxon accepts', () => {
    const candidates = fc
      .tuple(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
      .map(([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
    fc.assert(
      fc.property(candidates, (date) => {
        const luxonValid = DateTime.fromISO(date, { zone: 'UTC' }).isValid;
        let ours = true;
        try {
          assertCalendarDate(date);
        } catch {
          ours = false;
        }
        expect(ours).toBe(luxonValid);
      }),
      { numRuns: 5000 },
    );
  });

  it.each(['2026-02-30', '2026-13-01', '2026-4-1', '20260401', '2026-04-01T00:00:00Z', '', ' 2026-04-01'])('rejects malformed date %j', (date) => {
    expect(() => isWorkingDay(date, UK)).toThrow(RangeError);
  });

  it('agrees with a naive weekday check for every day 2024-2028', () => {
    fc.assert(
      fc.property(dateArb, holidaysArb, (date, holidays) => {
        expect(isWorkingDay(date, holidays)).toBe(naiveIsWorking(date, holidays));
      }),
    );
  });
});

describe('subtractWorkingDays', () => {
  it.each<[string, number, ReadonlySet<string>, string, string]>([
    ['2026-04-08', 1, UK, '2026-04-07', 'plain weekday'],
    ['2026-04-08', 2, UK, '2026-04-02', 'skips Easter Monday, the weekend and Good Friday'],
    ['2026-04-07', 1, UK, '2026-04-02', 'Tuesday after Easter -> Thursday before'],
    ['2026-04-07', 3, UK, '2026-03-31', 'across Easter into March'],
    ['2026-04-10', 5, UK, '2026-04-01', 'a week containing two holidays'],
    ['2026-04-04', 1, UK, '2026-04-02', 'from a Saturday: the start day does not count'],
    ['2026-04-06', 1, UK, '2026-04-02', 'from a holiday: the start day does not count'],
    ['2026-04-06', 0, UK, '2026-04-06', 'zero is the identity, even on a holiday'],
    ['2026-04-08', 0, UK, '2026-04-08', 'zero is the identity'],
    ['2026-03-02', 1, UK, '2026-02-27', 'Monday -> previous Friday'],
    ['2026-01-05', 1, UK, '2026-01-02', 'Monday -> Friday 2 January'],
    ['2026-01-05', 2, UK, '2025-12-31', 'across New Year and the year boundary'],
    ['2026-12-29', 1, UK, '2026-12-24', 'across Christmas and substitute Boxing Day'],
    ['2028-03-01', 1, UK, '2028-02-29', 'into a leap day'],
    ['2026-04-08', 2, NONE, '2026-04-06', 'no holidays configured: Easter Monday counts'],
    ['2026-04-13', 10, UK, '2026-03-26', 'two weeks back across Easter'],
  ])('%s minus %i -> %s (%s)', (date, days, holidays, expected) => {
    expect(subtractWorkingDays(date, days, holidays)).toBe(expected);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('rejects day count %s', (days) => {
    expect(() => subtractWorkingDays('2026-04-08', days, UK)).toThrow(RangeError);
  });

  it('property: with days > 0 the result is a working day, strictly earlier, exactly `days` working days back', () => {
    fc.assert(
      fc.property(dateArb, fc.integer({ min: 1, max: 40 }), holidaysArb, (date, days, holidays) => {
        const result = subtractWorkingDays(date, days, holidays);
        expect(naiveIsWorking(result, holidays)).toBe(true);
        expect(result < date).toBe(true);
        expect(countWorkingInHalfOpen(result, date, holidays)).toBe(days);
      }),
    );
  });
});

describe('addWorkingDays', () => {
  it.each<[string, number, ReadonlySet<string>, string, string]>([
    ['2026-04-02', 1, UK, '2026-04-07', 'over Good Friday, the weekend and Easter Monday'],
    ['2026-04-02', 2, UK, '2026-04-08', 'two past Easter'],
    ['2026-04-03', 1, UK, '2026-04-07', 'from a holiday: the start day does not count'],
    ['2026-04-04', 1, UK, '2026-04-07', 'from a Saturday'],
    ['2026-04-04', 0, UK, '2026-04-04', 'zero is the identity, even on a weekend'],
    ['2026-12-24', 1, UK, '2026-12-29', 'over Christmas and substitute Boxing Day'],
    ['2026-12-31', 1, UK, '2027-01-04', 'over New Year into the next year'],
    ['2027-12-24', 1, UK, '2027-12-29', 'over both 2027 substitute days'],
    ['2026-02-27', 1, UK, '2026-03-02', 'Friday -> Monday'],
    ['2028-02-28', 1, UK, '2028-02-29', 'onto a leap day'],
    ['2026-04-02', 1, NONE, '2026-04-03', 'no holidays configured'],
  ])('%s plus %i -> %s (%s)', (date, days, holidays, expected) => {
    expect(addWorkingDays(date, days, holidays)).toBe(expected);
  });

  it.each([-1, 0.5, Number.NaN])('rejects day count %s', (days) => {
    expect(() => addWorkingDays('2026-04-08', days, UK)).toThrow(RangeError);
  });

  it('property: with days > 0 the result is a working day, strictly later, exactly `days` working days on', () => {
    fc.assert(
      fc.property(dateArb, fc.integer({ min: 1, max: 40 }), holidaysArb, (date, days, holidays) => {
        const result = addWorkingDays(date, days, holidays);
        expect(naiveIsWorking(result, holidays)).toBe(true);
        expect(result > date).toBe(true);
        // Working days d with date < d <= result.
        const next = isoFromOffset(offsetOf(date) + 1);
        const afterResult = isoFromOffset(offsetOf(result) + 1);
        expect(countWorkingInHalfOpen(next, afterResult, holidays)).toBe(days);
      }),
    );
  });

  it('property: subtracting undoes adding when starting from a working day', () => {
    fc.assert(
      fc.property(dateArb, fc.integer({ min: 0, max: 40 }), holidaysArb, (date, days, holidays) => {
        fc.pre(naiveIsWorking(date, holidays));
        expect(subtractWorkingDays(addWorkingDays(date, days, holidays), days, holidays)).toBe(date);
      }),
    );
  });
});

describe('previousWorkingDayOnOrBefore', () => {
  it.each<[string, ReadonlySet<string>, string, string]>([
    ['2026-04-08', UK, '2026-04-08', 'a working day is kept'],
    ['2026-04-06', UK, '2026-04-02', 'Easter Monday -> Thursday before Good Friday'],
    ['2026-04-05', UK, '2026-04-02', 'Easter Sunday'],
    ['2026-04-03', UK, '2026-04-02', 'Good Friday'],
    ['2026-05-31', UK, '2026-05-29', 'Sunday -> Friday'],
    ['2026-08-31', UK, '2026-08-28', 'Summer bank holiday Monday -> Friday'],
    ['2026-01-01', UK, '2025-12-31', "New Year's Day -> previous year"],
    ['2027-12-28', UK, '2027-12-24', 'two substitute days and a weekend'],
    ['2026-04-06', NONE, '2026-04-06', 'no holidays configured'],
  ])('%s -> %s (%s)', (date, holidays, expected) => {
    expect(previousWorkingDayOnOrBefore(date, holidays)).toBe(expected);
  });

  it('property: the result is a working day on or before the input with no working day in between', () => {
    fc.assert(
      fc.property(dateArb, holidaysArb, (date, holidays) => {
        const result = previousWorkingDayOnOrBefore(date, holidays);
        expect(naiveIsWorking(result, holidays)).toBe(true);
        expect(result <= date).toBe(true);
        const afterResult = isoFromOffset(offsetOf(result) + 1);
        const afterDate = isoFromOffset(offsetOf(date) + 1);
        expect(countWorkingInHalfOpen(afterResult, afterDate, holidays)).toBe(0);
      }),
    );
  });
});

describe('England and Wales bank holidays from the library', () => {
  // Derived from the statutory rules, independently of the hand-written list.
  const easterSunday = (year: number): number => {
    // Anonymous Gregorian algorithm (Meeus/Jones/Butcher); returns a UTC timestamp.
    const a = year % 19;
    const b = Math.floor(year / 100);
    const c = year % 100;
    const d = Math.floor(b / 4);
    const e = b % 4;
    const f = Math.floor((b + 8) / 25);
    const g = Math.floor((b - f + 1) / 3);
    const h = (19 * a + b - d - g + 15) % 30;
    const i = Math.floor(c / 4);
    const k = c % 4;
    const l = (32 + 2 * e + 2 * i - h - k) % 7;
    const m = Math.floor((a + 11 * h + 22 * l) / 451);
    const month = Math.floor((h + l - 7 * m + 114) / 31);
    const day = ((h + l - 7 * m + 114) % 31) + 1;
    return Date.UTC(year, month - 1, day);
  };
  const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
  const firstMonday = (year: number, month: number): string => {
    let ms = Date.UTC(year, month - 1, 1);
    while (new Date(ms).getUTCDay() !== 1) ms += DAY_MS;
    return iso(ms);
  };
  const lastMonday = (year: number, month: number): string => {
    let ms = Date.UTC(year, month, 0);
    while (new Date(ms).getUTCDay() !== 1) ms -= DAY_MS;
    return iso(ms);
  };
  const expectedFor = (year: number): string[] => {
    const easter = easterSunday(year);
    // Fixed-date holidays on a weekend move to the next weekday not already taken.
    const fixed: string[] = [];
    const taken = new Set<string>();
    for (const [month, day] of [
      [1, 1],
      [12, 25],
      [12, 26],
    ] as const) {
      let ms = Date.UTC(year, month - 1, day);
      while ([0, 6].includes(new Date(ms).getUTCDay()) || taken.has(iso(ms))) ms += DAY_MS;
      taken.add(iso(ms));
      fixed.push(iso(ms));
    }
    return [...fixed, iso(easter - 2 * DAY_MS), iso(easter + DAY_MS), firstMonday(year, 5), lastMonday(year, 5), lastMonday(year, 8)].sort();
  };

  // Years without a one-off day (a jubilee, a coronation, a state funeral).
  it.each([2025, 2026, 2027, 2028, 2029, 2030, 2031, 2032])('the library gives England and Wales its statutory 8 days in %i', (year) => {
    const listed = publicBankHolidaysBetween('england-and-wales', year, year).map((h) => h.date);
    expect(listed).toEqual(expectedFor(year));
  });
});
