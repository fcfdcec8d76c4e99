import { describe, it, expect, afterEach } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { DateTime } from 'luxon';
import { isLockDue, lockDate, serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { publicBankHolidaysBetween } from '../../../src/directory/calendars/bank-holidays.ts';

const UK = new Set(publicBankHolidaysBetween('england-and-wales', 2025, 2027).map((h) => h.date));
const NONE: ReadonlySet<string> = new Set();

const DAY_MS = 86_400_000;
const EPOCH_2024 = Date.UTC(2024, 0, 1);
const isoFromOffset = (offset: number): string => new Date(EPOCH_2024 + offset * DAY_MS).toISOString().slice(0, 10);
const naiveIsWorking = (iso: string, holidays: ReadonlySet<string>): boolean => {
  const dow = new Date(`${iso}T00:00:00Z`).getUTCDay();
  return dow !== 0 && dow !== 6 && !holidays.has(iso);
};
const dateArb = fc.integer({ min: 0, max: 365 * 4 }).map(isoFromOffset);
const holidaysArb = fc.constantFrom<ReadonlySet<string>>(UK, NONE);

describe('lockDate', () => {
  it.each<[string, number, ReadonlySet<string>, string, string]>([
    // [cutoff, lead, holidays, expected lock, why]
    ['2026-03-25', 2, UK, '2026-03-23', 'Wednesday cutoff, default lead: Monday'],
    ['2026-03-30', 2, UK, '2026-03-26', 'Monday cutoff: the weekend is skipped'],
    ['2026-04-08', 2, UK, '2026-04-02', 'Easter Monday and Good Friday are skipped'],
    ['2026-04-08', 2, NONE, '2026-04-06', 'same cutoff with no holidays configured'],
    ['2026-04-07', 2, UK, '2026-04-01', 'Tuesday after Easter'],
    ['2026-05-26', 1, UK, '2026-05-22', 'Spring bank holiday is skipped'],
    ['2026-05-26', 2, UK, '2026-05-21', 'Spring bank holiday is skipped, lead 2'],
    ['2026-12-29', 2, UK, '2026-12-23', 'Christmas, weekend and substitute Boxing Day'],
    ['2027-01-04', 2, UK, '2026-12-30', "New Year's Day and the weekend, across the year"],
    ['2027-01-04', 5, UK, '2026-12-23', 'long lead over the whole Christmas break'],
    // Non-working cutoffs: n > 0 counts from the cutoff, which itself never counts.
    ['2026-04-04', 1, UK, '2026-04-02', 'Saturday cutoff, lead 1: last working day before it'],
    ['2026-04-04', 2, UK, '2026-04-01', 'Saturday cutoff, lead 2'],
    ['2026-04-06', 1, UK, '2026-04-02', 'holiday cutoff, lead 1'],
    // Lead 0: the last working day on or before the cutoff.
    ['2026-04-08', 0, UK, '2026-04-08', 'lead 0, working cutoff: the cutoff itself'],
    ['2026-04-04', 0, UK, '2026-04-02', 'lead 0, Saturday cutoff after Good Friday'],
    ['2026-04-06', 0, UK, '2026-04-02', 'lead 0, Easter Monday cutoff'],
    ['2026-05-31', 0, UK, '2026-05-29', 'lead 0, Sunday cutoff'],
    ['2026-05-31', 0, NONE, '2026-05-29', 'lead 0, Sunday cutoff, no holidays'],
    ['2026-04-06', 0, NONE, '2026-04-06', 'lead 0, Easter Monday is a working day without holidays'],
  ])('cutoff %s, lead %i -> %s (%s)', (cutoff, lead, holidays, expected) => {
    expect(lockDate(cutoff, lead, holidays)).toBe(expected);
  });

  it.each([-1, 2.5, Number.NaN])('rejects lead time %s', (lead) => {
    expect(() => lockDate('2026-04-08', lead, UK)).toThrow(RangeError);
  });

  it('rejects a malformed cutoff', () => {
    expect(() => lockDate('2026-02-30', 2, UK)).toThrow(RangeError);
    expect(() => lockDate('2026-02-30', 0, UK)).toThrow(RangeError);
  });

  it('property: the lock is always a working day, before the cutoff when lead > 0, on or before it when 0', () => {
    fc.assert(
      fc.property(dateArb, fc.integer({ min: 0, max: 15 }), holidaysArb, (cutoff, lead, holidays) => {
        const lock = lockDate(cutoff, lead, holidays);
        expect(naiveIsWorking(lock, holidays)).toBe(true);
        if (lead > 0) expect(lock < cutoff).toBe(true);
        else expect(lock <= cutoff).toBe(true);
      }),
    );
  });

  it('property: a longer lead locks strictly earlier; lead 1 equals lead 0 exactly when the cutoff is non-working', () => {
    fc.assert(
      fc.property(dateArb, fc.integer({ min: 1, max: 15 }), holidaysArb, (cutoff, lead, holidays) => {
        expect(lockDate(cutoff, lead + 1, holidays) < lockDate(cutoff, lead, holidays)).toBe(true);
        const sameAsZero = lockDate(cutoff, 1, holidays) === lockDate(cutoff, 0, holidays);
        expect(sameAsZero).toBe(!naiveIsWorking(cutoff, holidays));
      }),
    );
  });
});

describe('isLockDue', () => {
  it.each([
    ['2026-04-02', '2026-04-01', false, 'the day before the lock'],
    ['2026-04-02', '2026-04-02', true, 'on the lock date'],
    ['2026-04-02', '2026-04-03', true, 'a missed run still locks the next day'],
    ['2026-04-02', '2026-05-01', true, 'long overdue'],
    ['2026-12-31', '2027-01-01', true, 'across the year boundary'],
    ['2027-01-01', '2026-12-31', false, 'before, across the year boundary'],
    ['2026-10-01', '2026-09-30', false, 'month rollover, not yet'],
    ['2026-09-30', '2026-10-01', true, 'month rollover, due'],
  ])('lock %s, today %s -> %s (%s)', (lock, today, expected) => {
    expect(isLockDue(lock, today)).toBe(expected);
  });

  it('rejects malformed dates instead of comparing garbage strings', () => {
    expect(() => isLockDue('2026-4-2', '2026-04-03')).toThrow(RangeError);
    expect(() => isLockDue('2026-04-02', '3 April 2026')).toThrow(RangeError);
  });
});

describe('serviceToday', () => {
  const LONDON = 'Europe/London';

  it.each([
    // Winter (GMT = UTC)
    ['2026-01-15T23:59:59.999Z', LONDON, '2026-01-15', 'last millisecond of a GMT day'],
    ['2026-01-16T00:00:00.000Z', LONDON, '2026-01-16', 'GMT midnight'],
    // Summer (BST = UTC+1): UTC 23:00 is already the next London day
    ['2026-07-01T22:59:59.999Z', LONDON, '2026-07-01', 'BST 23:59:59.999'],
    ['2026-07-01T23:00:00.000Z', LONDON, '2026-07-02', 'BST midnight is 23:00 UTC'],
    ['2026-07-01T23:30:00.000Z', LONDON, '2026-07-02', 'BST 00:30'],
    ['2026-07-01T23:30:00.000Z', 'UTC', '2026-07-01', 'same instant in UTC'],
    // Clocks go forward 2026-03-29 01:00 UTC
    ['2026-03-28T23:30:00.000Z', LONDON, '2026-03-28', 'night before BST starts, still GMT'],
    ['2026-03-29T00:30:00.000Z', LONDON, '2026-03-29', 'GMT 00:30 on the change day'],
    ['2026-03-29T22:59:59.999Z', LONDON, '2026-03-29', 'first BST evening, 23:59:59.999'],
    ['2026-03-29T23:00:00.000Z', LONDON, '2026-03-30', 'first BST midnight'],
    // Clocks go back 2026-10-25 01:00 UTC
    ['2026-10-24T22:59:59.999Z', LONDON, '2026-10-24', 'last BST evening'],
    ['2026-10-24T23:00:00.000Z', LONDON, '2026-10-25', 'last BST midnight'],
    ['2026-10-25T01:30:00.000Z', LONDON, '2026-10-25', 'repeated hour, now GMT'],
    ['2026-10-25T23:00:00.000Z', LONDON, '2026-10-25', 'first GMT evening: 23:00 is still today'],
    ['2026-10-25T23:59:59.999Z', LONDON, '2026-10-25', 'first GMT evening, last millisecond'],
    ['2026-10-26T00:00:00.000Z', LONDON, '2026-10-26', 'first GMT midnight'],
    // New Year and other zones
    ['2026-12-31T23:30:00.000Z', LONDON, '2026-12-31', 'New Year is GMT'],
    ['2027-01-01T03:00:00.000Z', 'America/New_York', '2026-12-31', 'behind UTC'],
    ['2026-12-31T15:00:00.000Z', 'Asia/Tokyo', '2027-01-01', 'ahead of UTC'],
  ])('%s in %s -> %s (%s)', (instant, zone, expected) => {
    expect(serviceToday(new Date(instant), zone)).toBe(expected);
  });

  describe('does not depend on the host time zone', () => {
    const originalTz = process.env.TZ;
    afterEach(() => {
      if (originalTz === undefined) delete process.env.TZ;
      else process.env.TZ = originalTz;
    });

    it.each(['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'UTC'])('host TZ %s', (hostTz) => {
      process.env.TZ = hostTz;
      expect(serviceToday(new Date('2026-07-01T23:30:00.000Z'), LONDON)).toBe('2026-07-02');
      expect(serviceToday(new Date('2026-01-15T23:30:00.000Z'), LONDON)).toBe('2026-01-15');
    });
  });

  it('rejects an unknown time zone and an invalid Date', () => {
    expect(() => serviceToday(new Date('2026-07-01T12:00:00Z'), 'Europe/Londn')).toThrow(RangeError);
    expect(() => serviceToday(new Date('not a date'), LONDON)).toThrow(RangeError);
  });

  it('property: agrees with luxon (the calendar library of the rest of the service) in any zone', () => {
    const instants = fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) });
    const zones = fc.constantFrom(LONDON, 'UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati', 'Pacific/Pago_Pago');
    fc.assert(
      fc.property(instants, zones, (ms, zone) => {
        expect(serviceToday(new Date(ms), zone)).toBe(DateTime.fromMillis(ms, { zone }).toISODate());
      }),
      { numRuns: 2000 },
    );
  });

  it('property: consecutive calls around a local midnight each get their own day (no stale answer)', () => {
    const days = fc.integer({ min: 0, max: 365 * 30 });
    const zones = fc.constantFrom(LONDON, 'America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati');
    fc.assert(
      fc.property(days, zones, (day, zone) => {
        const midnight = DateTime.fromMillis(Date.UTC(2000, 0, 1) + day * DAY_MS, { zone })
          .startOf('day')
          .plus({ days: 1 });
        for (const offset of [-60_001, -1, 0, 1, 59_999, 60_000]) {
          const ms = midnight.toMillis() + offset;
          expect(serviceToday(new Date(ms), zone)).toBe(DateTime.fromMillis(ms, { zone }).toISODate());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: in UTC it is the UTC date; in London it is that date or the next one', () => {
    const instants = fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2029, 0, 1) });
    fc.assert(
      fc.property(instants, (ms) => {
        const now = new Date(ms);
        const utcDate = now.toISOString().slice(0, 10);
        expect(serviceToday(now, 'UTC')).toBe(utcDate);
        const nextUtcDate = new Date(ms + DAY_MS).toISOString().slice(0, 10);
        expect([utcDate, nextUtcDate]).toContain(serviceToday(now, LONDON));
        // London is ahead of UTC by at most one hour.
        expect(serviceToday(new Date(ms - 3_600_000), LONDON) <= utcDate).toBe(true);
      }),
    );
  });
});
