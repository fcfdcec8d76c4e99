import { employeePushResponseSchema, type EmployeePushRecord, type EmployeePushResponse } from '../../directory/payroll-providers/reference-schemas.ts';

export { employeePushResponseSchema };

/** The push response of the salary-deduction interface: the record as received, on its payroll, accepted. */
export function toPushResponse(payrollId: string, record: EmployeePushRecord): EmployeePushResponse {
  return {
    pay_period: record.pay_period,
    id: record.id,
    payroll_id: payrollId,
    version: record.version,
    salary_deduction: {
      employee_id: record.salary_deduction.employee_id,
      deduction_amount: record.salary_deduction.deduction_amount,
      currency: record.salary_deduction.currency,
    },
    outcome: 'Accepted',
  };
}
