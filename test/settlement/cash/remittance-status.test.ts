import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import type { RemittanceStatus } from '../../../src/platform/db/tables.ts';
import { amountOwed, expectedRemittance, remittanceDueDate, remittanceShortfall, remittanceStatus } from '../../../src/settlement/cash/remittance-status.ts';

const NONE: ReadonlySet<string> = new Set();

describe('remittanceDueDate', () => {
  it.each([
    ['2026-10-30', 0, NONE, '2026-10-30'], // Friday, day 0
    ['2026-10-30', 1, NONE, '2026-11-02'], // over the weekend
    ['2026-10-30', 3, NONE, '2026-11-04'],
    ['2026-10-31', 1, NONE, '2026-11-02'], // a Saturday pay date is not counted
    ['2026-12-24', 1, new Set(['2026-12-25', '2026-12-28']), '2026-12-29'], // Christmas and the Boxing Day substitute
    ['2026-12-24', 2, new Set(['2026-12-25', '2026-12-28']), '2026-12-30'],
  ] as const)('%s + %d working days -> %s', (payDate, days, holidays, due) => {
    expect(remittanceDueDate(payDate, days, holidays)).toBe(due);
  });

  it('refuses a negative grace and a malformed pay date', () => {
    expect(() => remittanceDueDate('2026-10-30', -1, NONE)).toThrow(RangeError);
    expect(() => remittanceDueDate('2026-02-30', 1, NONE)).toThrow(RangeError);
  });
});

describe('remittanceStatus', () => {
  const DUE = '2026-11-04';
  const DAYS = { before: '2026-11-03', on: DUE, after: '2026-11-05' } as const;

  it.each([
    [1000, 1000, 'before', 'received'],
    [1000, 1000, 'after', 'received'],
    [0, 0, 'after', 'received'],
    [1000, 1001, 'on', 'over'],
    [0, 1, 'after', 'over'],
    [1000, 999, 'before', 'short'],
    [1000, 1, 'after', 'short'],
    [1000, 0, 'before', 'expected'],
    [1000, 0, 'on', 'expected'],
    [1000, 0, 'after', 'late'],
  ] as const)('expected %d, received %d, %s the due date -> %s', (expected, received, when, status) => {
    expect(remittanceStatus({ expected, received, dueDate: DUE, today: DAYS[when] })).toBe(status);
  });

  it('exhaustively over small amounts and every position of today against the due date', () => {
    let cases = 0;
    for (let expected = 0; expected <= 5; expected++) {
      for (let received = 0; received <= 6; received++) {
        for (const [when, today] of Object.entries(DAYS)) {
          // The rule in words, case by case.
          let status: RemittanceStatus;
          if (received === expected) status = 'received';
          else if (received > expected) status = 'over';
          else if (received > 0) status = 'short';
          else status = when === 'after' ? 'late' : 'expected';
          expect(remittanceStatus({ expected, received, dueDate: DUE, today }), `${expected} ${received} ${when}`).toBe(status);
          cases += 1;
        }
      }
    }
    expect(cases).toBe(6 * 7 * 3);
  });

  it('property: only a remittance with nothing received can be late, and only after its due date', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000 }), fc.nat({ max: 10_000 }), fc.integer({ min: -40, max: 40 }), (expected, received, offset) => {
        const today = new Date(Date.UTC(2026, 10, 4 + offset)).toISOString().slice(0, 10);
        const status = remittanceStatus({ expected, received, dueDate: DUE, today });
        expect(status === 'late').toBe(received === 0 && expected > 0 && offset > 0);
        expect(status === 'expected').toBe(received === 0 && expected > 0 && offset <= 0);
      }),
    );
  });

  it('refuses amounts that are not minor units and dates that are not dates', () => {
    expect(() => remittanceStatus({ expected: -1, received: 0, dueDate: DUE, today: DUE })).toThrow(RangeError);
    expect(() => remittanceStatus({ expected: 1, received: 0.5, dueDate: DUE, today: DUE })).toThrow(RangeError);
    expect(() => remittanceStatus({ expected: 1, received: 0, dueDate: '2026-11-31', today: DUE })).toThrow(RangeError);
    expect(() => remittanceStatus({ expected: 1, received: 0, dueDate: DUE, today: '4 Nov 2026' })).toThrow(RangeError);
  });
});

