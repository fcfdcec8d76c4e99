import { describe, expect, it } from 'vitest';
import { regionalHolidays } from '../../../src/directory/calendars/bank-holidays.ts';
import { PayDatesCollide, payDatesFromRule } from '../../../src/directory/calendars/calendar-generation.ts';
import type { PayCalendarRule } from '../../../src/directory/calendars/pay-calendar-resource.ts';
import { payCalendarRuleSchema } from '../../../src/directory/calendars/pay-calendar-resource.ts';
import type { BankHolidayRegion } from '../../../src/platform/db/tables.ts';

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Every `step` days from `first` through `last`: the scheduled dates, worked out without the code under test. */
function every(step: number, first: string, last: string): string[] {
  const out: string[] = [];
  for (let ms = Date.parse(`${first}T00:00:00Z`); ms <= Date.parse(`${last}T00:00:00Z`); ms += step * DAY_MS) out.push(iso(ms));
  return out;
}

/** The scheduled dates with the ones a weekend or bank holiday moves replaced by where they go. */
const moved = (scheduled: string[], moves: Record<string, string>) => scheduled.map((date) => moves[date] ?? date);

const rule = (input: unknown): PayCalendarRule => payCalendarRuleSchema.parse(input);

interface RuleCase {
  name: string;
  region: BankHolidayRegion;
  rule: PayCalendarRule;
  from: string;
  until: string;
  payDates: string[];
}

const YEAR_2026 = { from: '2026-01-01', until: '2026-12-31' };
const YEAR_2027 = { from: '2027-01-01', until: '2027-12-31' };

