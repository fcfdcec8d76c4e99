import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { isPayDateOpen, targetPayDate, type CalendarPayDate, type TargetPayDateResult } from '../../../src/directory/calendars/target-pay-date.ts';
import { lockDate } from '../../../src/directory/calendars/lock-date.ts';
import { publicBankHolidaysBetween } from '../../../src/directory/calendars/bank-holidays.ts';

const UK = new Set(publicBankHolidaysBetween('england-and-wales', 2025, 2027).map((h) => h.date));
const NONE: ReadonlySet<string> = new Set();
const LEAD = 2; // the default provider lead time (DEFAULT_PROVIDER_LEAD_DAYS)

interface FixtureRow {
  payDate: string;
  cutoff: string;
  lock: string;
}

const toPayDates = (rows: ReadonlyArray<FixtureRow>, locked: ReadonlySet<string> = new Set()) =>
  rows.map((r): CalendarPayDate => ({ payDate: r.payDate, lockDate: r.lock, locked: locked.has(r.payDate) }));

// Weekly, Fridays around Easter 2026; cutoff = pay date - 2 working days.
const WEEKLY: ReadonlyArray<FixtureRow> = [
  { payDate: '2026-03-27', cutoff: '2026-03-25', lock: '2026-03-23' },
  { payDate: '2026-04-02', cutoff: '2026-03-31', lock: '2026-03-27' }, // Good Friday pay day brought forward
  { payDate: '2026-04-10', cutoff: '2026-04-08', lock: '2026-04-02' }, // lock skips Easter Monday + Good Friday
  { payDate: '2026-04-17', cutoff: '2026-04-15', lock: '2026-04-13' },
  { payDate: '2026-04-24', cutoff: '2026-04-22', lock: '2026-04-20' },
];

// Monthly, last working day of the month; cutoff = pay date - 3 working days.
const MONTHLY: ReadonlyArray<FixtureRow> = [
  { payDate: '2026-03-31', cutoff: '2026-03-26', lock: '2026-03-24' },
  { payDate: '2026-04-30', cutoff: '2026-04-27', lock: '2026-04-23' },
  { payDate: '2026-05-29', cutoff: '2026-05-26', lock: '2026-05-21' }, // 31st is a Sunday; lock skips 25 May
  { payDate: '2026-06-30', cutoff: '2026-06-25', lock: '2026-06-23' },
  { payDate: '2026-07-31', cutoff: '2026-07-28', lock: '2026-07-24' },
  { payDate: '2026-08-28', cutoff: '2026-08-25', lock: '2026-08-21' }, // 31 Aug is a bank holiday
];

// Four-weekly from Friday 6 March 2026; cutoff = pay date - 3 working days.
const FOUR_WEEKLY: ReadonlyArray<FixtureRow> = [
  { payDate: '2026-03-06', cutoff: '2026-03-03', lock: '2026-02-27' },
  { payDate: '2026-04-02', cutoff: '2026-03-30', lock: '2026-03-26' }, // Good Friday pay day brought forward
  { payDate: '2026-05-01', cutoff: '2026-04-28', lock: '2026-04-24' },
  { payDate: '2026-05-29', cutoff: '2026-05-26', lock: '2026-05-21' }, // lock skips 25 May
  { payDate: '2026-06-26', cutoff: '2026-06-23', lock: '2026-06-19' },
];

const FIXTURES = { weekly: WEEKLY, monthly: MONTHLY, four_weekly: FOUR_WEEKLY } as const;
type FixtureName = keyof typeof FIXTURES;

// Input order must not matter: every scenario runs sorted, reversed and interleaved.
const orders = {
  sorted: <T>(xs: ReadonlyArray<T>): T[] => [...xs],
  reversed: <T>(xs: ReadonlyArray<T>): T[] => [...xs].reverse(),
  interleaved: <T>(xs: ReadonlyArray<T>): T[] => [...xs.filter((_, i) => i % 2 === 1), ...xs.filter((_, i) => i % 2 === 0).reverse()],
};
type OrderName = keyof typeof orders;
const ORDER_NAMES = Object.keys(orders) as OrderName[];

