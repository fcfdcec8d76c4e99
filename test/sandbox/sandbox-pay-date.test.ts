import { describe, expect, it } from 'vitest';
import { nextSandboxPayDate, type SandboxCalendarEntry } from '../../src/sandbox/sandbox-pay-date.ts';

const TODAY = '2026-11-25';
const entry = (pay_date: string, lock_date: string, locked = false): SandboxCalendarEntry => ({ pay_date, lock_date, locked });

describe('nextSandboxPayDate', () => {
  const cases: Array<{ name: string; calendar: SandboxCalendarEntry[]; expected: string | null }> = [
    { name: 'the first pay date whose lock is still ahead', calendar: [entry('2026-11-27', '2026-11-26'), entry('2026-12-24', '2026-12-21')], expected: '2026-11-27' },
    { name: 'skips a pay date whose lock date has come (closed to new requests)', calendar: [entry('2026-11-27', '2026-11-25'), entry('2026-12-24', '2026-12-21')], expected: '2026-12-24' },
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
