import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import {
  BACS_REFERENCE_MAX_LENGTH,
  MAX_DEDUCTION_REFERENCE_NUMBER,
  MAX_REMITTANCE_REFERENCE_NUMBER,
  REMITTANCE_REFERENCE_NUMBER_DIGITS,
  deductionPaymentReference,
  isBacsReference,
  remittancePaymentReference,
} from '../../../src/cycle/instructions/payment-reference.ts';

/** What a bank that strips spaces and punctuation, and a statement matcher, compare. */
const normalised = (reference: string) => reference.toUpperCase().replace(/[^A-Z0-9]/g, '');

const deductionNumber = fc.integer({ min: 1, max: MAX_DEDUCTION_REFERENCE_NUMBER });
const remittanceNumber = fc.integer({ min: 1, max: MAX_REMITTANCE_REFERENCE_NUMBER });
const payDate = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));

describe('isBacsReference', () => {
  it.each([
    ['SD00000001', true],
    ['SDR261030P1', true],
    ['SDR261030P00000001', true],
    ['ABCDEF', true],
    ['A1B2C3D4E5F6G7H8I9', true],
    ['INV 2026/10-30.A&B', true],
    ['123456', true],
    ['A1B2C3D4E5F6G7H8I9J', false], // 19 characters
    ['ABCDE', false], // fewer than 6 letters and digits
    ['AB-CD-E', false],
    ['AAAAAA', false], // all the same
    ['000000 000', false],
    ['abcdef', false], // lower case is outside the set
    ['ABC_DEF', false],
    ['ABC#DEF', false],
    ['ABC,DEF', false],
    ["O'NEILL1", false],
    ['ABC£DEF', false],
    ['ÉCOLE123', false],
    ['ABC\tDEF', false],
    [' ABCDEF', false], // starts with a space
    ['-ABCDEF', false],
    ['ABCDEF ', false], // ends with a space
    ['DDIC123456', false], // reserved
    ['', false],
  ])('%j -> %s', (reference, accepted) => {
    expect(isBacsReference(reference)).toBe(accepted);
  });

  it('takes exactly 18 characters and no more', () => {
    expect(isBacsReference('A'.repeat(9) + 'B'.repeat(9))).toBe(true);
    expect(isBacsReference('A'.repeat(9) + 'B'.repeat(10))).toBe(false);
    expect(BACS_REFERENCE_MAX_LENGTH).toBe(18);
  });
});

describe('deductionPaymentReference', () => {
  it.each([
    [1, 'SD00000001'],
    [42, 'SD00000042'],
    [9_999_999, 'SD09999999'],
    [99_999_999, 'SD99999999'],
    [100_000_000, 'SD100000000'],
    [123_456_789_012, 'SD123456789012'],
    [MAX_DEDUCTION_REFERENCE_NUMBER, 'SD999999999999999'],
  ])('%d -> %s', (number, reference) => {
    expect(deductionPaymentReference(number)).toBe(reference);
    expect(isBacsReference(reference)).toBe(true);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_DEDUCTION_REFERENCE_NUMBER + 1, 2 ** 53])('refuses %d', (bad) => {
    expect(() => deductionPaymentReference(bad)).toThrow(RangeError);
  });

  it('is a reference a bank accepts for every number, letters and digits only', () => {
    fc.assert(
      fc.property(deductionNumber, (number) => {
        const reference = deductionPaymentReference(number);
        expect(reference.length).toBeLessThanOrEqual(BACS_REFERENCE_MAX_LENGTH);
        expect(reference).toMatch(/^SD[0-9]{8,15}$/);
        expect(isBacsReference(reference)).toBe(true);
        expect(normalised(reference)).toBe(reference);
      }),
    );
  });

  it('is the same every time for the same number (a re-run, the next pay date)', () => {
    fc.assert(
      fc.property(deductionNumber, (number) => {
        expect(deductionPaymentReference(number)).toBe(deductionPaymentReference(number));
      }),
    );
  });

  it('gives the number back, so two numbers never share a reference', () => {
    fc.assert(
      fc.property(deductionNumber, (number) => {
        expect(Number(deductionPaymentReference(number).slice(2))).toBe(number);
      }),
    );
    fc.assert(
      fc.property(deductionNumber, deductionNumber, (a, b) => {
        fc.pre(a !== b);
        expect(deductionPaymentReference(a)).not.toBe(deductionPaymentReference(b));
      }),
    );
  });

  it('is unique over a payroll of 200,000 employees, across the 8-digit boundary', () => {
    const references = new Set<string>();
    for (let number = 99_900_001; number <= 100_100_000; number++) references.add(deductionPaymentReference(number));
    expect(references.size).toBe(200_000);
  });
});