const ok = (payDate: string, postDue = false): TargetPayDateResult => ({ ok: true, payDate, postDue });
const unreachable = (expectedPayDate: string): TargetPayDateResult => ({
  ok: false,
  reason: 'due_date_unreachable',
  expectedPayDate,
});
const NO_OPEN: TargetPayDateResult = { ok: false, reason: 'no_open_pay_date' };

describe('fixtures', () => {
  it.each(Object.entries(FIXTURES).flatMap(([name, rows]) => rows.map((r) => [name, r.payDate, r] as const)))(
    '%s %s: lock date follows the lock rule with UK holidays',
    (_name, _payDate, row) => {
      expect(lockDate(row.cutoff, LEAD, UK)).toBe(row.lock);
    },
  );

  it.each([
    ['weekly 10 Apr', '2026-04-08', '2026-04-06'],
    ['monthly / four-weekly 29 May', '2026-05-26', '2026-05-22'],
  ])('%s: without holidays the lock would be later (%s -> %s)', (_label, cutoff, withoutHolidays) => {
    expect(lockDate(cutoff, LEAD, NONE)).toBe(withoutHolidays);
  });
});

describe('isPayDateOpen', () => {
  it.each([
    [{ payDate: '2026-04-10', lockDate: '2026-04-02', locked: false }, '2026-04-01', true, 'lock tomorrow'],
    [{ payDate: '2026-04-10', lockDate: '2026-04-02', locked: false }, '2026-04-02', false, 'lock today'],
    [{ payDate: '2026-04-10', lockDate: '2026-04-02', locked: false }, '2026-04-03', false, 'lock passed'],
    [{ payDate: '2026-04-10', lockDate: '2026-04-02', locked: true }, '2026-03-01', false, 'already locked'],
  ])('%o today %s -> %s (%s)', (payDate, today, expected) => {
    expect(isPayDateOpen(payDate, today)).toBe(expected);
  });
});

type Scenario = readonly [
  description: string,
  calendar: FixtureName,
  today: string,
  dueDate: string | null,
  allowPost: boolean,
  expected: TargetPayDateResult,
  locked?: ReadonlyArray<string>,
];