const cases: RuleCase[] = [
  {
    name: 'monthly, last working day, England and Wales 2026 (Summer bank holiday 31 August)',
    region: 'england-and-wales',
    rule: rule({ frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 5 }),
    ...YEAR_2026,
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
  },
  {
    name: "monthly, last working day, Scotland 2026 (31 August works; St Andrew's Day 30 November does not)",
    region: 'scotland',
    rule: rule({ frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 5 }),
    ...YEAR_2026,
    payDates: [
      '2026-01-30',
      '2026-02-27',
      '2026-03-31',
      '2026-04-30',
      '2026-05-29',
      '2026-06-30',
      '2026-07-31',
      '2026-08-31',
      '2026-09-30',
      '2026-10-30',
      '2026-11-27',
      '2026-12-31',
    ],
  },
  {
    name: 'monthly, the 25th, earlier, England and Wales 2026 (Spring bank holiday, Christmas Day)',
    region: 'england-and-wales',
    rule: rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, if_not_working_day: 'earlier', cutoff_working_days: 3 }),
    ...YEAR_2026,
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
  },
  {
    name: 'monthly, the 25th, later, England and Wales 2026 (Christmas to Tuesday 29 December)',
    region: 'england-and-wales',
    rule: rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, if_not_working_day: 'later', cutoff_working_days: 3 }),
    ...YEAR_2026,
    payDates: [
      '2026-01-26',
      '2026-02-25',
      '2026-03-25',
      '2026-04-27',
      '2026-05-26',
      '2026-06-25',
      '2026-07-27',
      '2026-08-25',
      '2026-09-25',
      '2026-10-26',
      '2026-11-25',
      '2026-12-29',
    ],
  },
  {
    name: 'monthly, the 31st means the last day of shorter months, earlier, England and Wales 2026',
    region: 'england-and-wales',
    rule: rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 31, cutoff_working_days: 0 }),
    ...YEAR_2026,
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
  },
  {
    name: 'monthly, the 1st, later, Scotland 2027 (1 January, then 2 January substitute on the 4th)',
    region: 'scotland',
    rule: rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 1, if_not_working_day: 'later', cutoff_working_days: 2 }),
    ...YEAR_2027,
    payDates: [
      '2027-01-05',
      '2027-02-01',
      '2027-03-01',
      '2027-04-01',
      '2027-05-04',
      '2027-06-01',
      '2027-07-01',
      '2027-08-03',
      '2027-09-01',
      '2027-10-01',
      '2027-11-01',
      '2027-12-01',
    ],
  },
  {
    name: 'monthly, the 1st, later, England and Wales 2027 (4 January works)',
    region: 'england-and-wales',
    rule: rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 1, if_not_working_day: 'later', cutoff_working_days: 2 }),
    ...YEAR_2027,
    payDates: [
      '2027-01-04',
      '2027-02-01',
      '2027-03-01',
      '2027-04-01',
      '2027-05-04',
      '2027-06-01',
      '2027-07-01',
      '2027-08-02',
      '2027-09-01',
      '2027-10-01',
      '2027-11-01',
      '2027-12-01',
    ],
  },
  {
    name: "monthly, the 30th, earlier, Scotland 2027 (St Andrew's Day a Tuesday)",
    region: 'scotland',
    rule: rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 30, cutoff_working_days: 2 }),
    ...YEAR_2027,
    payDates: [
      '2027-01-29',
      '2027-02-26',
      '2027-03-30',
      '2027-04-30',
      '2027-05-28',
      '2027-06-30',
      '2027-07-30',
      '2027-08-30',
      '2027-09-30',
      '2027-10-29',
      '2027-11-29',
      '2027-12-30',
    ],
  },
  {
    name: 'weekly Fridays of 2027, later: 53 pay dates (New Year to Monday 4 January, Good Friday past Easter Monday)',
    region: 'england-and-wales',
    rule: rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-01-01', if_not_working_day: 'later', cutoff_working_days: 2 }),
    ...YEAR_2027,
    payDates: moved(every(7, '2027-01-01', '2027-12-31'), { '2027-01-01': '2027-01-04', '2027-03-26': '2027-03-30' }),
  },
  {
    name: 'weekly Fridays of 2027, earlier: New Year moves back into 2026, leaving 52',
    region: 'england-and-wales',
    rule: rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-01-08', if_not_working_day: 'earlier', cutoff_working_days: 2 }),
    ...YEAR_2027,
    payDates: moved(every(7, '2027-01-08', '2027-12-31'), { '2027-03-26': '2027-03-25' }),
  },
  {
    name: "weekly Wednesdays, Northern Ireland 2027 (St Patrick's Day paid the Tuesday)",
    region: 'northern-ireland',
    rule: rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-03-03', cutoff_working_days: 1 }),
    ...YEAR_2027,
    payDates: moved(every(7, '2027-01-06', '2027-12-29'), { '2027-03-17': '2027-03-16' }),
  },
  {
    name: 'weekly Wednesdays, England and Wales 2027 (17 March works)',
    region: 'england-and-wales',
    rule: rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-03-03', cutoff_working_days: 1 }),
    ...YEAR_2027,
    payDates: every(7, '2027-01-06', '2027-12-29'),
  },
  {
    name: 'weekly Mondays, Northern Ireland 2027 (Easter Monday, May holidays, the Boyne, August, Christmas; 3 January 2028 paid on 31 December)',
    region: 'northern-ireland',
    rule: rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-01-04', cutoff_working_days: 1 }),
    ...YEAR_2027,
    payDates: moved(every(7, '2027-01-04', '2028-01-03'), {
      '2027-03-29': '2027-03-25',
      '2027-05-03': '2027-04-30',
      '2027-05-31': '2027-05-28',
      '2027-07-12': '2027-07-09',
      '2027-08-30': '2027-08-27',
      '2027-12-27': '2027-12-24',
      '2028-01-03': '2027-12-31',
    }),
  },
  {
    name: 'weekly Mondays, Scotland 2027 (2 January substitute, first Monday of August; no Easter Monday, no Boyne)',
    region: 'scotland',
    rule: rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-01-04', cutoff_working_days: 1 }),
    ...YEAR_2027,
    payDates: moved(every(7, '2027-01-11', '2028-01-03'), {
      '2027-05-03': '2027-04-30',
      '2027-05-31': '2027-05-28',
      '2027-08-02': '2027-07-30',
      '2027-12-27': '2027-12-24',
      '2028-01-03': '2027-12-31',
    }),
  },
  {
    name: 'fortnightly Fridays, England and Wales 2026 (Good Friday, Christmas Day)',
    region: 'england-and-wales',
    rule: rule({ frequency: 'fortnightly', pay_day: 'every_period_from_anchor', anchor_date: '2026-01-09', cutoff_working_days: 3 }),
    ...YEAR_2026,
    payDates: moved(every(14, '2026-01-09', '2026-12-25'), { '2026-04-03': '2026-04-02', '2026-12-25': '2026-12-24' }),
  },
  {
    name: "fortnightly Mondays from an anchor years away, Scotland 2026 (the anchor names the cycle; Easter Monday works, St Andrew's Day does not)",
    region: 'scotland',
    rule: rule({ frequency: 'fortnightly', pay_day: 'every_period_from_anchor', anchor_date: '2030-01-07', cutoff_working_days: 3 }),
    ...YEAR_2026,
    payDates: moved(every(14, '2026-01-12', '2026-12-28'), { '2026-05-04': '2026-05-01', '2026-11-30': '2026-11-27', '2026-12-28': '2026-12-24' }),
  },
  {
    name: 'four-weekly Fridays, England and Wales 2026: 1 January 2027 is paid on 31 December, inside the year',
    region: 'england-and-wales',
    rule: rule({ frequency: 'four_weekly', pay_day: 'every_period_from_anchor', anchor_date: '2026-01-30', cutoff_working_days: 2 }),
    ...YEAR_2026,
    payDates: moved(every(28, '2026-01-02', '2027-01-01'), { '2027-01-01': '2026-12-31' }),
  },
];

