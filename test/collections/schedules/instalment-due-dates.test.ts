import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { describe, expect, it } from 'vitest';
import { instalmentDueDates, MAX_INSTALMENTS } from '../../../src/collections/schedules/instalment-due-dates.ts';

describe('instalmentDueDates', () => {
  it('steps weekly, fortnightly and four-weekly from the start date', () => {
    expect(instalmentDueDates('2026-12-28', 'weekly', 3)).toEqual(['2026-12-28', '2027-01-04', '2027-01-11']);
    expect(instalmentDueDates('2026-12-28', 'fortnightly', 3)).toEqual(['2026-12-28', '2027-01-11', '2027-01-25']);
    expect(instalmentDueDates('2026-12-28', 'four_weekly', 3)).toEqual(['2026-12-28', '2027-01-25', '2027-02-22']);
  });

  it('keeps the day of month monthly, clamped to shorter months without drifting', () => {
    expect(instalmentDueDates('2027-01-31', 'monthly', 5)).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31']);
    expect(instalmentDueDates('2028-01-30', 'monthly', 3)).toEqual(['2028-01-30', '2028-02-29', '2028-03-30']);
    expect(instalmentDueDates('2026-11-15', 'monthly', 3)).toEqual(['2026-11-15', '2026-12-15', '2027-01-15']);
  });

  it('gives one date for a count of one and refuses counts outside 1..120', () => {
    expect(instalmentDueDates('2027-03-01', 'monthly', 1)).toEqual(['2027-03-01']);
    expect(instalmentDueDates('2027-03-01', 'weekly', MAX_INSTALMENTS)).toHaveLength(MAX_INSTALMENTS);
    expect(() => instalmentDueDates('2027-03-01', 'weekly', 0)).toThrow(RangeError);
    expect(() => instalmentDueDates('2027-03-01', 'weekly', 121)).toThrow(RangeError);
    expect(() => instalmentDueDates('2027-03-01', 'weekly', 1.5)).toThrow(RangeError);
    expect(() => instalmentDueDates('2027-02-30', 'weekly', 2)).toThrow(RangeError);
  });

  it('always yields count strictly increasing dates, monthly ones never past the start day', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2090-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('weekly' as const, 'fortnightly' as const, 'four_weekly' as const, 'monthly' as const),
        fc.integer({ min: 1, max: MAX_INSTALMENTS }),
        (start, interval, count) => {
          const startDate = start.toISOString().slice(0, 10);
          const dates = instalmentDueDates(startDate, interval, count);
          expect(dates).toHaveLength(count);
          expect(dates[0]).toBe(startDate);
          for (let i = 1; i < dates.length; i++) expect(dates[i]! > dates[i - 1]!).toBe(true);
          if (interval === 'monthly') {
            const startDay = Number(startDate.slice(8));
            for (const date of dates) {
              const day = Number(date.slice(8));
              const monthEnd = new Date(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)), 0)).getUTCDate();
              expect(day).toBe(Math.min(startDay, monthEnd));
            }
          }
        },
      ),
    );
  });
});