const SCENARIOS: ReadonlyArray<Scenario> = [
  // ---- weekly ----
  ['weekly: due before the first pay date, no post-due', 'weekly', '2026-03-20', '2026-03-26', false, unreachable('2026-03-27')],
  ['weekly: due before the first pay date, post-due allowed', 'weekly', '2026-03-20', '2026-03-26', true, ok('2026-03-27', true)],
  ['weekly: due exactly on a pay date', 'weekly', '2026-03-20', '2026-04-02', false, ok('2026-04-02')],
  ['weekly: due exactly on the first pay date', 'weekly', '2026-03-20', '2026-03-27', false, ok('2026-03-27')],
  ['weekly: due on the nominal (holiday) pay day', 'weekly', '2026-03-20', '2026-04-03', false, ok('2026-04-02')],
  ['weekly: due between pay dates', 'weekly', '2026-03-20', '2026-04-09', false, ok('2026-04-02')],
  ['weekly: due between pay dates, post-due flag irrelevant', 'weekly', '2026-03-20', '2026-04-09', true, ok('2026-04-02')],
  ['weekly: due after all pay dates', 'weekly', '2026-03-20', '2026-05-30', false, ok('2026-04-24')],
  ['weekly: null due date -> first open', 'weekly', '2026-03-20', null, false, ok('2026-03-27')],
  ['weekly: null due date ignores the post-due flag', 'weekly', '2026-03-20', null, true, ok('2026-03-27')],
  ['weekly: day before the lock is still open', 'weekly', '2026-03-22', '2026-03-30', false, ok('2026-03-27')],
  ['weekly: on the lock date the pay date is closed', 'weekly', '2026-03-23', '2026-03-30', false, unreachable('2026-04-02')],
  ['weekly: lock passed, post-due allowed', 'weekly', '2026-03-23', '2026-03-30', true, ok('2026-04-02', true)],
  ['weekly: lock passed, later pay date still open', 'weekly', '2026-03-24', '2026-04-05', false, ok('2026-04-02')],
  ['weekly: holiday-shifted lock, day before', 'weekly', '2026-04-01', '2026-04-10', false, ok('2026-04-10')],
  ['weekly: holiday-shifted lock has run (would be open without holidays)', 'weekly', '2026-04-02', '2026-04-10', false, unreachable('2026-04-17')],
  ['weekly: holiday-shifted lock has run, post-due allowed', 'weekly', '2026-04-02', '2026-04-10', true, ok('2026-04-17', true)],
  ['weekly: null due date skips closed pay dates', 'weekly', '2026-04-02', null, false, ok('2026-04-17')],
  ['weekly: locked flag closes a pay date whose lock date is in the future', 'weekly', '2026-03-20', '2026-04-05', false, ok('2026-03-27'), ['2026-04-02']],
  ['weekly: locked flag, nothing left before due', 'weekly', '2026-03-20', '2026-03-30', false, unreachable('2026-04-02'), ['2026-03-27']],
  ['weekly: all locks run -> no open pay date', 'weekly', '2026-04-20', '2026-05-30', true, NO_OPEN],
  ['weekly: all locks run, null due date', 'weekly', '2026-04-20', null, false, NO_OPEN],
  ['weekly: all locks run, post-due disallowed', 'weekly', '2026-04-20', '2026-03-01', false, NO_OPEN],
  ['weekly: only the last pay date open', 'weekly', '2026-04-19', '2026-04-20', false, unreachable('2026-04-24')],
  // ---- monthly ----
  ['monthly: due before the first pay date, no post-due', 'monthly', '2026-03-10', '2026-03-15', false, unreachable('2026-03-31')],
  ['monthly: due before the first pay date, post-due allowed', 'monthly', '2026-03-10', '2026-03-15', true, ok('2026-03-31', true)],
  ['monthly: due exactly on a pay date', 'monthly', '2026-03-10', '2026-05-29', false, ok('2026-05-29')],
  ['monthly: due on the nominal Sunday month end', 'monthly', '2026-03-10', '2026-05-31', false, ok('2026-05-29')],
  ['monthly: due the day before a pay date', 'monthly', '2026-03-10', '2026-06-29', false, ok('2026-05-29')],
  ['monthly: due between pay dates', 'monthly', '2026-03-10', '2026-06-15', false, ok('2026-05-29')],
  ['monthly: due after all pay dates', 'monthly', '2026-03-10', '2026-12-31', false, ok('2026-08-28')],
  ['monthly: null due date', 'monthly', '2026-03-10', null, false, ok('2026-03-31')],
  ['monthly: first lock passed, null due date', 'monthly', '2026-03-24', null, false, ok('2026-04-30')],
  ['monthly: day before the holiday-shifted lock', 'monthly', '2026-05-20', '2026-06-01', false, ok('2026-05-29')],
  ['monthly: holiday-shifted lock has run (would be open without holidays)', 'monthly', '2026-05-21', '2026-06-01', false, unreachable('2026-06-30')],
  ['monthly: holiday-shifted lock has run, post-due allowed', 'monthly', '2026-05-21', '2026-06-01', true, ok('2026-06-30', true)],
  ['monthly: earlier pay dates closed, due far ahead', 'monthly', '2026-05-21', '2026-12-31', false, ok('2026-08-28')],
  ['monthly: all locks run', 'monthly', '2026-08-21', '2026-12-31', true, NO_OPEN],
  // ---- four-weekly ----
  ['four-weekly: due before the first pay date, no post-due', 'four_weekly', '2026-02-20', '2026-03-01', false, unreachable('2026-03-06')],
  ['four-weekly: due before the first pay date, post-due allowed', 'four_weekly', '2026-02-20', '2026-03-01', true, ok('2026-03-06', true)],
  ['four-weekly: due exactly on a pay date', 'four_weekly', '2026-02-20', '2026-04-02', false, ok('2026-04-02')],
  ['four-weekly: due on the nominal Good Friday', 'four_weekly', '2026-02-20', '2026-04-03', false, ok('2026-04-02')],
  ['four-weekly: due between pay dates', 'four_weekly', '2026-02-20', '2026-05-15', false, ok('2026-05-01')],
  ['four-weekly: due after all pay dates', 'four_weekly', '2026-02-20', '2026-07-31', false, ok('2026-06-26')],
  ['four-weekly: null due date', 'four_weekly', '2026-02-20', null, true, ok('2026-03-06')],
  ['four-weekly: first lock ran today', 'four_weekly', '2026-02-27', '2026-03-20', false, unreachable('2026-04-02')],
  ['four-weekly: first lock ran today, post-due allowed', 'four_weekly', '2026-02-27', '2026-03-20', true, ok('2026-04-02', true)],
  ['four-weekly: day before the first lock', 'four_weekly', '2026-02-26', '2026-03-20', false, ok('2026-03-06')],
  ['four-weekly: day before the holiday-shifted lock', 'four_weekly', '2026-05-20', '2026-06-01', false, ok('2026-05-29')],
  ['four-weekly: holiday-shifted lock has run', 'four_weekly', '2026-05-21', '2026-06-01', false, unreachable('2026-06-26')],
  ['four-weekly: holiday-shifted lock has run, post-due allowed', 'four_weekly', '2026-05-21', '2026-06-01', true, ok('2026-06-26', true)],
  ['four-weekly: every pay date flagged locked', 'four_weekly', '2026-02-20', '2026-07-31', true, NO_OPEN, FOUR_WEEKLY.map((r) => r.payDate)],
];

