import { describe, expect, it } from 'vitest';
import { nextSandboxPayDate, sandboxPayoutDate, type SandboxCalendarEntry } from '../../../src/faces/sandbox/sandbox-pay-date.ts';

const TODAY = '2026-11-25';
const entry = (pay_date: string, lock_date: string, locked = false): SandboxCalendarEntry => ({ pay_date, lock_date, locked });

describe('nextSandboxPayDate', () => {
  const cases: Array<{ name: string; calendar: SandboxCalendarEntry[]; expected: string | null }> = [
    { name: 'the first pay date whose lock is still ahead', calendar: [entry('2026-11-27', '2026-11-26'), entry('2026-12-24', '2026-12-21')], expected: '2026-11-27' },
    {
      name: 'skips a pay date whose lock date has come (closed to new requests)',
      calendar: [entry('2026-11-27', '2026-11-25'), entry('2026-12-24', '2026-12-21')],
      expected: '2026-12-24',
    },
    { name: 'skips a pay date whose lock date has passed unlocked', calendar: [entry('2026-11-27', '2026-11-20'), entry('2026-12-24', '2026-12-21')], expected: '2026-12-24' },
    { name: 'skips a pay date already locked early', calendar: [entry('2026-12-04', '2026-12-01', true), entry('2026-12-11', '2026-12-08')], expected: '2026-12-11' },
    { name: 'whatever order the calendar comes in', calendar: [entry('2027-01-29', '2027-01-26'), entry('2026-12-24', '2026-12-21')], expected: '2026-12-24' },
    { name: 'null when every pay date is locked or closed', calendar: [entry('2026-11-27', '2026-11-24'), entry('2026-12-24', '2026-12-21', true)], expected: null },
    { name: 'null for an empty calendar', calendar: [], expected: null },
  ];
  for (const { name, calendar, expected } of cases) {
    it(name, () => expect(nextSandboxPayDate(calendar, TODAY)).toBe(expected));
  }
});

describe('sandboxPayoutDate', () => {
  const holidays = new Set(['2026-12-25', '2026-12-28']);
  const cases: Array<{ name: string; payDate: string; latestPayout: string | null; delay: number; expected: string }> = [
    { name: 'the settlement delay after the pay date, with no payout before', payDate: '2026-11-27', latestPayout: null, delay: 1, expected: '2026-11-30' },
    { name: 'counts working days only (weekend and bank holidays)', payDate: '2026-12-24', latestPayout: null, delay: 1, expected: '2026-12-29' },
    { name: 'a delay of 0 pays on the pay date', payDate: '2026-11-27', latestPayout: null, delay: 0, expected: '2026-11-27' },
    { name: 'an earlier payout does not move it', payDate: '2026-12-24', latestPayout: '2026-11-30', delay: 1, expected: '2026-12-29' },
    { name: 'a payout already on that day moves it to the next working day', payDate: '2026-11-27', latestPayout: '2026-11-30', delay: 1, expected: '2026-12-01' },
    { name: 'a payout after that day moves it past the latest', payDate: '2026-11-20', latestPayout: '2026-12-24', delay: 1, expected: '2026-12-29' },
  ];
  for (const { name, payDate, latestPayout, delay, expected } of cases) {
    it(name, () => expect(sandboxPayoutDate(payDate, latestPayout, delay, holidays)).toBe(expected));
  }
});
