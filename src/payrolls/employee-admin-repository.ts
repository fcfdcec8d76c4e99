import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { EmploymentStatus } from '../db/tables.ts';
import { applyPaging } from '../db/keyset-paging.ts';
import type { PagingQuery } from '../shared/paging.ts';

/**
 * A payroll's employees, newest employment first, keyset-paged on the employment (its id is the
 * row's `id` here; the employee's id is `employee_id`).
 */
export async function listEmployeesOnPayroll(db: Executor, payrollId: string, filters: { status?: EmploymentStatus | undefined }, paging: PagingQuery) {
  let query = db
    .selectFrom('employments')
    .innerJoin('employees', 'employees.id', 'employments.employee_id')
    .select([
      'employments.id',
      'employees.id as employee_id',
      'employments.payroll_id',
      'employees.payroll_provider_id',
      'employees.given_name',
      'employees.family_name',
      'employees.national_registration_number',
      'employees.date_of_birth',
      'employees.email_address',
      'employees.phone_number',
      'employees.postal_code',
      'employments.payroll_reference',
      'employments.start_date',
      'employments.end_date',
      'employments.employment_status',
      'employments.contract_type',
      'employments.annualised_salary',
      'employments.currency',
      'employments.created_at',
      sql<Date>`greatest(employees.updated_at, employments.updated_at)`.as('updated_at'),
    ])
    .where('employments.payroll_id', '=', payrollId);
  if (filters.status) query = query.where('employments.employment_status', '=', filters.status);
  return applyPaging(query, 'employments', paging).execute();
}