describe('targetPayDate', () => {
  it.each(SCENARIOS.flatMap((s) => ORDER_NAMES.map((order) => [s[0], order, s] as const)))(
    '%s [%s input]',
    (_description, order, [, calendar, today, dueDate, allowPost, expected, locked]) => {
      const payDates = orders[order](toPayDates(FIXTURES[calendar], new Set(locked ?? [])));
      expect(targetPayDate({ payDates, dueDate, allowPostDueDateDeduction: allowPost, today })).toEqual(expected);
    },
  );

  it('holidays change the outcome: the same weekly calendar without holiday-aware locks targets 10 April', () => {
    const withoutHolidays = WEEKLY.map((r) => ({
      payDate: r.payDate,
      lockDate: lockDate(r.cutoff, LEAD, NONE),
      locked: false,
    }));
    const input = { dueDate: '2026-04-10', allowPostDueDateDeduction: false, today: '2026-04-02' };
    expect(targetPayDate({ ...input, payDates: withoutHolidays })).toEqual(ok('2026-04-10'));
    expect(targetPayDate({ ...input, payDates: toPayDates(WEEKLY) })).toEqual(unreachable('2026-04-17'));
  });

  it.each([
    ['due date given', '2026-04-10', false],
    ['null due date', null, true],
  ])('an empty calendar has no open pay date (%s)', (_label, dueDate, allowPost) => {
    expect(targetPayDate({ payDates: [], dueDate, allowPostDueDateDeduction: allowPost, today: '2026-01-01' })).toEqual(NO_OPEN);
  });

  it.each([
    ['today', { dueDate: '2026-04-10', today: '2026-4-1' }],
    ['due date', { dueDate: '2026-02-30', today: '2026-04-01' }],
  ])('rejects a malformed %s', (_label, dates) => {
    expect(() => targetPayDate({ payDates: toPayDates(WEEKLY), allowPostDueDateDeduction: false, ...dates })).toThrow(RangeError);
  });

  it('rejects a malformed pay date or lock date in the calendar', () => {
    const base = { dueDate: null, allowPostDueDateDeduction: true, today: '2026-01-01' };
    expect(() => targetPayDate({ ...base, payDates: [{ payDate: '2026/04/10', lockDate: '2026-04-02', locked: false }] })).toThrow(RangeError);
    expect(() => targetPayDate({ ...base, payDates: [{ payDate: '2026-04-10', lockDate: 'soon', locked: false }] })).toThrow(RangeError);
  });
});

