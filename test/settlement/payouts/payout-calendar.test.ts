import { describe, expect, it } from 'vitest';
import { publicBankHolidaysBetween, regionalHolidays } from '../../../src/directory/calendars/bank-holidays.ts';
import { payoutExecutionDate, settlementCutoff } from '../../../src/settlement/payouts/payout-calendar.ts';

// The banks' calendar of a payout: which pay dates a run on `today` pays (settlementCutoff) and the
// day its payment file asks the bank to move the money (payoutExecutionDate). Held to worked examples
// over weekends, Christmas and New Year, and Easter 2026 and 2027, then to an oracle of plain epoch-day
// arithmetic (no luxon, no code under test) for every day of 2025 to 2028 and every delay from 0 to 6.

const ENGLAND_AND_WALES = regionalHolidays('england-and-wales');
const LISTED = new Set(publicBankHolidaysBetween('england-and-wales', 2024, 2029).map((holiday) => holiday.date));
const NONE: ReadonlySet<string> = new Set();

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const ms = (date: string) => Date.parse(`${date}T00:00:00Z`);
const plusDays = (date: string, days: number) => iso(ms(date) + days * DAY_MS);
const isBusinessDay = (date: string, holidays: ReadonlySet<string>) => {
  const weekday = new Date(ms(date)).getUTCDay();
  return weekday !== 0 && weekday !== 6 && !holidays.has(date);
};
/** The business days on or before `today`, latest first, as many as asked. */
const businessDaysBackFrom = (today: string, count: number, holidays: ReadonlySet<string>) => {
  const days: string[] = [];
  for (let date = today; days.length < count; date = plusDays(date, -1)) if (isBusinessDay(date, holidays)) days.push(date);
  return days;
};
/** Business days d with from < d <= to. */
const businessDaysAfterUpTo = (from: string, to: string, holidays: ReadonlySet<string>) => {
  let n = 0;
  for (let date = plusDays(from, 1); date <= to; date = plusDays(date, 1)) if (isBusinessDay(date, holidays)) n++;
  return n;
};
const everyDay = (from: string, to: string) => {
  const days: string[] = [];
  for (let date = from; date <= to; date = plusDays(date, 1)) days.push(date);
  return days;
};

describe('the calendar the tests use', () => {
  it('is the England and Wales bank holidays, substitutes included', () => {
    for (const holiday of ['2026-04-03', '2026-04-06', '2026-12-25', '2026-12-28', '2027-01-01', '2027-03-26', '2027-03-29', '2027-12-27', '2027-12-28']) {
      expect(ENGLAND_AND_WALES.has(holiday), holiday).toBe(true);
      expect(LISTED.has(holiday), holiday).toBe(true);
    }
    // Boxing Day 2026 is a Saturday: its substitute is Monday the 28th, the day itself no holiday listed.
    expect(LISTED.has('2026-12-26')).toBe(false);
  });
});