describe('payDatesFromRule: each frequency and pay-day rule across a year', () => {
  it.each(cases)('$name', ({ region, rule: payRule, from, until, payDates }) => {
    const calendar = payDatesFromRule(payRule, { from, until }, regionalHolidays(region));
    expect(calendar.map((d) => d.pay_date)).toEqual(payDates);
  });

  it.each(cases)('$name: cut-offs are the given working days before, on working days', ({ region, rule: payRule, from, until }) => {
    const holidays = regionalHolidays(region);
    for (const payDate of payDatesFromRule(payRule, { from, until }, holidays)) {
      let cursor = Date.parse(`${payDate.pay_date}T00:00:00Z`);
      for (let n = payRule.cutoff_working_days; n > 0;) {
        cursor -= DAY_MS;
        const day = new Date(cursor).getUTCDay();
        if (day !== 0 && day !== 6 && !holidays.has(iso(cursor))) n--;
      }
      expect(payDate.payroll_cutoff_date).toBe(iso(cursor));
    }
  });
});

describe('payDatesFromRule: cut-offs', () => {
  it.each([
    // Friday 25 December 2026 moves to Thursday 24; five working days before it, Boxing Day's
    // substitute and the weekend skipped, is Thursday 17.
    { payDate: '2026-12-24', cutoff: 5, expected: '2026-12-17' },
    { payDate: '2026-12-24', cutoff: 0, expected: '2026-12-24' },
    { payDate: '2026-05-22', cutoff: 1, expected: '2026-05-21' },
  ])('$payDate with $cutoff working days: $expected', ({ payDate, cutoff, expected }) => {
    const calendar = payDatesFromRule(
      rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, cutoff_working_days: cutoff }),
      YEAR_2026,
      regionalHolidays('england-and-wales'),
    );
    expect(calendar.find((d) => d.pay_date === payDate)?.payroll_cutoff_date).toBe(expected);
  });

  it('a cut-off over the new year in Scotland skips 1, 2 and 4 January 2027', () => {
    const [first] = payDatesFromRule(
      rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-01-08', cutoff_working_days: 3 }),
      { from: '2027-01-08', until: '2027-01-08' },
      regionalHolidays('scotland'),
    );
    expect(first).toEqual({ pay_date: '2027-01-08', payroll_cutoff_date: '2027-01-05', pay_period: '40-2026' });
  });
});

