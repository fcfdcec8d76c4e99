import { describe, expect, it } from 'vitest';
import { bankHolidayRegions, publicBankHolidays, publicBankHolidaysBetween, regionalHolidays } from '../../../src/directory/calendars/bank-holidays.ts';
import type { BankHolidayRegion } from '../../../src/platform/db/tables.ts';

// The lists gov.uk/bank-holidays publishes, per region and year: a holiday on a weekend appears
// only as its substitute weekday.
const PUBLISHED: Record<BankHolidayRegion, Record<number, string[]>> = {
  'england-and-wales': {
    2025: ['2025-01-01', '2025-04-18', '2025-04-21', '2025-05-05', '2025-05-26', '2025-08-25', '2025-12-25', '2025-12-26'],
    2026: ['2026-01-01', '2026-04-03', '2026-04-06', '2026-05-04', '2026-05-25', '2026-08-31', '2026-12-25', '2026-12-28'],
    2027: ['2027-01-01', '2027-03-26', '2027-03-29', '2027-05-03', '2027-05-31', '2027-08-30', '2027-12-27', '2027-12-28'],
  },
  scotland: {
    // 2 January; no Easter Monday; summer holiday on the first Monday of August; St Andrew's Day
    // (30 November 2025 a Sunday, so Monday 1 December).
    2025: ['2025-01-01', '2025-01-02', '2025-04-18', '2025-05-05', '2025-05-26', '2025-08-04', '2025-12-01', '2025-12-25', '2025-12-26'],
    2026: ['2026-01-01', '2026-01-02', '2026-04-03', '2026-05-04', '2026-05-25', '2026-08-03', '2026-11-30', '2026-12-25', '2026-12-28'],
    // 2 January 2027 is a Saturday: its substitute is Monday 4 January.
    2027: ['2027-01-01', '2027-01-04', '2027-03-26', '2027-05-03', '2027-05-31', '2027-08-02', '2027-11-30', '2027-12-27', '2027-12-28'],
  },
  'northern-ireland': {
    // St Patrick's Day; the Battle of the Boyne (12 July 2025 a Saturday, so Monday 14 July).
    2025: ['2025-01-01', '2025-03-17', '2025-04-18', '2025-04-21', '2025-05-05', '2025-05-26', '2025-07-14', '2025-08-25', '2025-12-25', '2025-12-26'],
    2026: ['2026-01-01', '2026-03-17', '2026-04-03', '2026-04-06', '2026-05-04', '2026-05-25', '2026-07-13', '2026-08-31', '2026-12-25', '2026-12-28'],
    2027: ['2027-01-01', '2027-03-17', '2027-03-26', '2027-03-29', '2027-05-03', '2027-05-31', '2027-07-12', '2027-08-30', '2027-12-27', '2027-12-28'],
  },
};

const cases = bankHolidayRegions.flatMap((region) => Object.entries(PUBLISHED[region]).map(([year, dates]) => ({ region, year: Number(year), dates })));

describe('publicBankHolidays', () => {
  it.each(cases)('$region $year is the published list', ({ region, year, dates }) => {
    expect(publicBankHolidays(region, year).map((h) => h.date)).toEqual(dates);
  });

  it.each([
    ['england-and-wales', '2026-04-06', 'Easter Monday'],
    ['england-and-wales', '2026-12-28', 'Boxing Day (substitute day)'],
    ['scotland', '2027-01-04', 'January 2nd (substitute day)'],
    ['scotland', '2025-12-01', 'St Andrew’s Day (substitute day)'],
    ['scotland', '2027-11-30', 'St Andrew’s Day'],
    ['northern-ireland', '2027-03-17', 'St Patrick’s Day'],
    ['northern-ireland', '2025-07-14', 'Battle of the Boyne (Orangemen’s Day) (substitute day)'],
  ] as const)('%s %s is named %s', (region, date, name) => {
    expect(publicBankHolidays(region, Number(date.slice(0, 4))).find((h) => h.date === date)?.name).toBe(name);
  });

  it.each([
    // One-off days the library keeps: the Platinum Jubilee, the Queen's funeral, the coronation.
    ['2022-06-03', 2022],
    ['2022-09-19', 2022],
    ['2023-05-08', 2023],
  ])('has the one-off day %s in every region', (date, year) => {
    for (const region of bankHolidayRegions) expect(publicBankHolidays(region, year).map((h) => h.date)).toContain(date);
  });

  it('lists no weekend day and no day twice, in any region, for decades', () => {
    for (const region of bankHolidayRegions) {
      const dates = publicBankHolidaysBetween(region, 2020, 2060).map((h) => h.date);
      expect(new Set(dates).size).toBe(dates.length);
      expect([...dates].sort()).toEqual(dates);
      for (const date of dates) expect([0, 6]).not.toContain(new Date(`${date}T00:00:00Z`).getUTCDay());
    }
  });

  it('refuses what is not a year', () => {
    expect(() => publicBankHolidays('scotland', 2026.5)).toThrow(RangeError);
    expect(() => publicBankHolidays('scotland', 0)).toThrow(RangeError);
  });
});

describe('publicBankHolidaysBetween', () => {
  it('joins the years in order', () => {
    expect(publicBankHolidaysBetween('england-and-wales', 2025, 2027).map((h) => h.date)).toEqual([
      ...PUBLISHED['england-and-wales'][2025]!,
      ...PUBLISHED['england-and-wales'][2026]!,
      ...PUBLISHED['england-and-wales'][2027]!,
    ]);
  });
});

describe('regionalHolidays', () => {
  it.each([
    { region: 'england-and-wales', date: '2026-04-06', holiday: true },
    { region: 'scotland', date: '2026-04-06', holiday: false },
    { region: 'scotland', date: '2027-01-04', holiday: true },
    { region: 'england-and-wales', date: '2027-01-04', holiday: false },
    { region: 'northern-ireland', date: '2027-07-12', holiday: true },
    { region: 'scotland', date: '2027-07-12', holiday: false },
    // Any year, not only those a list was written for.
    { region: 'england-and-wales', date: '2041-12-25', holiday: true },
    { region: 'england-and-wales', date: '1999-12-28', holiday: true },
    { region: 'england-and-wales', date: '2041-12-24', holiday: false },
  ] as const)('$date in $region: $holiday', ({ region, date, holiday }) => {
    expect(regionalHolidays(region).has(date)).toBe(holiday);
  });

  it('adds the days operators added, in their region only', () => {
    const withFuneral = regionalHolidays('scotland', ['2027-06-07']);
    expect(withFuneral.has('2027-06-07')).toBe(true);
    expect(withFuneral.has('2027-11-30')).toBe(true);
    expect(regionalHolidays('scotland').has('2027-06-07')).toBe(false);
  });

  it('refuses an added day that is no date', () => {
    expect(() => regionalHolidays('scotland', ['2027-02-30'])).toThrow(RangeError);
  });
});