describe('settlementCutoff', () => {
  it.each([
    // today, delay, cutoff: weekdays, as before
    ['2026-12-01', 1, '2026-11-30'], // Tuesday pays Monday's pay date
    ['2026-11-30', 1, '2026-11-27'], // Monday pays Friday's
    ['2026-12-01', 0, '2026-12-01'],
    ['2026-12-03', 2, '2026-12-01'],
    // A weekend counts from Friday: Saturday's run is Friday's, so Friday's pay date waits for Monday.
    ['2026-11-28', 1, '2026-11-26'], // Saturday
    ['2026-11-29', 1, '2026-11-26'], // Sunday
    ['2026-11-28', 0, '2026-11-27'],
    ['2026-11-29', 2, '2026-11-25'],
    // Easter 2026: Good Friday 3 April, Easter Monday 6 April.
    ['2026-04-02', 1, '2026-04-01'], // Maundy Thursday
    ['2026-04-03', 1, '2026-04-01'], // Good Friday counts as Thursday
    ['2026-04-04', 1, '2026-04-01'],
    ['2026-04-05', 1, '2026-04-01'],
    ['2026-04-06', 1, '2026-04-01'], // Easter Monday
    ['2026-04-07', 1, '2026-04-02'], // Tuesday pays Thursday's: one business day (Tuesday) since
    ['2026-04-08', 1, '2026-04-07'],
    ['2026-04-06', 0, '2026-04-02'],
    ['2026-04-07', 3, '2026-03-31'],
    // Christmas and New Year 2026/27: 25 December (Friday), 28 December (Boxing Day's substitute), 1 January (Friday).
    ['2026-12-24', 1, '2026-12-23'],
    ['2026-12-25', 1, '2026-12-23'],
    ['2026-12-26', 1, '2026-12-23'],
    ['2026-12-27', 1, '2026-12-23'],
    ['2026-12-28', 1, '2026-12-23'],
    ['2026-12-29', 1, '2026-12-24'],
    ['2026-12-29', 0, '2026-12-29'],
    ['2026-12-31', 1, '2026-12-30'],
    ['2027-01-01', 1, '2026-12-30'],
    ['2027-01-02', 1, '2026-12-30'],
    ['2027-01-03', 1, '2026-12-30'],
    ['2027-01-04', 1, '2026-12-31'],
    ['2027-01-04', 2, '2026-12-30'],
    ['2027-01-05', 1, '2027-01-04'],
    // Easter 2027: Good Friday 26 March, Easter Monday 29 March.
    ['2027-03-26', 1, '2027-03-24'],
    ['2027-03-27', 0, '2027-03-25'],
    ['2027-03-29', 1, '2027-03-24'],
    ['2027-03-30', 1, '2027-03-25'],
    ['2027-03-31', 2, '2027-03-25'],
    // Christmas 2027: 25 and 26 December a weekend, substitutes 27 and 28.
    ['2027-12-25', 1, '2027-12-23'],
    ['2027-12-28', 1, '2027-12-23'],
    ['2027-12-29', 1, '2027-12-24'],
    ['2027-12-30', 1, '2027-12-29'],
  ] as const)('on %s with %i working day(s) of delay settles pay dates up to %s', (today, delay, cutoff) => {
    expect(settlementCutoff(today, delay, ENGLAND_AND_WALES)).toBe(cutoff);
  });

  it('never settles the last business day before a weekend or holiday on a run of that weekend or holiday', () => {
    // The bug: a Saturday run counted Friday's pay date as settled after 0 working days.
    for (const today of everyDay('2025-01-01', '2028-12-31').filter((date) => !isBusinessDay(date, LISTED))) {
      const lastBusinessDay = businessDaysBackFrom(today, 1, LISTED)[0]!;
      expect(settlementCutoff(today, 1, ENGLAND_AND_WALES) < lastBusinessDay, today).toBe(true);
    }
  });

  for (const [name, holidays, calendar] of [
    ['England and Wales', LISTED, ENGLAND_AND_WALES],
    ['weekends only', NONE, NONE],
  ] as const) {
    it(`is, every day of 2025 to 2028 and for every delay 0 to 6 (${name}), the business day that many business days back from the last one on or before today`, () => {
      // Every disagreement is collected, then shown at once (an expect per case would cost more than the rule).
      const wrong: string[] = [];
      let checked = 0;
      for (const today of everyDay('2025-01-01', '2028-12-31')) {
        const back = businessDaysBackFrom(today, 7, holidays);
        let previous: string | undefined;
        for (let delay = 0; delay <= 6; delay++) {
          const cutoff = settlementCutoff(today, delay, calendar);
          if (cutoff !== back[delay]) wrong.push(`${today} +${delay}: ${cutoff}, expected ${back[delay]}`);
          // What that means: a business day, never after today, with exactly `delay` business days after it up to today.
          if (!isBusinessDay(cutoff, holidays) || cutoff > today || businessDaysAfterUpTo(cutoff, today, holidays) !== delay) {
            wrong.push(`${today} +${delay}: ${cutoff} is not ${delay} business day(s) before`);
          }
          // A longer delay settles less.
          if (previous !== undefined && !(cutoff < previous)) wrong.push(`${today} +${delay}: ${cutoff} not before ${previous}`);
          previous = cutoff;
          checked++;
        }
      }
      expect(wrong).toEqual([]);
      expect(checked).toBe(1461 * 7);
    });
  }

  it('moves forward with the days, never back: a pay date once settled stays settled', () => {
    const wrong: string[] = [];
    for (const delay of [0, 1, 2, 5]) {
      let previous = settlementCutoff('2024-12-31', delay, ENGLAND_AND_WALES);
      for (const today of everyDay('2025-01-01', '2028-12-31')) {
        const cutoff = settlementCutoff(today, delay, ENGLAND_AND_WALES);
        if (cutoff < previous) wrong.push(`${today} +${delay}: ${cutoff} went back from ${previous}`);
        // ...and only on business days: a weekend or holiday settles nothing new.
        if (!isBusinessDay(today, LISTED) && cutoff !== previous) wrong.push(`${today} +${delay}: a closed day settled up to ${cutoff}`);
        previous = cutoff;
      }
    }
    expect(wrong).toEqual([]);
  });

  it('settles a pay date that is not a business day with the next business day', () => {
    // Saturday 28 November 2026: its money moves on Monday 30th, settled on Tuesday 1 December.
    expect('2026-11-28' <= settlementCutoff('2026-11-30', 1, ENGLAND_AND_WALES)).toBe(false);
    expect('2026-11-28' <= settlementCutoff('2026-12-01', 1, ENGLAND_AND_WALES)).toBe(true);
  });

  it('refuses a negative or fractional delay and a date that is not one', () => {
    expect(() => settlementCutoff('2026-12-01', -1, NONE)).toThrow(RangeError);
    expect(() => settlementCutoff('2026-12-01', 0.5, NONE)).toThrow(RangeError);
    expect(() => settlementCutoff('2026-02-30', 1, NONE)).toThrow(RangeError);
  });
});

