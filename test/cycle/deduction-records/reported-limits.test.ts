import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CEILING_REPORTED_DEDUCTION_MINOR, CEILING_REPORTED_PAY_DATE_TOTAL_MINOR, configSchema } from '../../../src/platform/config/config.ts';
import {
  DEFAULT_REPORTED_LIMITS,
  payDateReportedOverLimitError,
  payDateWithinReportedLimit,
  reportedAmountOverLimit,
  reportedLimitsOf,
} from '../../../src/cycle/deduction-records/reported-limits.ts';
import { AmountOutOfRangeError, exactMinorUnits } from '../../../src/platform/money/major-units.ts';
import { eachPayDate } from '../../../src/platform/pay-date-exceptions/pay-date-exceptions.ts';
import { PROPERTY_SEED } from '../../support/property-seed.ts';

const limits = { maxPerEmployee: 1_000, maxPerPayDate: 3_000 };

describe('reportedAmountOverLimit', () => {
  it('takes the limit itself and refuses one minor unit more, naming the setting and both amounts', () => {
    expect(reportedAmountOverLimit(0, '/a', limits, 'GBP')).toBeNull();
    expect(reportedAmountOverLimit(1_000, '/a', limits, 'GBP')).toBeNull();
    expect(reportedAmountOverLimit(1_001, '/a', limits, 'GBP')).toEqual({ pointer: '/a', detail: 'must be at most £10.00 (MAX_REPORTED_DEDUCTION_MINOR), got £10.01' });
    expect(reportedAmountOverLimit(1_001, '/a', limits, 'JPY')!.detail).toBe('must be at most 1,000 JPY (MAX_REPORTED_DEDUCTION_MINOR), got 1,001 JPY');
  });
});

describe('payDateWithinReportedLimit', () => {
  it('allows exactly the limit, refuses past it, exact past 2^53', () => {
    expect(payDateWithinReportedLimit(2_000n, 1_000n, limits)).toBe(true);
    expect(payDateWithinReportedLimit(2_001n, 1_000n, limits)).toBe(false);
    expect(payDateWithinReportedLimit(9_007_199_254_740_993n, 0n, limits)).toBe(false);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.bigInt({ min: 0n, max: 10n ** 18n }), (others, reported) => {
        expect(payDateWithinReportedLimit(others, reported, limits)).toBe(others + reported <= 3_000n);
      }),
      { seed: PROPERTY_SEED },
    );
  });

  it('explains the refusal in money, with the limit as a member', () => {
    const error = payDateReportedOverLimitError('2026-11-27', 2_500n, 1_000n, limits, 'GBP', '/x');
    expect(error.detail).toBe(
      "Payroll's reports for pay date 2026-11-27 may add up to at most £30.00 (MAX_REPORTED_PAY_DATE_TOTAL_MINOR); the other employees' current records already add up to £25.00 and this would add £10.00",
    );
    expect(error.members).toEqual({ limit: { name: 'MAX_REPORTED_PAY_DATE_TOTAL_MINOR', amount: 3_000, currency: 'GBP' } });
  });
});

describe('the configured limits', () => {
  it('default to GBP 10,000,000.00 per employee and GBP 10,000,000,000.00 per pay date', () => {
    const config = configSchema.parse({});
    expect(reportedLimitsOf(config)).toEqual(DEFAULT_REPORTED_LIMITS);
    expect(DEFAULT_REPORTED_LIMITS).toEqual({ maxPerEmployee: 1_000_000_000, maxPerPayDate: 1_000_000_000_000 });
  });

  it('refuse settings past their ceilings or out of order', () => {
    expect(() => configSchema.parse({ MAX_REPORTED_DEDUCTION_MINOR: String(CEILING_REPORTED_DEDUCTION_MINOR + 1) })).toThrow();
    expect(() => configSchema.parse({ MAX_REPORTED_PAY_DATE_TOTAL_MINOR: String(CEILING_REPORTED_PAY_DATE_TOTAL_MINOR + 1) })).toThrow();
    expect(() => configSchema.parse({ MAX_REPORTED_DEDUCTION_MINOR: '99999999' })).toThrow(/MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR/);
    expect(() => configSchema.parse({ MAX_REPORTED_PAY_DATE_TOTAL_MINOR: '999999999' })).toThrow(/MAX_REPORTED_DEDUCTION_MINOR/);
  });

  it('keep a pay date far inside 2^53 even when every connection PostgreSQL allows pushes at once at the ceilings', () => {
    const worst = BigInt(CEILING_REPORTED_PAY_DATE_TOTAL_MINOR) + 262_143n * BigInt(CEILING_REPORTED_DEDUCTION_MINOR);
    expect(worst * 3n).toBeLessThan(BigInt(Number.MAX_SAFE_INTEGER));
  });
});

describe('exactMinorUnits', () => {
  it('carries a total up to 2^53 - 1 and refuses past it, never rounding', () => {
    expect(exactMinorUnits(9_007_199_254_740_991n, 'x')).toBe(Number.MAX_SAFE_INTEGER);
    expect(exactMinorUnits(-9_007_199_254_740_991n, 'x')).toBe(-Number.MAX_SAFE_INTEGER);
    expect(() => exactMinorUnits(9_007_199_254_740_992n, 'The total')).toThrow(AmountOutOfRangeError);
    expect(() => exactMinorUnits(9_999_999_999_999_990n, 'The total')).toThrow(
      "The total adds up to more than the service carries exactly (past 2^53 of the currency's smallest unit)",
    );
  });
});

describe('eachPayDate', () => {
  it('goes on past a pay date whose work throws, naming it, and keeps the order of the others', () => {
    const items = [
      { payrollId: 'p1', payDate: '2026-11-27', amount: 1n },
      { payrollId: 'p2', payDate: '2026-11-27', amount: 10n ** 17n },
      { payrollId: 'p3', payDate: '2026-11-27', amount: 3n },
    ];
    const { results, failures } = eachPayDate(items, (item) => exactMinorUnits(item.amount, `payroll ${item.payrollId}`));
    expect(results).toEqual([1, 3]);
    expect(failures).toEqual([{ payrollId: 'p2', payDate: '2026-11-27', detail: expect.stringContaining('payroll p2 adds up to more than the service carries exactly') }]);
  });
});