describe('amountOwed', () => {
  it('exhaustively: what is expected less what came, never below zero', () => {
    for (let expected = 0; expected <= 6; expected++) {
      for (let received = 0; received <= 8; received++) {
        expect(amountOwed({ expected, received }), `${expected} ${received}`).toBe(received >= expected ? 0 : expected - received);
      }
    }
  });

  it('agrees with the status: owed exactly when expected, late or short', () => {
    for (let expected = 0; expected <= 6; expected++) {
      for (let received = 0; received <= 8; received++) {
        const status = remittanceStatus({ expected, received, dueDate: '2026-11-04', today: '2026-11-05' });
        expect(amountOwed({ expected, received }) > 0).toBe(status === 'late' || status === 'short');
      }
    }
  });

  it('refuses negative amounts', () => {
    expect(() => amountOwed({ expected: -1, received: 0 })).toThrow(RangeError);
    expect(() => amountOwed({ expected: 1, received: -1 })).toThrow(RangeError);
  });
});

describe('expectedRemittance', () => {
  it.each([
    [1000, null, 1000],
    [1000, 1000, 1000],
    [1000, 800, 800],
    [1000, 0, 0], // payroll deducted nothing: nothing is expected
    [0, null, 0],
    [1000, 1200, 1200], // payroll's word is what the employer holds
  ] as const)('requested %d, deducted %j -> %d', (requested, deducted, expected) => {
    expect(expectedRemittance({ requested, deducted })).toBe(expected);
  });

  it('refuses amounts that are not minor units', () => {
    expect(() => expectedRemittance({ requested: -1, deducted: null })).toThrow(RangeError);
    expect(() => expectedRemittance({ requested: 1, deducted: -1 })).toThrow(RangeError);
    expect(() => expectedRemittance({ requested: 1, deducted: 0.5 })).toThrow(RangeError);
  });
});

describe('shortfall: paid out beyond what was received', () => {
  it('is what was paid out above what is left, never below zero', () => {
    expect(remittanceShortfall({ paidOut: 410_691, received: 0 })).toBe(410_691);
    expect(remittanceShortfall({ paidOut: 410_691, received: 10_000 })).toBe(400_691);
    expect(remittanceShortfall({ paidOut: 410_691, received: 410_691 })).toBe(0);
    expect(remittanceShortfall({ paidOut: 0, received: 410_691 })).toBe(0);
    // A pay date whose reversals netted below zero owes nothing back.
    expect(remittanceShortfall({ paidOut: -500, received: 0 })).toBe(0);
  });

  it('refuses amounts that are not whole minor units', () => {
    expect(() => remittanceShortfall({ paidOut: 1.5, received: 0 })).toThrow(RangeError);
    expect(() => remittanceShortfall({ paidOut: 0, received: -1 })).toThrow(RangeError);
  });

  it('outranks every other status while above zero, whatever the amounts and the date', () => {
    fc.assert(
      fc.property(
        fc.nat(10_000_000),
        fc.nat(10_000_000),
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.constantFrom('2026-11-03', '2026-11-04', '2026-11-05'),
        (expected, received, shortfall, today) => {
          expect(remittanceStatus({ expected, received, dueDate: '2026-11-04', today, shortfall })).toBe('shortfall');
          expect(remittanceStatus({ expected, received, dueDate: '2026-11-04', today, shortfall: 0 })).not.toBe('shortfall');
        },
      ),
    );
  });

  it('refuses a negative shortfall', () => {
    expect(() => remittanceStatus({ expected: 1, received: 0, dueDate: '2026-11-04', today: '2026-11-04', shortfall: -1 })).toThrow(RangeError);
  });
});
