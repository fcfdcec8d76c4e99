import type { EmploymentStatus } from '../../platform/db/tables.ts';

export type EnablementDecision = { status: 'enabled'; reason: null } | { status: 'rejected'; reason: string } | { status: 'pending'; reason: string };

/**
 * Enablement for payrolls whose provider has no API: we decide from the directory. Salary deduction
 * needs a running employment at an employer that has opted in, in the mandate's currency. An employer
 * that has not decided yet is not a refusal: the mandate waits (pending) and the biller may ask again
 * once the employer opts in. Everything else is a definite no.
 */
export function enablementDecision(input: {
  employmentStatus: EmploymentStatus;
  employerOptIn: 'pending' | 'opted_in' | 'opted_out';
  mandateCurrency: string;
  payrollCurrency: string;
}): EnablementDecision {
  if (input.employmentStatus === 'leaver') return { status: 'rejected', reason: 'the employee has left this employment' };
  if (input.employmentStatus !== 'active') {
    return { status: 'rejected', reason: 'the employee is not on this payroll as an active employee' };
  }
  if (input.employerOptIn === 'opted_out') return { status: 'rejected', reason: 'the employer has opted out of salary deduction' };
  if (input.mandateCurrency !== input.payrollCurrency) {
    return {
      status: 'rejected',
      reason: `the mandate currency ${input.mandateCurrency} differs from the payroll currency ${input.payrollCurrency}`,
    };
  }
  if (input.employerOptIn === 'pending') {
    return { status: 'pending', reason: 'the employer has not yet opted in to salary deduction' };
  }
  return { status: 'enabled', reason: null };
}
