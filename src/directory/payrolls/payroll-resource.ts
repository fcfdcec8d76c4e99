import type { PayrollScheduleResponse } from '../payroll-providers/reference-schemas.ts';

export { payrollScheduleResponseSchema } from '../payroll-providers/reference-schemas.ts';

export interface PayrollWithCalendar {
  id: string;
  name: string;
  payment_run_frequency: PayrollScheduleResponse['payroll']['payment_run_frequency'];
  currency: string;
  employer_external_id: string;
  pay_dates: ReadonlyArray<{ pay_date: string; payroll_cutoff_date: string; pay_period: string; lock_date: string }>;
}

/**
 * Payroll information in the reference interface's PayrollScheduleResponse shape. `employer_id` is
 * the employer's id as its payroll provider knows it, the same id the full availability check shows.
 */
export function toPayrollScheduleResource(payroll: PayrollWithCalendar): PayrollScheduleResponse {
  return {
    payroll: {
      id: payroll.id,
      employer_id: payroll.employer_external_id,
      name: payroll.name,
      payment_run_frequency: payroll.payment_run_frequency,
      currency: payroll.currency,
      pay_dates: payroll.pay_dates.map((d) => ({
        pay_date: d.pay_date,
        payroll_cutoff_date: d.payroll_cutoff_date,
        pay_period: d.pay_period,
        lock_date: d.lock_date,
      })),
    },
  };
}
