import { describe, expect, it } from 'vitest';
import { calendarGoLiveWarnings, collectsPayDate, defaultGoLiveDate, type GoLivePayDate } from '../../../src/directory/calendars/go-live.ts';

const payDate = (pay_date: string, lock_date: string, locked = false): GoLivePayDate => ({ pay_date, lock_date, locked });

// A monthly calendar generated on 2026-11-28: October's and November's lock dates have passed.
const calendar = [
  payDate('2026-10-30', '2026-10-20', false),
  payDate('2026-11-27', '2026-11-17', false),
  payDate('2026-12-31', '2026-12-18', false),
  payDate('2027-01-29', '2027-01-19', false),
];
const today = '2026-11-28';

describe('collectsPayDate', () => {
  it('collects from the go-live date on, never before, and nothing while there is none', () => {
    expect(collectsPayDate('2026-12-31', '2026-12-30')).toBe(false);
    expect(collectsPayDate('2026-12-31', '2026-12-31')).toBe(true);
    expect(collectsPayDate('2026-12-31', '2027-01-29')).toBe(true);
    expect(collectsPayDate(null, '2027-01-29')).toBe(false);
  });
});

describe('defaultGoLiveDate', () => {
  it('is the first unlocked pay date whose lock date is today or later', () => {
    expect(defaultGoLiveDate(calendar, today)).toBe('2026-12-31');
    expect(defaultGoLiveDate(calendar, '2026-12-18')).toBe('2026-12-31');
    expect(defaultGoLiveDate(calendar, '2026-12-19')).toBe('2027-01-29');
  });

  it('skips locked pay dates, ignores the order given, and is null when no lock date is ahead', () => {
    expect(defaultGoLiveDate([payDate('2026-12-31', '2026-12-18', true), ...calendar].reverse(), today)).toBe('2026-12-31');
    expect(defaultGoLiveDate([payDate('2026-12-31', '2026-12-18', true), payDate('2027-01-29', '2027-01-19')], today)).toBe('2027-01-29');
    expect(defaultGoLiveDate(calendar, '2027-01-20')).toBeNull();
    expect(defaultGoLiveDate([], today)).toBeNull();
  });
});

describe('calendarGoLiveWarnings', () => {
  it('warns that pay dates with past lock dates before the go-live date are not collected', () => {
    expect(calendarGoLiveWarnings(calendar, '2026-12-31', today)).toEqual([
      '2 pay dates with lock dates already past (2026-10-30, lock date 2026-10-20; 2026-11-27, lock date 2026-11-17) are before the go-live date 2026-12-31 and are not collected',
    ]);
  });

  it('warns that past lock dates from the go-live date on are locked by the next nightly run at once', () => {
    expect(calendarGoLiveWarnings(calendar, '2026-11-27', today)).toEqual([
      '1 pay date with lock dates already past (2026-10-30, lock date 2026-10-20) is before the go-live date 2026-11-27 and is not collected',
      '1 pay date from the go-live date 2026-11-27 on has its lock date already past (2026-11-27, lock date 2026-11-17): the next nightly run locks it at once',
    ]);
  });

  it('says nothing when every lock date is ahead or the pay date is locked', () => {
    expect(calendarGoLiveWarnings(calendar.slice(2), '2026-12-31', today)).toEqual([]);
    expect(calendarGoLiveWarnings([payDate('2026-11-27', '2026-11-17', true)], '2026-11-27', today)).toEqual([]);
  });

  it('says the payroll is not live when it has no go-live date, and lists at most five dates', () => {
    const weekly = Array.from({ length: 7 }, (_, i) => payDate(`2026-11-0${i + 1}`, `2026-10-2${i}`));
    const [notLive, before] = calendarGoLiveWarnings(weekly, null, today);
    expect(notLive).toMatch(/no go-live date/);
    expect(before).toMatch(/^7 pay dates with lock dates already past \(2026-11-01, lock date 2026-10-20;.*; and 2 more\) are not collected$/);
  });
});
