import type { FieldError } from '../../platform/shared/domain-errors.ts';
import { MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import type { ConfirmationSubmission } from './confirmation-resource.ts';
import { minorUnitsOrError } from './major-amount.ts';
import { DEFAULT_REPORTED_LIMITS, reportedAmountOverLimit, type ReportedLimits } from './reported-limits.ts';

/** Enough to fix a file by; a submission wrong on every one of 100,000 lines gets a count, not a novel. */
export const MAX_LISTED_ERRORS = 100;

export type ConfirmationCheck =
  | { kind: 'valid'; amounts: number[]; total: number }
  | { kind: 'invalid'; errors: FieldError[]; errorCount: number }
  /** Lines over MAX_REPORTED_DEDUCTION_MINOR (the first MAX_LISTED_ERRORS), once everything else is valid. */
  | { kind: 'over-limit'; errors: FieldError[]; errorCount: number }
  /** Minor units; `linesTotal` null when the lines add up beyond any amount a total can state. */
  | { kind: 'total-mismatch'; statedTotal: number; linesTotal: number | null };

/**
 * The checks a confirmation passes before anything is stored, without I/O: it is for the snapshot's
 * pay period and the payroll's currency, every amount fits the currency's decimals, no employee
 * appears twice, no line is over the per-employee reporting limit, and the stated total equals the
 * lines' sum exactly (in minor units).
 */
export function checkConfirmation(submission: ConfirmationSubmission, expected: { payPeriod: string; currency: string; limits?: ReportedLimits }): ConfirmationCheck {
  const limits = expected.limits ?? DEFAULT_REPORTED_LIMITS;
  const errors: FieldError[] = [];
  let errorCount = 0;
  const report = (error: FieldError) => {
    errorCount += 1;
    if (errors.length < MAX_LISTED_ERRORS) errors.push(error);
  };

  if (submission.pay_period !== expected.payPeriod) {
    report({ pointer: '/confirmation/pay_period', detail: `must be ${expected.payPeriod}, the pay period of the deduction data` });
  }
  const currencyMatches = submission.currency === expected.currency;
  if (!currencyMatches) {
    report({ pointer: '/confirmation/currency', detail: `must be ${expected.currency}, the currency of the payroll` });
  }

  const firstLineOf = new Map<string, number>();
  const amounts = new Array<number>(submission.deductions.length);
  submission.deductions.forEach((line, index) => {
    const employeeId = line.employee_id.toLowerCase();
    const first = firstLineOf.get(employeeId);
    if (first === undefined) firstLineOf.set(employeeId, index);
    else report({ pointer: `/confirmation/deductions/${index}/employee_id`, detail: `employee ${employeeId} is already on line ${first}` });
    if (!currencyMatches) return;
    const amount = minorUnitsOrError(line.deducted_amount, submission.currency, `/confirmation/deductions/${index}/deducted_amount`);
    if (amount.error) report(amount.error);
    else amounts[index] = amount.minor;
  });

  let statedTotal = 0;
  if (currencyMatches) {
    const total = minorUnitsOrError(submission.total_amount, submission.currency, '/confirmation/total_amount');
    if (total.error) report(total.error);
    else statedTotal = total.minor;
  }
  if (errorCount > 0) return { kind: 'invalid', errors, errorCount };

  amounts.forEach((amount, index) => {
    const over = reportedAmountOverLimit(amount, `/confirmation/deductions/${index}/deducted_amount`, limits, submission.currency);
    if (over) report(over);
  });
  if (errorCount > 0) return { kind: 'over-limit', errors, errorCount };

  // Each amount is at most MAX_EXACT_MINOR_UNITS, so stopping once past it keeps the sum exact.
  let linesTotal = 0;
  for (const amount of amounts) {
    linesTotal += amount;
    if (linesTotal > MAX_EXACT_MINOR_UNITS) return { kind: 'total-mismatch', statedTotal, linesTotal: null };
  }
  if (linesTotal !== statedTotal) return { kind: 'total-mismatch', statedTotal, linesTotal };
  return { kind: 'valid', amounts, total: statedTotal };
}
