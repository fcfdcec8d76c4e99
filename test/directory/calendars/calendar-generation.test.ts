import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { generatePayCalendar, payPeriodLabel, type PayFrequency } from '../../../src/directory/calendars/calendar-generation.ts';
import { publicBankHolidaysBetween } from '../../../src/directory/calendars/bank-holidays.ts';

const UK = new Set(publicBankHolidaysBetween('england-and-wales', 2025, 2027).map((h) => h.date));
const NONE: ReadonlySet<string> = new Set();
const PAY_PERIOD = /^[0-9]+-[0-9]+$/;

const DAY_MS = 86_400_000;
const offsetOf = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / DAY_MS;
const isoOf = (offset: number): string => new Date(offset * DAY_MS).toISOString().slice(0, 10);
const naiveIsWorking = (iso: string, holidays: ReadonlySet<string>): boolean => {
  const dow = new Date(`${iso}T00:00:00Z`).getUTCDay();
  return dow !== 0 && dow !== 6 && !holidays.has(iso);
};

const column = <K extends 'pay_date' | 'payroll_cutoff_date' | 'pay_period'>(rows: ReadonlyArray<Record<K, string>>, key: K): string[] => rows.map((r) => r[key]);

describe('generatePayCalendar: exact calendars', () => {
  it.each([
    {
      name: 'weekly Fridays over Easter 2026 (Good Friday paid Thursday)',
      spec: { frequency: 'weekly', anchorPayDate: '2026-03-27', count: 5, cutoffOffsetWorkingDays: 2, holidays: UK },
      payDates: ['2026-03-27', '2026-04-02', '2026-04-10', '2026-04-17', '2026-04-24'],
      cutoffs: ['2026-03-25', '2026-03-31', '2026-04-08', '2026-04-15', '2026-04-22'],
      periods: ['51-2025', '52-2025', '1-2026', '2-2026', '3-2026'],
    },
    {
      name: 'weekly without holidays keeps Good Friday',
      spec: { frequency: 'weekly', anchorPayDate: '2026-03-27', count: 3, cutoffOffsetWorkingDays: 2, holidays: NONE },
      payDates: ['2026-03-27', '2026-04-03', '2026-04-10'],
      cutoffs: ['2026-03-25', '2026-04-01', '2026-04-08'],
      periods: ['51-2025', '52-2025', '1-2026'],
    },
    {
      name: 'weekly Mondays: Easter Monday paid the Thursday before, label stays in its own tax week',
      spec: { frequency: 'weekly', anchorPayDate: '2026-03-30', count: 3, cutoffOffsetWorkingDays: 1, holidays: UK },
      payDates: ['2026-03-30', '2026-04-02', '2026-04-13'],
      cutoffs: ['2026-03-27', '2026-04-01', '2026-04-10'],
      periods: ['52-2025', '1-2026', '2-2026'],
    },
    {
      name: 'weekly into tax week 53 (Easter Monday 2027 paid the Thursday before Good Friday)',
      spec: { frequency: 'weekly', anchorPayDate: '2027-03-22', count: 4, cutoffOffsetWorkingDays: 0, holidays: UK },
      payDates: ['2027-03-22', '2027-03-25', '2027-04-05', '2027-04-12'],
      cutoffs: ['2027-03-22', '2027-03-25', '2027-04-05', '2027-04-12'],
      periods: ['51-2026', '52-2026', '53-2026', '1-2027'],
    },
    {
      name: 'fortnightly over New Year 2027',
      spec: { frequency: 'fortnightly', anchorPayDate: '2026-12-18', count: 3, cutoffOffsetWorkingDays: 3, holidays: UK },
      payDates: ['2026-12-18', '2026-12-31', '2027-01-15'],
      cutoffs: ['2026-12-15', '2026-12-24', '2027-01-12'],
      periods: ['37-2026', '39-2026', '41-2026'],
    },
    {
      name: 'four-weekly from 6 March 2026',
      spec: { frequency: 'four_weekly', anchorPayDate: '2026-03-06', count: 5, cutoffOffsetWorkingDays: 3, holidays: UK },
      payDates: ['2026-03-06', '2026-04-02', '2026-05-01', '2026-05-29', '2026-06-26'],
      cutoffs: ['2026-03-03', '2026-03-30', '2026-04-28', '2026-05-26', '2026-06-23'],
      periods: ['48-2025', '52-2025', '4-2026', '8-2026', '12-2026'],
    },
    {
      name: 'monthly on the 31st, clamped to month end and brought forward',
      spec: { frequency: 'monthly', anchorPayDate: '2026-01-31', count: 12, cutoffOffsetWorkingDays: 3, holidays: UK },
      payDates: [
        '2026-01-30',
        '2026-02-27',
        '2026-03-31',
        '2026-04-30',
        '2026-05-29',
        '2026-06-30',
        '2026-07-31',
        '2026-08-28',
        '2026-09-30',
        '2026-10-30',
        '2026-11-30',
        '2026-12-31',
      ],
      cutoffs: [
        '2026-01-27',
        '2026-02-24',
        '2026-03-26',
        '2026-04-27',
        '2026-05-26',
        '2026-06-25',
        '2026-07-28',
        '2026-08-25',
        '2026-09-25',
        '2026-10-27',
        '2026-11-25',
        '2026-12-24',
      ],
      periods: ['10-2025', '11-2025', '12-2025', '1-2026', '2-2026', '3-2026', '4-2026', '5-2026', '6-2026', '7-2026', '8-2026', '9-2026'],
    },
    {
      name: 'monthly on the 31st in a leap year keeps 29 February',
      spec: { frequency: 'monthly', anchorPayDate: '2028-01-31', count: 3, cutoffOffsetWorkingDays: 1, holidays: NONE },
      payDates: ['2028-01-31', '2028-02-29', '2028-03-31'],
      cutoffs: ['2028-01-28', '2028-02-28', '2028-03-30'],
      periods: ['10-2027', '11-2027', '12-2027'],
    },
    {
      name: 'monthly on the 30th: February clamps, later months return to the 30th',
      spec: { frequency: 'monthly', anchorPayDate: '2026-01-30', count: 3, cutoffOffsetWorkingDays: 0, holidays: UK },
      payDates: ['2026-01-30', '2026-02-27', '2026-03-30'],
      cutoffs: ['2026-01-30', '2026-02-27', '2026-03-30'],
      periods: ['10-2025', '11-2025', '12-2025'],
    },
    {
      name: 'monthly on the 25th: weekends, Spring bank holiday and Christmas',
      spec: { frequency: 'monthly', anchorPayDate: '2026-01-25', count: 12, cutoffOffsetWorkingDays: 1, holidays: UK },
      payDates: [
        '2026-01-23',
        '2026-02-25',
        '2026-03-25',
        '2026-04-24',
        '2026-05-22',
        '2026-06-25',
        '2026-07-24',
        '2026-08-25',
        '2026-09-25',
        '2026-10-23',
        '2026-11-25',
        '2026-12-24',
      ],
      cutoffs: [
        '2026-01-22',
        '2026-02-24',
        '2026-03-24',
        '2026-04-23',
        '2026-05-21',
        '2026-06-24',
        '2026-07-23',
        '2026-08-24',
        '2026-09-24',
        '2026-10-22',
        '2026-11-24',
        '2026-12-23',
      ],
      periods: ['10-2025', '11-2025', '12-2025', '1-2026', '2-2026', '3-2026', '4-2026', '5-2026', '6-2026', '7-2026', '8-2026', '9-2026'],
    },
    {
      name: "monthly on the 1st: New Year's Day paid in the previous year, days 1-5 in the previous tax month",
      spec: { frequency: 'monthly', anchorPayDate: '2026-01-01', count: 5, cutoffOffsetWorkingDays: 1, holidays: UK },
      payDates: ['2025-12-31', '2026-01-30', '2026-02-27', '2026-04-01', '2026-05-01'],
      cutoffs: ['2025-12-30', '2026-01-29', '2026-02-26', '2026-03-31', '2026-04-30'],
      periods: ['9-2025', '10-2025', '11-2025', '12-2025', '1-2026'],
    },
  ] as const)('$name', ({ spec, payDates, cutoffs, periods }) => {
    const calendar = generatePayCalendar(spec);
    expect(column(calendar, 'pay_date')).toEqual(payDates);
    expect(column(calendar, 'payroll_cutoff_date')).toEqual(cutoffs);
    expect(column(calendar, 'pay_period')).toEqual(periods);
    expect(Object.keys(calendar[0] ?? {}).sort()).toEqual(['pay_date', 'pay_period', 'payroll_cutoff_date']);
  });

  it('count 0 gives an empty calendar', () => {
    expect(generatePayCalendar({ frequency: 'weekly', anchorPayDate: '2026-01-02', count: 0, cutoffOffsetWorkingDays: 2, holidays: UK })).toEqual([]);
  });

  it.each([
    ['negative count', { count: -1 }],
    ['fractional count', { count: 1.5 }],
    ['negative cutoff offset', { cutoffOffsetWorkingDays: -1 }],
    ['malformed anchor', { anchorPayDate: '2026-02-30' }],
  ])('rejects %s', (_label, override) => {
    expect(() =>
      generatePayCalendar({
        frequency: 'monthly',
        anchorPayDate: '2026-01-31',
        count: 3,
        cutoffOffsetWorkingDays: 2,
        holidays: UK,
        ...override,
      }),
    ).toThrow(RangeError);
  });

  it('refuses to emit two pay dates on one day when a whole week is holidays', () => {
    const shutdown = new Set(['2026-06-08', '2026-06-09', '2026-06-10', '2026-06-11', '2026-06-12']);
    expect(() => generatePayCalendar({ frequency: 'weekly', anchorPayDate: '2026-06-05', count: 2, cutoffOffsetWorkingDays: 1, holidays: shutdown })).toThrow(RangeError);
  });
});