describe('remittancePaymentReference', () => {
  it.each([
    ['2026-10-30', 1, 'SDR261030P00000001'],
    ['2026-10-30', 15, 'SDR261030P00000015'],
    ['2026-10-30', 17, 'SDR261030P00000017'],
    ['2026-10-30', 150, 'SDR261030P00000150'],
    ['2027-01-01', 17, 'SDR270101P00000017'],
    ['2000-01-01', 9_999_999, 'SDR000101P09999999'],
    ['2026-10-30', 10_000_000, 'SDR261030P10000000'],
    ['2099-12-31', MAX_REMITTANCE_REFERENCE_NUMBER, 'SDR991231P99999999'],
  ])('%s, payroll %d -> %s', (date, number, reference) => {
    expect(remittancePaymentReference(date, number)).toBe(reference);
    expect(reference).toHaveLength(BACS_REFERENCE_MAX_LENGTH);
    expect(isBacsReference(reference)).toBe(true);
  });

  it('the largest payroll number fits the 8 digits, so every reference is exactly the 18 characters Bacs carries', () => {
    expect(REMITTANCE_REFERENCE_NUMBER_DIGITS).toBe(8);
    expect(String(MAX_REMITTANCE_REFERENCE_NUMBER)).toHaveLength(REMITTANCE_REFERENCE_NUMBER_DIGITS);
    expect('SDR'.length + 'YYMMDD'.length + 'P'.length + REMITTANCE_REFERENCE_NUMBER_DIGITS).toBe(BACS_REFERENCE_MAX_LENGTH);
  });

  it.each([0, -1, 2.5, Number.NaN, MAX_REMITTANCE_REFERENCE_NUMBER + 1])('refuses payroll number %d', (bad) => {
    expect(() => remittancePaymentReference('2026-10-30', bad)).toThrow(RangeError);
  });

  it.each(['2026-1-30', '26-10-30', '2026-10-30T00:00:00Z', '', '20261030'])('refuses pay date %j', (bad) => {
    expect(() => remittancePaymentReference(bad, 1)).toThrow(RangeError);
  });

  it('is a reference a bank accepts for every pay date and payroll, letters and digits only, always 18 of them', () => {
    fc.assert(
      fc.property(payDate, remittanceNumber, (date, number) => {
        const reference = remittancePaymentReference(date, number);
        expect(reference).toHaveLength(BACS_REFERENCE_MAX_LENGTH);
        expect(reference).toMatch(/^SDR[0-9]{6}P[0-9]{8}$/);
        expect(isBacsReference(reference)).toBe(true);
        expect(normalised(reference)).toBe(reference);
        expect(remittancePaymentReference(date, number)).toBe(reference);
      }),
    );
  });

  it('gives the pay date and payroll back, so two payroll pay dates never share a reference', () => {
    fc.assert(
      fc.property(payDate, remittanceNumber, (date, number) => {
        const reference = remittancePaymentReference(date, number);
        expect(reference.slice(3, 9)).toBe(date.slice(2, 4) + date.slice(5, 7) + date.slice(8, 10));
        expect(Number(reference.slice(10))).toBe(number);
      }),
    );
  });

  it('no reference is the start of another, even cut short or with separators stripped (so none can be read as another)', () => {
    fc.assert(
      fc.property(payDate, remittanceNumber, payDate, remittanceNumber, (dateA, a, dateB, b) => {
        fc.pre(dateA !== dateB || a !== b);
        const first = remittancePaymentReference(dateA, a);
        const second = remittancePaymentReference(dateB, b);
        expect(second.startsWith(first)).toBe(false);
        expect(normalised(second).startsWith(normalised(first))).toBe(false);
      }),
    );
    // The case that went wrong when the number was not padded: payroll 15 and payroll 150 on one pay date.
    expect(remittancePaymentReference('2026-10-30', 150).startsWith(remittancePaymentReference('2026-10-30', 15))).toBe(false);
    // And numbers one digit longer than another's start with it no more.
    for (const [short, long] of [
      [1, 10],
      [12, 123],
      [1_234_567, 12_345_678],
    ] as const) {
      expect(remittancePaymentReference('2026-10-30', long).startsWith(remittancePaymentReference('2026-10-30', short))).toBe(false);
    }
  });

  it('is unique over 500 payrolls for every day of a year, and never equal to a deduction reference', () => {
    const references = new Set<string>();
    for (let day = 0; day < 365; day++) {
      const date = new Date(Date.UTC(2026, 0, 1 + day)).toISOString().slice(0, 10);
      for (let payroll = 1; payroll <= 500; payroll++) references.add(remittancePaymentReference(date, payroll));
    }
    expect(references.size).toBe(365 * 500);
    fc.assert(
      fc.property(payDate, remittanceNumber, deductionNumber, (date, payroll, employment) => {
        expect(remittancePaymentReference(date, payroll)).not.toBe(deductionPaymentReference(employment));
      }),
    );
  });
});
