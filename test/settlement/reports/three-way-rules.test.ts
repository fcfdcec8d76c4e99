import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { describe, expect, it } from 'vitest';
import type { RemittanceStatus } from '../../../src/platform/db/tables.ts';
import {
  explainThreeWay,
  firstLateDay,
  threeWayColumns,
  threeWayTotals,
  toThreeWayCsvCells,
  toThreeWayRecord,
  type ThreeWayRow,
} from '../../../src/settlement/reports/three-way-report.ts';

/** A payroll pay date where every figure agrees: 248.00 requested, deducted, received, funded and paid out. */
function agreeing(overrides: Partial<ThreeWayRow> = {}): ThreeWayRow {
  return {
    payroll_id: '019a7b2c-0000-7000-8000-000000000001',
    employer: 'Acme Ltd',
    payroll: 'Monthly',
    pay_date: '2026-10-30',
    currency: 'GBP',
    payment_reference: 'SDR261030P12',
    requested: 24_800,
    deducted: 24_800,
    expected: 24_800,
    received: 24_800,
    remittance_status: 'received',
    due_date: '2026-11-04',
    shortfall: 0,
    funded: 24_800,
    paid_out: 24_800,
    held_back: 0,
    ...overrides,
  };
}

describe('explainThreeWay', () => {
  it.each<[string, Partial<ThreeWayRow>, string]>([
    ['everything agrees', {}, 'All paid out.'],
    ['nothing was asked for', { requested: 0, deducted: 0, expected: 0, received: 0, funded: 0, paid_out: 0 }, 'All paid out.'],
    // Payroll's report.
    [
      'a short deduction, remitted and paid in full',
      { deducted: 20_800, expected: 20_800, received: 20_800, funded: 20_800, paid_out: 20_800 },
      'Payroll deducted £40.00 less than requested.',
    ],
    ['an over-deduction remitted in full', { deducted: 25_300, expected: 25_300, received: 25_300 }, 'Payroll deducted £5.00 more than requested.'],
    [
      'no payroll report yet, nothing collected, not yet due',
      { deducted: null, received: 0, remittance_status: 'expected', funded: 0, paid_out: 0 },
      'Payroll has not reported its deductions yet; nothing received, not yet due (due 2026-11-04).',
    ],
    // The employer's remittance.
    [
      'nothing received yet, within the grace',
      { received: 0, remittance_status: 'expected', funded: 0, paid_out: 0, held_back: 24_800 },
      'Nothing received, not yet due (due 2026-11-04); £248.00 held back until the remittance arrives.',
    ],
    [
      'nothing received after the due date',
      { received: 0, remittance_status: 'late', funded: 0, paid_out: 0, held_back: 24_800 },
      'Nothing received, late since 2026-11-05; £248.00 held back until the remittance arrives.',
    ],
    ['a trusted employer paid out before the cash came', { received: 0, remittance_status: 'late' }, 'Nothing received, late since 2026-11-05.'],
    [
      'a short remittance holding back what it does not cover',
      { received: 20_000, remittance_status: 'short', funded: 12_550, paid_out: 12_550, held_back: 12_250 },
      'Employer remitted £48.00 less than deducted (short); £122.50 held back until the remittance arrives.',
    ],
    [
      'a short remittance before payroll has reported',
      { deducted: null, received: 20_000, remittance_status: 'short', funded: 12_550, paid_out: 12_550, held_back: 12_250 },
      'Payroll has not reported its deductions yet; employer remitted £48.00 less than requested (short); £122.50 held back until the remittance arrives.',
    ],
    ['an over-remittance', { received: 25_000, remittance_status: 'over' }, 'Employer remitted £2.00 more than deducted (over).'],
    // Funding and payouts.
    ['funded, waiting for the payout run', { paid_out: 0 }, '£248.00 funded, not yet paid out (next payout run).'],
    ['partly paid out', { paid_out: 12_550 }, '£122.50 funded, not yet paid out (next payout run).'],
    ['a funded reversal waiting to be netted', { funded: 24_300, paid_out: 24_800 }, '£5.00 reversed, to be netted in the next payout run.'],
    ['an unfunded reversal', { held_back: -500 }, '£5.00 reversed, waiting for the remittance before it is netted.'],
    [
      'every difference at once',
      { deducted: 20_800, expected: 20_800, received: 16_000, remittance_status: 'short', funded: 12_550, paid_out: 8_000, held_back: 8_250 },
      'Payroll deducted £40.00 less than requested; employer remitted £48.00 less than deducted (short); ' +
        '£82.50 held back until the remittance arrives; £45.50 funded, not yet paid out (next payout run).',
    ],
    ['a currency without minor units', { currency: 'JPY', deducted: 24_000, expected: 24_000, received: 24_000 }, 'Payroll deducted 800 JPY less than requested.'],
  ])('%s', (_name, overrides, explanation) => {
    expect(explainThreeWay(agreeing(overrides))).toBe(explanation);
  });

  it('names each difference exactly when it exists, and says "All paid out." only when there is none', () => {
    const amount = fc.integer({ min: 0, max: 1_000_000 });
    const status = fc.constantFrom<RemittanceStatus>('expected', 'received', 'short', 'over', 'late');
    fc.assert(
      fc.property(
        amount,
        fc.option(amount),
        amount,
        status,
        amount,
        amount,
        fc.integer({ min: -10_000, max: 1_000_000 }),
        (requested, deducted, received, remittanceStatus, funded, paidOut, heldBack) => {
          const row = agreeing({
            requested,
            deducted,
            expected: deducted ?? requested,
            received,
            remittance_status: remittanceStatus,
            funded,
            paid_out: paidOut,
            held_back: heldBack,
          });
          const explanation = explainThreeWay(row);
          const expected = deducted ?? requested;
          expect(explanation.toLowerCase().includes('payroll deducted')).toBe(deducted !== null && deducted !== requested);
          expect(explanation.toLowerCase().includes('not reported')).toBe(deducted === null);
          expect(explanation.toLowerCase().includes('nothing received')).toBe(received === 0 && expected > 0);
          expect(explanation.includes('(short)')).toBe(received > 0 && received < expected);
          expect(explanation.includes('(over)')).toBe(received > expected);
          expect(explanation.includes('held back')).toBe(heldBack > 0);
          expect(explanation.includes('funded, not yet paid out')).toBe(funded > paidOut);
          const agrees = deducted === requested && received === expected && heldBack === 0 && funded === paidOut;
          expect(explanation === 'All paid out.').toBe(agrees);
          expect(explanation).toMatch(/^[A-Z0-9].*\.$/);
        },
      ),
    );
  });
});

