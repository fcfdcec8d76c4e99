import type { Executor } from '../../platform/db/connection.ts';
import type { EmploymentStatus } from '../../platform/db/tables.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';
import { selectEmployeesOnPayrolls } from './directory-repository.ts';

/**
 * A payroll's employees, newest employment first, keyset-paged on the employment (its id is the
 * row's `id` here; the employee's id is `employee_id`).
 */
export async function listEmployeesOnPayroll(db: Executor, payrollId: string, filters: { status?: EmploymentStatus | undefined }, paging: PagingQuery) {
  let query = selectEmployeesOnPayrolls(db).select(['employments.id', 'employees.id as employee_id']).where('employments.payroll_id', '=', payrollId);
  if (filters.status) query = query.where('employments.employment_status', '=', filters.status);
  return applyPaging(query, 'employments', paging).execute();
}
