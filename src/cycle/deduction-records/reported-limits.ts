import { DEFAULT_MAX_REPORTED_DEDUCTION_MINOR, DEFAULT_MAX_REPORTED_PAY_DATE_TOTAL_MINOR, type Config } from '../../platform/config/config.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { InvalidError, type FieldError } from '../../platform/shared/domain-errors.ts';

// What one payroll may report it deducted is bounded, so that no report can take a total the service
// computes past 2^53, where the driver refuses to read it and every biller's cash handling that
// shares the statement, the payout run or the report would fail with it.
//
// Why the bounds are enough, by design:
// - a confirmation holds its pay date exclusively, so the pay date's total it checks is exact;
// - pushes to one pay date run side by side, each checking the others' committed records, so k pushes
//   at once can overshoot the pay-date limit by at most (k - 1) per-employee limits. k is at most the
//   database's connections (PostgreSQL caps max_connections at 262,143), and at the ceilings
//   (CEILING_REPORTED_*: 10^13 per pay date, 10^10 per employee) a pay date's total stays below
//   10^13 + 262,143 x 10^10 < 2.7 x 10^15, a third of 2^53;
// - sums over many pay dates (reports, charts) add these as numeric in PostgreSQL, read as BigInt.

export interface ReportedLimits {
  /** MAX_REPORTED_DEDUCTION_MINOR: the most reported for one employee on one pay date. */
  maxPerEmployee: number;
  /** MAX_REPORTED_PAY_DATE_TOTAL_MINOR: the most the current records of one payroll pay date may add up to. */
  maxPerPayDate: number;
}

export const DEFAULT_REPORTED_LIMITS: ReportedLimits = Object.freeze({
  maxPerEmployee: DEFAULT_MAX_REPORTED_DEDUCTION_MINOR,
  maxPerPayDate: DEFAULT_MAX_REPORTED_PAY_DATE_TOTAL_MINOR,
});

export function reportedLimitsOf(config: Pick<Config, 'MAX_REPORTED_DEDUCTION_MINOR' | 'MAX_REPORTED_PAY_DATE_TOTAL_MINOR'>): ReportedLimits {
  return { maxPerEmployee: config.MAX_REPORTED_DEDUCTION_MINOR, maxPerPayDate: config.MAX_REPORTED_PAY_DATE_TOTAL_MINOR };
}

export const EMPLOYEE_LIMIT_NAME = 'MAX_REPORTED_DEDUCTION_MINOR';
export const PAY_DATE_LIMIT_NAME = 'MAX_REPORTED_PAY_DATE_TOTAL_MINOR';

const money = formatMoney;

/** The field error for a reported amount over the per-employee limit, or null when it is within it. */
export function reportedAmountOverLimit(amount: number, pointer: string, limits: ReportedLimits, currency: string): FieldError | null {
  if (amount <= limits.maxPerEmployee) return null;
  return { pointer, detail: `must be at most ${money(limits.maxPerEmployee, currency)} (${EMPLOYEE_LIMIT_NAME}), got ${money(amount, currency)}` };
}

/**
 * Whether a report keeps its payroll pay date within the limit: `reported` is what this report stores
 * (its employees' new records), `othersTotal` the current records of every other employee.
 */
export function payDateWithinReportedLimit(othersTotal: bigint, reported: bigint, limits: ReportedLimits): boolean {
  return othersTotal + reported <= BigInt(limits.maxPerPayDate);
}

/** 422 naming MAX_REPORTED_PAY_DATE_TOTAL_MINOR: the pay date's reports would add up to more. */
export function payDateReportedOverLimitError(
  payDate: string,
  othersTotal: bigint,
  reported: bigint,
  limits: ReportedLimits,
  currency: string,
  pointer: string,
): InvalidError {
  const limit = money(limits.maxPerPayDate, currency);
  const detail =
    `Payroll's reports for pay date ${payDate} may add up to at most ${limit} (${PAY_DATE_LIMIT_NAME}); ` +
    `the other employees' current records already add up to ${money(othersTotal, currency)} and this would add ${money(reported, currency)}`;
  return new InvalidError('reported-amount-over-limit', detail, {
    errors: [{ pointer, detail: `would take pay date ${payDate} past ${limit} (${PAY_DATE_LIMIT_NAME})` }],
    members: { limit: { name: PAY_DATE_LIMIT_NAME, amount: limits.maxPerPayDate, currency } },
  });
}

/** 422 naming MAX_REPORTED_DEDUCTION_MINOR, a field error per amount over it. */
export function reportedAmountsOverLimitError(errors: FieldError[], limits: ReportedLimits, currency: string, errorCount = errors.length): InvalidError {
  const limit = money(limits.maxPerEmployee, currency);
  const detail =
    errorCount === 1
      ? `A reported amount is more than ${limit}, the most payroll may report for one employee on one pay date`
      : `${errorCount} reported amounts are more than ${limit}, the most payroll may report for one employee on one pay date`;
  return new InvalidError('reported-amount-over-limit', detail, {
    errors,
    members: { limit: { name: EMPLOYEE_LIMIT_NAME, amount: limits.maxPerEmployee, currency } },
  });
}
