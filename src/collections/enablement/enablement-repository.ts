import type { Executor } from '../../platform/db/connection.ts';
import type { MandateStatus } from '../../platform/db/tables.ts';
import { MANDATE_LIFECYCLE } from '../mandates/mandate-transitions.ts';

/** What enabling deduction on one employment depends on: its standing and its payroll's provider. */
export async function findEmploymentStanding(db: Executor, employeeId: string, payrollId: string) {
  return db
    .selectFrom('employments')
    .innerJoin('employers', 'employers.id', 'employments.employer_id')
    .innerJoin('payrolls', 'payrolls.id', 'employments.payroll_id')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select([
      'employments.employment_status',
      'employers.salary_deduction_opt_in_status as employer_opt_in',
      'payrolls.currency as payroll_currency',
      'payroll_providers.id as provider_id',
      'payroll_providers.sandbox as provider_sandbox',
      'payroll_providers.api_base_url',
      'payroll_providers.api_token_url',
      'payroll_providers.api_client_id',
      'payroll_providers.api_client_secret',
    ])
    .where('employments.employee_id', '=', employeeId)
    .where('employments.payroll_id', '=', payrollId)
    .executeTakeFirst();
}

/** Moves one (locked) mandate, only from a status the mandate lifecycle lets move to `status`. */
export async function updateMandateStatus(db: Executor, mandateId: string, status: MandateStatus, reason: string | null): Promise<void> {
  const result = await db
    .updateTable('mandates')
    .set((eb) => ({
      status,
      status_reason: reason,
      version: eb('version', '+', 1),
      updated_at: eb.fn<Date>('now'),
    }))
    .where('id', '=', mandateId)
    .where('status', 'in', MANDATE_LIFECYCLE.fromStatuses(status))
    .executeTakeFirstOrThrow();
  if (result.numUpdatedRows !== 1n) throw new Error(`mandate ${mandateId} was not in a status that may move to ${status}`);
}