describe('payPeriodLabel', () => {
  it.each<[PayFrequency, string, string, string]>([
    ['weekly', '2026-04-06', '1-2026', 'first day of the tax year'],
    ['weekly', '2026-04-12', '1-2026', 'last day of tax week 1'],
    ['weekly', '2026-04-13', '2-2026', 'first day of tax week 2'],
    ['weekly', '2026-04-05', '53-2025', 'last day of the 2025-26 tax year'],
    ['weekly', '2028-04-05', '53-2027', 'last day of a leap tax year'],
    ['weekly', '2028-04-04', '53-2027', 'day 365 of a leap tax year'],
    ['weekly', '2028-04-03', '52-2027', 'day 364 of a leap tax year'],
    ['fortnightly', '2026-05-29', '8-2026', 'fortnightly uses the tax week'],
    ['four_weekly', '2026-05-29', '8-2026', 'four-weekly uses the tax week'],
    ['monthly', '2026-04-06', '1-2026', 'tax month 1 starts 6 April'],
    ['monthly', '2026-05-05', '1-2026', 'tax month 1 ends 5 May'],
    ['monthly', '2026-05-06', '2-2026', 'tax month 2 starts 6 May'],
    ['monthly', '2026-04-05', '12-2025', 'last day of the tax year'],
    ['monthly', '2026-01-05', '9-2025', 'tax month 9 runs into January'],
    ['monthly', '2026-01-06', '10-2025', 'tax month 10 starts 6 January'],
    ['monthly', '2025-12-31', '9-2025', "New Year's Eve"],
  ])('%s %s -> %s (%s)', (frequency, date, expected) => {
    expect(payPeriodLabel(frequency, date)).toBe(expected);
    expect(expected).toMatch(PAY_PERIOD);
  });
});

