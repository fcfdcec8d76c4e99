import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { ContractType, EmploymentStatus } from '../../platform/db/tables.ts';
import type { ProviderConnection } from '../payroll-providers/adapter.ts';
import { reachableProviderIds } from '../payroll-providers/provider-reach-repository.ts';
import type { DirectoryReach } from '../../platform/shared/caller.ts';
import { payrollName } from './payroll-names.ts';

// The employee directory: employers, payrolls, employees and employments as payroll providers
// describe them (pulled through their API or pushed to us).

/**
 * The providers a check may call: live ones only, since sandbox providers are simulated and never
 * reached. A sandbox caller's check calls none (it must not reach a live provider either).
 */
export async function listProviderConnections(db: Executor, mode?: { sandbox: boolean }): Promise<ProviderConnection[]> {
  if (mode?.sandbox) return [];
  return db
    .selectFrom('payroll_providers')
    .select(['id', 'api_base_url', 'api_token_url', 'api_client_id', 'api_client_secret'])
    .where('sandbox', '=', false)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findProviderConnection(db: Executor, providerId: string): Promise<ProviderConnection | undefined> {
  return db
    .selectFrom('payroll_providers')
    .select(['id', 'api_base_url', 'api_token_url', 'api_client_id', 'api_client_secret'])
    .where('id', '=', providerId)
    .executeTakeFirst();
}

export interface EmployerDetails {
  externalId: string;
  name: string;
  sicCode: string | null;
  industryName: string | null;
  optIn: 'pending' | 'opted_in' | 'opted_out';
}

/** Who a provider's own word on an employer is recorded as in its opt-in history. */
export const PROVIDER_SYNC = 'provider sync';

/**
 * The provider's word on its employer replaces ours; gives our employer id. A new employer, or a
 * change of its opt-in status, goes into the employer's opt-in history as made by `changedBy`.
 */
export async function upsertEmployer(db: Executor, providerId: string, employer: EmployerDetails, changedBy: string = PROVIDER_SYNC): Promise<string> {
  const rowLockExisting = () =>
    db
      .selectFrom('employers')
      .select(['id', 'salary_deduction_opt_in_status'])
      .where('payroll_provider_id', '=', providerId)
      .where('external_id', '=', employer.externalId)
      .forUpdate()
      .executeTakeFirst();
  let existing = await rowLockExisting();
  if (!existing) {
    const inserted = await db
      .insertInto('employers')
      .values({
        payroll_provider_id: providerId,
        external_id: employer.externalId,
        name: employer.name,
        sic_code: employer.sicCode,
        industry_name: employer.industryName,
        salary_deduction_opt_in_status: employer.optIn,
      })
      .onConflict((oc) => oc.columns(['payroll_provider_id', 'external_id']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) {
      await db
        .insertInto('employer_opt_in_changes')
        .values({ employer_id: inserted.id, from_status: null, to_status: employer.optIn, changed_by: changedBy, reason: null })
        .execute();
      return inserted.id;
    }
    // A concurrent sync created it first; it is committed now, so it is there to row-lock and update.
    existing = (await rowLockExisting())!;
  }
  await db
    .updateTable('employers')
    .set((eb) => ({
      name: employer.name,
      sic_code: employer.sicCode,
      industry_name: employer.industryName,
      salary_deduction_opt_in_status: employer.optIn,
      updated_at: eb.fn<Date>('now'),
    }))
    .where('id', '=', existing.id)
    .execute();
  if (existing.salary_deduction_opt_in_status !== employer.optIn) {
    await db
      .insertInto('employer_opt_in_changes')
      .values({ employer_id: existing.id, from_status: existing.salary_deduction_opt_in_status, to_status: employer.optIn, changed_by: changedBy, reason: null })
      .execute();
  }
  return existing.id;
}

export interface ProviderPayroll {
  id: string;
  providerId: string;
  employerId: string;
  name: string;
  frequency: 'weekly' | 'fortnightly' | 'four_weekly' | 'monthly' | 'unknown';
  currency: string;
}

/**
 * Creates or refreshes a payroll under the provider's own UUID (also its external id). A payroll id
 * that already belongs to another provider is left alone: false. The currency of an existing payroll
 * never changes here, since mandates and payment requests were made in it.
 */
export async function upsertProviderPayroll(db: Executor, payroll: ProviderPayroll): Promise<boolean> {
  const row = await db
    .insertInto('payrolls')
    .values({
      id: payroll.id,
      employer_id: payroll.employerId,
      payroll_provider_id: payroll.providerId,
      external_id: payroll.id,
      name: payroll.name,
      payment_run_frequency: payroll.frequency,
      currency: payroll.currency,
      calendar_synced_at: sql<Date>`now()`,
    })
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet((eb) => ({
          employer_id: eb.ref('excluded.employer_id'),
          payment_run_frequency: eb.ref('excluded.payment_run_frequency'),
          calendar_synced_at: eb.ref('excluded.calendar_synced_at'),
        }))
        .where('payrolls.payroll_provider_id', '=', payroll.providerId),
    )
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** With `reach`, only a payroll of a provider the caller reaches is found (see reachableProviderIds). */
export async function findPayrollWithEmployer(db: Executor, payrollId: string, options: { reach?: DirectoryReach } = {}) {
  let query = db
    .selectFrom('payrolls')
    .innerJoin('employers', 'employers.id', 'payrolls.employer_id')
    .select([
      'payrolls.id',
      'payrolls.name',
      'payrolls.payroll_provider_id',
      'payrolls.payment_run_frequency',
      'payrolls.currency',
      'payrolls.employer_id',
      'employers.external_id as employer_external_id',
    ])
    .where('payrolls.id', '=', payrollId);
  if (options.reach) query = query.where('payrolls.payroll_provider_id', 'in', reachableProviderIds(db, options.reach));
  return query.executeTakeFirst();
}

export async function findEmployee(db: Executor, employeeId: string, options: { rowLock?: boolean } = {}) {
  let query = db.selectFrom('employees').selectAll().where('id', '=', employeeId);
  if (options.rowLock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findEmployeeIdByNationalRegistrationNumber(db: Executor, providerId: string, nationalRegistrationNumber: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('employees')
    .select('id')
    .where('payroll_provider_id', '=', providerId)
    .where('national_registration_number', '=', nationalRegistrationNumber)
    .executeTakeFirst();
  return row?.id;
}

/** An employee row: who the person is, and the name and contact details first recorded (decision 0015). */
export interface EmployeeFields {
  national_registration_number: string | null;
  date_of_birth: string | null;
  given_name: string;
  family_name: string;
  email_address: string | null;
  phone_number: string | null;
  postal_code: string | null;
}

export async function insertEmployee(db: Executor, employee: EmployeeFields & { id: string; payroll_provider_id: string }) {
  return db.insertInto('employees').values(employee).returningAll().executeTakeFirstOrThrow();
}

export async function updateEmployee(db: Executor, employeeId: string, fields: Partial<EmployeeFields>) {
  return db
    .updateTable('employees')
    .set((eb) => ({ ...fields, updated_at: eb.fn<Date>('now') }))
    .where('id', '=', employeeId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whether a payroll other than this one employs the employee too (decision 0015: then no single payroll changes who they are). */
export async function isEmployedElsewhere(db: Executor, employeeId: string, payrollId: string): Promise<boolean> {
  const row = await db.selectFrom('employments').select('id').where('employee_id', '=', employeeId).where('payroll_id', '<>', payrollId).limit(1).executeTakeFirst();
  return row !== undefined;
}

export async function findEmployment(db: Executor, employeeId: string, payrollId: string, options: { rowLock?: boolean } = {}) {
  let query = db.selectFrom('employments').selectAll().where('employee_id', '=', employeeId).where('payroll_id', '=', payrollId);
  if (options.rowLock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Who else on the payroll already carries this payroll reference (it is unique per payroll). */
export async function findEmployeeIdByPayrollReference(db: Executor, payrollId: string, payrollReference: string) {
  const row = await db
    .selectFrom('employments')
    .select('employee_id')
    .where('payroll_id', '=', payrollId)
    .where('payroll_reference', '=', payrollReference)
    .executeTakeFirst();
  return row?.employee_id;
}

/** An employment row: what one payroll says of its employee, names and contact details included (decision 0015). */
export interface EmploymentFields {
  employer_id: string;
  payroll_reference: string;
  /** As this payroll spells them; null when it never named the person (the employee's name stands). */
  given_name: string | null;
  family_name: string | null;
  email_address: string | null;
  phone_number: string | null;
  postal_code: string | null;
  start_date: string | null;
  end_date: string | null;
  employment_status: EmploymentStatus;
  contract_type: ContractType;
  annualised_salary: number | null;
  currency: string;
}

export async function insertEmployment(db: Executor, employment: EmploymentFields & { employee_id: string; payroll_id: string }) {
  return db.insertInto('employments').values(employment).returningAll().executeTakeFirstOrThrow();
}

export async function updateEmployment(db: Executor, employmentId: string, fields: Partial<EmploymentFields>) {
  return db
    .updateTable('employments')
    .set((eb) => ({ ...fields, updated_at: eb.fn<Date>('now') }))
    .where('id', '=', employmentId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Every family name the directory knows for an employee (decision 0015): each employment's, as its
 * payroll spells it, or the employee's own where a payroll gave none or there is no employment.
 * `employees` is the alias of the employees row in the surrounding query.
 */
export function knownFamilyNamesOf(employees: string) {
  const own = sql.ref(`${employees}.family_name`);
  // No name at all (no employee: an outer join found none) is no name to match, not a null one.
  return sql<string[]>`array_remove(coalesce(
    (select array_agg(distinct coalesce(known.family_name, ${own})) from employments known where known.employee_id = ${sql.ref(`${employees}.id`)}),
    array[${own}]), null)`;
}

/**
 * Employees as members of payrolls: each employee row with its employment, without ids, which each
 * caller names as it needs (the employee's, or the employment's for paging). Who the person is comes
 * from the employee; the name and contact details are the employment's, as its payroll gave them
 * (the employee's name where the payroll never named the person; decision 0015).
 */
export function selectEmployeesOnPayrolls(db: Executor) {
  return db
    .selectFrom('employments')
    .innerJoin('employees', 'employees.id', 'employments.employee_id')
    .select([
      'employments.payroll_id',
      'employees.payroll_provider_id',
      sql<string>`coalesce(employments.given_name, employees.given_name)`.as('given_name'),
      sql<string>`coalesce(employments.family_name, employees.family_name)`.as('family_name'),
      'employees.national_registration_number',
      'employees.date_of_birth',
      'employments.email_address',
      'employments.phone_number',
      'employments.postal_code',
      'employments.payroll_reference',
      'employments.start_date',
      'employments.end_date',
      'employments.employment_status',
      'employments.contract_type',
      'employments.annualised_salary',
      'employments.currency',
      'employments.created_at',
      sql<Date>`greatest(employees.updated_at, employments.updated_at)`.as('updated_at'),
    ]);
}

/** One employee as a member of one payroll: the employee row and that employment together. */
export async function findEmployeeOnPayroll(db: Executor, employeeId: string, payrollId: string) {
  return selectEmployeesOnPayrolls(db)
    .select('employees.id')
    .where('employments.employee_id', '=', employeeId)
    .where('employments.payroll_id', '=', payrollId)
    .executeTakeFirst();
}

export type EmployeeOnPayroll = NonNullable<Awaited<ReturnType<typeof findEmployeeOnPayroll>>>;

/** Payrolls as people name them ("Employer: Payroll", payrollName), by id, in one statement. */
export async function findPayrollNames(db: Executor, payrollIds: readonly string[]): Promise<Map<string, string>> {
  if (payrollIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('payrolls as p')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .select(['p.id', 'p.name as payroll_name', 'e.name as employer_name'])
    .where('p.id', 'in', [...new Set(payrollIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, payrollName(row)]));
}