describe('payDatesFromRule: pay periods', () => {
  it('monthly: tax months from the scheduled date, 10-2025 to 9-2026 over 2026', () => {
    const calendar = payDatesFromRule(rule({ frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 5 }), YEAR_2026, regionalHolidays('england-and-wales'));
    expect(calendar.map((d) => d.pay_period)).toEqual([
      '10-2025',
      '11-2025',
      '12-2025',
      '1-2026',
      '2-2026',
      '3-2026',
      '4-2026',
      '5-2026',
      '6-2026',
      '7-2026',
      '8-2026',
      '9-2026',
    ]);
  });

  it('monthly on the 1st to the 5th: the tax month that ends that day', () => {
    const calendar = payDatesFromRule(
      rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 5, cutoff_working_days: 0 }),
      { from: '2027-04-01', until: '2027-05-31' },
      regionalHolidays('england-and-wales'),
    );
    expect(calendar.map((d) => [d.pay_date, d.pay_period])).toEqual([
      ['2027-04-05', '12-2026'],
      ['2027-05-05', '1-2027'],
    ]);
  });

  it('weekly Mondays of the tax year 2026-27: 53 pay dates, the last in tax week 53', () => {
    const calendar = payDatesFromRule(
      rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2026-04-06', if_not_working_day: 'later', cutoff_working_days: 1 }),
      { from: '2026-04-06', until: '2027-04-05' },
      regionalHolidays('england-and-wales'),
    );
    expect(calendar).toHaveLength(53);
    // Easter Monday 6 April 2026 is paid Tuesday 7 April, still tax week 1.
    expect(calendar[0]).toEqual({ pay_date: '2026-04-07', payroll_cutoff_date: '2026-04-02', pay_period: '1-2026' });
    expect(calendar.at(-2)).toEqual({ pay_date: '2027-03-30', payroll_cutoff_date: '2027-03-25', pay_period: '52-2026' });
    expect(calendar.at(-1)).toEqual({ pay_date: '2027-04-05', payroll_cutoff_date: '2027-04-02', pay_period: '53-2026' });
    expect(calendar.map((d) => d.pay_period)).toEqual(Array.from({ length: 53 }, (_, i) => `${i + 1}-2026`));
  });

  it('weekly Fridays of 2027: tax weeks 39-2026 to 52-2026, then 1-2027 to 39-2027', () => {
    const calendar = payDatesFromRule(
      rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-01-01', if_not_working_day: 'later', cutoff_working_days: 2 }),
      YEAR_2027,
      regionalHolidays('england-and-wales'),
    );
    expect(calendar.map((d) => d.pay_period)).toEqual([...Array.from({ length: 14 }, (_, i) => `${i + 39}-2026`), ...Array.from({ length: 39 }, (_, i) => `${i + 1}-2027`)]);
  });

  it('fortnightly and four-weekly label the tax week of the scheduled date', () => {
    const fortnightly = payDatesFromRule(
      rule({ frequency: 'fortnightly', pay_day: 'every_period_from_anchor', anchor_date: '2027-03-26', cutoff_working_days: 1 }),
      { from: '2027-03-01', until: '2027-04-30' },
      regionalHolidays('england-and-wales'),
    );
    expect(fortnightly.map((d) => [d.pay_date, d.pay_period])).toEqual([
      ['2027-03-12', '49-2026'],
      ['2027-03-25', '51-2026'],
      ['2027-04-09', '1-2027'],
      ['2027-04-23', '3-2027'],
    ]);
  });
});

describe('payDatesFromRule: horizons and refusals', () => {
  it('a one-day horizon holds the pay date on it, or nothing', () => {
    const lastWorkingDay = rule({ frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 0 });
    const holidays = regionalHolidays('england-and-wales');
    expect(payDatesFromRule(lastWorkingDay, { from: '2026-08-28', until: '2026-08-28' }, holidays).map((d) => d.pay_date)).toEqual(['2026-08-28']);
    expect(payDatesFromRule(lastWorkingDay, { from: '2026-08-31', until: '2026-08-31' }, holidays)).toEqual([]);
  });

  it('refuses a horizon that ends before it starts', () => {
    expect(() =>
      payDatesFromRule(rule({ frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 0 }), { from: '2026-02-01', until: '2026-01-01' }, new Set()),
    ).toThrow(RangeError);
  });

  it('refuses when added days push two pay dates together, naming them', () => {
    // A two-week shutdown: both Fridays in it would be paid on the Thursday before it.
    const shutdown = new Set(every(1, '2026-06-05', '2026-06-19'));
    const weekly = rule({ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2026-06-05', cutoff_working_days: 1 });
    expect(() => payDatesFromRule(weekly, { from: '2026-06-01', until: '2026-06-30' }, shutdown)).toThrow(PayDatesCollide);
    expect(() => payDatesFromRule(weekly, { from: '2026-06-01', until: '2026-06-30' }, shutdown)).toThrow(/2026-06-12 moves to 2026-06-04/);
  });
});

describe('payCalendarRuleSchema', () => {
  it.each([
    [{ frequency: 'weekly', pay_day: 'last_working_day', cutoff_working_days: 1 }],
    [{ frequency: 'monthly', pay_day: 'every_period_from_anchor', anchor_date: '2026-01-02', cutoff_working_days: 1 }],
    [{ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 32, cutoff_working_days: 1 }],
    [{ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, cutoff_working_days: -1 }],
    [{ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, if_not_working_day: 'never', cutoff_working_days: 1 }],
    [{ frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2026-02-30', cutoff_working_days: 1 }],
    [{ frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 1, day_of_month: 3 }],
  ])('refuses %j', (input) => {
    expect(payCalendarRuleSchema.safeParse(input).success).toBe(false);
  });

  it('moves earlier unless told', () => {
    expect(rule({ frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, cutoff_working_days: 1 })).toMatchObject({ if_not_working_day: 'earlier' });
  });
});