describe('generatePayCalendar properties', () => {
  const PERIOD: Record<Exclude<PayFrequency, 'monthly'>, number> = { weekly: 7, fortnightly: 14, four_weekly: 28 };
  const frequencyArb = fc.constantFrom<PayFrequency>('weekly', 'fortnightly', 'four_weekly', 'monthly');
  const anchorArb = fc.integer({ min: offsetOf('2025-01-01'), max: offsetOf('2027-12-31') }).map(isoOf);
  // Random holidays only on Mondays and Fridays: realistic (long weekends), never a whole week off.
  const holidaysArb = fc.oneof(
    fc.constant<ReadonlySet<string>>(UK),
    fc.constant<ReadonlySet<string>>(NONE),
    fc
      .uniqueArray(fc.integer({ min: offsetOf('2024-12-01'), max: offsetOf('2031-12-31') }), { maxLength: 150 })
      .map((offsets): ReadonlySet<string> => new Set(offsets.map(isoOf).filter((d) => [1, 5].includes(new Date(`${d}T00:00:00Z`).getUTCDay())))),
  );
  const specArb = fc.record({
    frequency: frequencyArb,
    anchorPayDate: anchorArb,
    count: fc.integer({ min: 1, max: 60 }),
    cutoffOffsetWorkingDays: fc.integer({ min: 0, max: 10 }),
    holidays: holidaysArb,
  });

  it('property: pay dates are working days, strictly increasing; cutoffs are working days on or before them', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const calendar = generatePayCalendar(spec);
        expect(calendar).toHaveLength(spec.count);
        calendar.forEach((row, i) => {
          expect(naiveIsWorking(row.pay_date, spec.holidays)).toBe(true);
          expect(naiveIsWorking(row.payroll_cutoff_date, spec.holidays)).toBe(true);
          if (spec.cutoffOffsetWorkingDays === 0) expect(row.payroll_cutoff_date).toBe(row.pay_date);
          else expect(row.payroll_cutoff_date < row.pay_date).toBe(true);
          const previous = calendar[i - 1];
          if (previous) expect(row.pay_date > previous.pay_date).toBe(true);
        });
      }),
    );
  });

  it('property: pay periods match <n>-<n> and are unique within the calendar', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const periods = generatePayCalendar(spec).map((r) => r.pay_period);
        for (const p of periods) expect(p).toMatch(PAY_PERIOD);
        expect(new Set(periods).size).toBe(periods.length);
      }),
    );
  });

  it('property: each pay date is the last working day on or before its scheduled date', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const calendar = generatePayCalendar(spec);
        const anchor = offsetOf(spec.anchorPayDate);
        const anchorDate = new Date(anchor * DAY_MS);
        calendar.forEach((row, i) => {
          let scheduled: number;
          if (spec.frequency === 'monthly') {
            const y = anchorDate.getUTCFullYear();
            const m = anchorDate.getUTCMonth() + i;
            const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
            scheduled = Date.UTC(y, m, Math.min(anchorDate.getUTCDate(), lastDay)) / DAY_MS;
          } else {
            scheduled = anchor + PERIOD[spec.frequency] * i;
          }
          const pay = offsetOf(row.pay_date);
          expect(pay <= scheduled).toBe(true);
          for (let d = pay + 1; d <= scheduled; d++) expect(naiveIsWorking(isoOf(d), spec.holidays)).toBe(false);
        });
      }),
    );
  });
});