describe('firstLateDay', () => {
  it.each([
    ['2026-11-04', '2026-11-05'],
    ['2026-12-31', '2027-01-01'],
    ['2028-02-28', '2028-02-29'],
    ['2027-02-28', '2027-03-01'],
  ])('a remittance due %s is late from %s', (due, late) => {
    expect(firstLateDay(due)).toBe(late);
  });
});

describe('toThreeWayRecord and the CSV cells', () => {
  it('writes money in major units, a missing payroll report as an empty cell, and the explanation last', () => {
    const record = toThreeWayRecord(agreeing({ deducted: null, received: 0, remittance_status: 'expected', funded: 0, paid_out: 0, held_back: 24_800 }));
    expect(Object.keys(record)).toEqual([...threeWayColumns]);
    expect(record).toMatchObject({ requested: '248.00', deducted: '', expected: '248.00', received: '0.00', funded: '0.00', paid_out: '0.00', held_back: '248.00' });
    expect(record.explanation).toBe(explainThreeWay(agreeing({ deducted: null, received: 0, remittance_status: 'expected', funded: 0, paid_out: 0, held_back: 24_800 })));
  });

  it('neutralises formulas in the names from outside, never in amounts', () => {
    const cells = toThreeWayCsvCells(toThreeWayRecord(agreeing({ employer: '=HYPERLINK("x")', payroll: '+Weekly', held_back: -500 })));
    expect(cells[threeWayColumns.indexOf('employer')]).toBe(`'=HYPERLINK("x")`);
    expect(cells[threeWayColumns.indexOf('payroll')]).toBe(`'+Weekly`);
    expect(cells[threeWayColumns.indexOf('held_back')]).toBe('-5.00');
  });
});

describe('threeWayTotals', () => {
  it('adds up per currency, a missing payroll report as nothing deducted', () => {
    const rows = [
      agreeing(),
      agreeing({ deducted: null, received: 0, funded: 0, paid_out: 0, held_back: 1_000 }),
      agreeing({ currency: 'EUR', requested: 100, deducted: 90, expected: 90, received: 90, funded: 90, paid_out: 50 }),
    ];
    expect(threeWayTotals(rows)).toEqual([
      { currency: 'EUR', requested: 100n, deducted: 90n, received: 90n, funded: 90n, paid_out: 50n, held_back: 0n, shortfall: 0n },
      { currency: 'GBP', requested: 49_600n, deducted: 24_800n, received: 24_800n, funded: 24_800n, paid_out: 24_800n, held_back: 1_000n, shortfall: 0n },
    ]);
    expect(threeWayTotals([])).toEqual([]);
  });

  it('stays exact where the total of a pay date’s remittances passes 2^53', () => {
    const large = 999_999_999_999_999;
    const rows = Array.from({ length: 10 }, () => agreeing({ requested: large, deducted: large, expected: large, received: large, funded: 0, paid_out: 0, held_back: 0 }));
    const [total] = threeWayTotals(rows);
    expect(total!.requested).toBe(9_999_999_999_999_990n);
    expect(total!.received).toBe(9_999_999_999_999_990n);
  });
});
