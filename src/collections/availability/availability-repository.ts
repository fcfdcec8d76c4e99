import type { Executor } from '../../platform/db/connection.ts';
import { reachableProviderIds } from '../../directory/payroll-providers/provider-reach-repository.ts';
import { knownFamilyNamesOf } from '../../directory/payrolls/directory-repository.ts';
import type { DirectoryReach } from '../../platform/shared/caller.ts';

/**
 * Employees of the directory holding this national registration number (normalised, as stored; one
 * per provider at most), with what the matching rule compares next (the date of birth, and every
 * family name the directory knows for them: each payroll's spelling) and the provider each belongs
 * to. Only providers the caller reaches: a live biller finds live employees, a sandbox biller its own
 * sandbox's, never another sandbox's (each sandbox is drawn from a seed, so two may hold one person).
 */
export async function findEmployeesByNationalRegistrationNumber(db: Executor, nationalRegistrationNumber: string, reach: DirectoryReach) {
  return db
    .selectFrom('employees')
    .select(['employees.id', 'employees.payroll_provider_id', 'employees.date_of_birth', knownFamilyNamesOf('employees').as('family_names')])
    .where('employees.national_registration_number', '=', nationalRegistrationNumber)
    .where('employees.payroll_provider_id', 'in', reachableProviderIds(db, reach))
    .orderBy('employees.id')
    .execute();
}

/** Every employment of these employees, with its employer and payroll, in a stable order. */
export async function listEmploymentsOfEmployees(db: Executor, employeeIds: readonly string[]) {
  if (employeeIds.length === 0) return [];
  return db
    .selectFrom('employments')
    .innerJoin('employers', 'employers.id', 'employments.employer_id')
    .innerJoin('payrolls', 'payrolls.id', 'employments.payroll_id')
    .select([
      'employments.employee_id',
      'employments.employer_id',
      'employments.payroll_id',
      'employments.start_date',
      'employments.employment_status',
      'employments.contract_type',
      'employments.annualised_salary',
      'employments.currency',
      'employments.created_at',
      'employers.external_id as employer_external_id',
      'employers.name as employer_name',
      'employers.sic_code as employer_sic_code',
      'employers.industry_name as employer_industry_name',
      'employers.salary_deduction_opt_in_status as employer_opt_in',
      'payrolls.payment_run_frequency',
      'payrolls.payroll_provider_id',
    ])
    .where('employments.employee_id', 'in', employeeIds)
    .orderBy('employments.employee_id')
    .orderBy('employers.name')
    .orderBy('employments.employer_id')
    .orderBy('employments.payroll_id')
    .execute();
}

export type EmploymentRow = Awaited<ReturnType<typeof listEmploymentsOfEmployees>>[number];

export async function listPayDatesOfPayrolls(db: Executor, payrollIds: readonly string[]) {
  if (payrollIds.length === 0) return [];
  return db
    .selectFrom('pay_dates')
    .select(['payroll_id', 'pay_date', 'payroll_cutoff_date', 'pay_period', 'lock_date', 'locked_at'])
    .where('payroll_id', 'in', [...new Set(payrollIds)])
    .orderBy('payroll_id')
    .orderBy('pay_date')
    .execute();
}

export type PayrollPayDateRow = Awaited<ReturnType<typeof listPayDatesOfPayrolls>>[number];