describe('targetPayDate properties', () => {
  const DAY_MS = 86_400_000;
  const iso = (offset: number): string => new Date(Date.UTC(2026, 0, 1) + offset * DAY_MS).toISOString().slice(0, 10);

  const payDateArb = fc.record({
    payOffset: fc.integer({ min: 0, max: 400 }),
    lockLead: fc.integer({ min: 0, max: 12 }),
    locked: fc.boolean(),
  });
  const inputArb = fc.record({
    rows: fc.uniqueArray(payDateArb, { selector: (r) => r.payOffset, maxLength: 20 }),
    due: fc.option(fc.integer({ min: -30, max: 430 }), { nil: null }),
    today: fc.integer({ min: -30, max: 430 }),
    allowPost: fc.boolean(),
    shuffleSeed: fc.array(fc.integer(), { minLength: 20, maxLength: 20 }),
  });
  type RawInput = typeof inputArb extends fc.Arbitrary<infer T> ? T : never;
  const build = (raw: RawInput) => {
    const payDates: CalendarPayDate[] = raw.rows.map((r) => ({
      payDate: iso(r.payOffset),
      lockDate: iso(r.payOffset - r.lockLead),
      locked: r.locked,
    }));
    return {
      payDates,
      dueDate: raw.due === null ? null : iso(raw.due),
      allowPostDueDateDeduction: raw.allowPost,
      today: iso(raw.today),
    };
  };
  // Spelled out from the definition, independent of isPayDateOpen.
  const openDates = (input: ReturnType<typeof build>): string[] =>
    input.payDates
      .filter((p) => !p.locked && p.lockDate > input.today)
      .map((p) => p.payDate)
      .sort();

  it('property: the target is always an open pay date of the calendar, never after the due date unless post-due', () => {
    fc.assert(
      fc.property(inputArb, (raw) => {
        const input = build(raw);
        const result = targetPayDate(input);
        const open = openDates(input);
        if (!result.ok) return;
        expect(open).toContain(result.payDate);
        if (input.dueDate === null) {
          expect(result).toEqual(ok(open[0]!));
        } else if (!result.postDue) {
          expect(result.payDate <= input.dueDate).toBe(true);
          // ...and it is the latest such open date
          expect(open.filter((d) => d > result.payDate && d <= input.dueDate!)).toEqual([]);
        } else {
          expect(input.allowPostDueDateDeduction).toBe(true);
          expect(open.filter((d) => d <= input.dueDate!)).toEqual([]);
          expect(result.payDate).toBe(open[0]);
        }
      }),
    );
  });

  it('property: rejections happen exactly when the rule says so', () => {
    fc.assert(
      fc.property(inputArb, (raw) => {
        const input = build(raw);
        const result = targetPayDate(input);
        const open = openDates(input);
        const dueDate = input.dueDate;
        const reachable = dueDate === null || open.some((d) => d <= dueDate);
        if (open.length === 0) {
          expect(result).toEqual(NO_OPEN);
        } else if (!reachable && !input.allowPostDueDateDeduction) {
          expect(result).toEqual(unreachable(open[0]!));
          expect(open[0]! > dueDate!).toBe(true);
        } else {
          expect(result.ok).toBe(true);
        }
      }),
    );
  });

  it('property: the order of the calendar does not matter', () => {
    fc.assert(
      fc.property(inputArb, (raw) => {
        const input = build(raw);
        const keyed = input.payDates.map((p, i) => ({ p, k: raw.shuffleSeed[i] ?? 0 }));
        const shuffled = keyed.sort((a, b) => a.k - b.k).map((x) => x.p);
        expect(targetPayDate({ ...input, payDates: shuffled })).toEqual(targetPayDate(input));
      }),
    );
  });
});