describe('payoutExecutionDate', () => {
  it.each([
    ['2026-12-01', '2026-12-01'], // a Tuesday: that day
    ['2026-11-27', '2026-11-27'], // a Friday
    ['2026-11-28', '2026-11-30'], // Saturday: Monday
    ['2026-11-29', '2026-11-30'], // Sunday: Monday
    ['2026-04-02', '2026-04-02'],
    ['2026-04-03', '2026-04-07'], // Good Friday 2026: past the weekend and Easter Monday
    ['2026-04-04', '2026-04-07'],
    ['2026-04-06', '2026-04-07'],
    ['2026-12-24', '2026-12-24'],
    ['2026-12-25', '2026-12-29'], // Christmas Day: past Boxing Day's substitute
    ['2026-12-26', '2026-12-29'],
    ['2026-12-28', '2026-12-29'],
    ['2026-12-31', '2026-12-31'],
    ['2027-01-01', '2027-01-04'], // New Year's Day, a Friday: Monday
    ['2027-01-02', '2027-01-04'],
    ['2027-03-26', '2027-03-30'], // Good Friday 2027
    ['2027-03-29', '2027-03-30'],
    ['2027-12-24', '2027-12-24'],
    ['2027-12-25', '2027-12-29'], // Christmas 2027: the weekend, then both substitutes
    ['2027-12-27', '2027-12-29'],
  ] as const)('asks the bank to pay the payouts of %s on %s', (payoutDate, execution) => {
    expect(payoutExecutionDate(payoutDate, '2026-01-01', ENGLAND_AND_WALES)).toBe(execution);
  });

  it('is, every day of 2025 to 2028, the payout date if a business day, else the first business day after it', () => {
    for (const [holidays, calendar] of [
      [LISTED, ENGLAND_AND_WALES],
      [NONE, NONE],
    ] as const) {
      const wrong: string[] = [];
      for (const payoutDate of everyDay('2025-01-01', '2028-12-31')) {
        const execution = payoutExecutionDate(payoutDate, '2025-01-01', calendar);
        let expected = payoutDate;
        while (!isBusinessDay(expected, holidays)) expected = plusDays(expected, 1);
        if (execution !== expected) wrong.push(`${payoutDate}: ${execution}, expected ${expected}`);
      }
      expect(wrong).toEqual([]);
    }
  });

  it('asks for no day in the past: a file written after its payout date asks for the first business day from the day it is written', () => {
    expect(payoutExecutionDate('2026-11-27', '2026-12-01', ENGLAND_AND_WALES)).toBe('2026-12-01');
    expect(payoutExecutionDate('2026-11-27', '2026-11-28', ENGLAND_AND_WALES)).toBe('2026-11-30');
    expect(payoutExecutionDate('2026-12-24', '2026-12-25', ENGLAND_AND_WALES)).toBe('2026-12-29');
    // Written before its payout date (a file prepared ahead): the payout date's own rule.
    expect(payoutExecutionDate('2026-11-28', '2026-11-20', ENGLAND_AND_WALES)).toBe('2026-11-30');
    for (const payoutDate of everyDay('2026-01-01', '2026-12-31')) {
      for (const writtenOn of ['2025-12-31', payoutDate, plusDays(payoutDate, 3)]) {
        const execution = payoutExecutionDate(payoutDate, writtenOn, ENGLAND_AND_WALES);
        expect(execution >= payoutDate && execution >= writtenOn).toBe(true);
      }
    }
  });

  it('honours a day operators added (a state funeral closes the banks)', () => {
    const funeral = regionalHolidays('england-and-wales', ['2026-09-15']);
    expect(payoutExecutionDate('2026-09-15', '2026-09-15', funeral)).toBe('2026-09-16');
    expect(settlementCutoff('2026-09-16', 1, funeral)).toBe('2026-09-14');
  });
});
