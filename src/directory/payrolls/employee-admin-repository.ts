import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { EmploymentStatus } from '../../platform/db/tables.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';
import { selectEmployeesOnPayrolls } from './directory-repository.ts';

/**
 * An employee's name as the employment's payroll spells it (the employment aliased `em`), else the
 * person's (decision 0015). The person's row is read only when the payroll never gave a name: a CASE
 * runs its subquery only then.
 */
export const employmentNameSql = sql<string>`case
  when em.given_name is not null and em.family_name is not null then em.given_name || ' ' || em.family_name
  else (select coalesce(em.given_name, ee.given_name) || ' ' || coalesce(em.family_name, ee.family_name) from employees ee where ee.id = em.employee_id)
end`;

/**
 * A payroll's employees, newest employment first, keyset-paged on the employment (its id is the
 * row's `id` here; the employee's id is `employee_id`).
 */
export async function listEmployeesOnPayroll(db: Executor, payrollId: string, filters: { status?: EmploymentStatus | undefined }, paging: PagingQuery) {
  let query = selectEmployeesOnPayrolls(db).select(['employments.id', 'employees.id as employee_id']).where('employments.payroll_id', '=', payrollId);
  if (filters.status) query = query.where('employments.employment_status', '=', filters.status);
  return applyPaging(query, 'employments', paging).execute();
}
