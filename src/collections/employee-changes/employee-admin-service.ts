import { z } from 'zod';
import { recordAction, type Actor, type AuditAction } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { EmploymentStatus } from '../../platform/db/tables.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { pageOf, type PagingQuery } from '../../platform/shared/paging.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import {
  findEmployeeIdByPayrollReference,
  findEmployeeOnPayroll,
  findEmployment,
  findPayrollWithEmployer,
  insertEmployee,
  insertEmployment,
  updateEmployee,
  updateEmployment,
  type EmployeeFields,
  type EmploymentFields,
} from '../../directory/payrolls/directory-repository.ts';
import { changedFields } from './directory-service.ts';
import { listEmployeesOnPayroll } from '../../directory/payrolls/employee-admin-repository.ts';
import { findImportCandidates } from './employee-import-repository.ts';
import { leaverWithoutEndDate, matchImportedEmployee } from '../../directory/payrolls/employee-import-rules.ts';
import {
  employeeRecordRequestSchema,
  toEmployeeResource,
  toEmployeeUpdatePayload,
  type EmployeeRecord,
  type EmployeeResource,
} from '../../directory/payrolls/employee-resource.ts';
import { followEmploymentChange } from './employment-change.ts';
import { normaliseNationalRegistrationNumber } from '../../directory/payrolls/person-identity.ts';

// Operators keep a payroll's employees by hand, one at a time: the same record and rules as a
// provider's push and a file's row, with who did it and why in the audit log.

const employeeRecordSchema = employeeRecordRequestSchema.shape.employee;

/** Fields of an employee record to change; null clears an optional one, a field left out stays. */
export const employeeChangesSchema = z.strictObject(employeeRecordSchema.shape).partial();
export type EmployeeChanges = z.infer<typeof employeeChangesSchema>;

interface Change {
  actor: Actor;
  reason: string | null;
}

async function payrollOf(db: Executor, payrollId: string) {
  const payroll = isUuid(payrollId) ? await findPayrollWithEmployer(db, payrollId) : undefined;
  if (!payroll) throw new NotFoundError(`Payroll ${payrollId}`);
  return payroll;
}

async function employeeOnPayroll(db: Executor, payrollId: string, employeeId: string) {
  const row = isUuid(employeeId) ? await findEmployeeOnPayroll(db, employeeId, payrollId) : undefined;
  if (!row) throw new NotFoundError(`Employee ${employeeId} on payroll ${payrollId}`);
  return row;
}

function checkRecord(record: EmployeeRecord, payrollCurrency: string): string {
  const currency = record.currency ?? payrollCurrency;
  if (currency !== payrollCurrency) {
    throw new InvalidError('currency-mismatch', `The payroll pays in ${payrollCurrency}, not ${currency}`, {
      errors: [{ pointer: '/employee/currency', detail: `must be the payroll currency ${payrollCurrency}` }],
    });
  }
  if (leaverWithoutEndDate(record)) {
    throw new InvalidError('leaver-without-end-date', 'A leaver needs the date the employment ended', {
      errors: [{ pointer: '/employee/end_date', detail: 'is required for a leaver' }],
    });
  }
  return currency;
}

/** The person as a new employee is first recorded. */
function employeeFieldsOf(record: EmployeeRecord): EmployeeFields {
  return {
    national_registration_number: record.national_registration_number ? normaliseNationalRegistrationNumber(record.national_registration_number) : null,
    date_of_birth: record.date_of_birth ?? null,
    given_name: record.given_name,
    family_name: record.family_name,
    email_address: record.email_address ?? null,
    phone_number: record.phone_number ?? null,
    postal_code: record.postal_code ?? null,
  };
}

/** The employment: everything the record says that is this payroll's (decision 0015). */
function employmentFieldsOf(record: EmployeeRecord, employerId: string, currency: string): EmploymentFields {
  return {
    employer_id: employerId,
    payroll_reference: record.payroll_reference,
    given_name: record.given_name,
    family_name: record.family_name,
    email_address: record.email_address ?? null,
    phone_number: record.phone_number ?? null,
    postal_code: record.postal_code ?? null,
    start_date: record.start_date ?? null,
    end_date: record.end_date ?? null,
    employment_status: record.employment_status,
    contract_type: record.contract_type ?? 'unknown',
    annualised_salary: record.annualised_salary ?? null,
    currency,
  };
}

/** A concurrent change claimed an id, reference or number first: the caller retries. */
async function uniquely<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ConflictError('concurrent-update', 'Another change to this employee or its identifiers won; retry the request');
    }
    throw error;
  }
}

/**
 * Adds an employee to a payroll: a new employment under a payroll reference no one on the payroll
 * has, for the provider's employee with the same identity (a second job, matched as an import row
 * is) or a new one. The record is the one a provider pushes; a leaver needs an end date. The name
 * and contact details go to the new employment; an existing person's record is left as it is.
 */
export async function createEmployeeOnPayroll(trx: Executor, payrollId: string, record: EmployeeRecord, change: Change): Promise<EmployeeResource> {
  const payroll = await payrollOf(trx, payrollId);
  const currency = checkRecord(record, payroll.currency);
  const employeeFields = employeeFieldsOf(record);
  const nationalRegistrationNumber = employeeFields.national_registration_number;
  const candidates = await findImportCandidates(
    trx,
    { payrollId: payroll.id, providerId: payroll.payroll_provider_id },
    { payrollReferences: [record.payroll_reference], nationalRegistrationNumbers: nationalRegistrationNumber ? [nationalRegistrationNumber] : [] },
  );
  if (candidates.byReference.length > 0) {
    throw new ConflictError('payroll-reference-in-use', 'Another employee on this payroll has this payroll reference', {
      errors: [{ pointer: '/employee/payroll_reference', detail: 'belongs to another employee' }],
    });
  }
  const match = matchImportedEmployee(
    { national_registration_number: nationalRegistrationNumber, date_of_birth: record.date_of_birth ?? null, family_name: record.family_name },
    { byReference: undefined, byNationalRegistrationNumber: candidates.byNationalRegistrationNumber[0] },
  );
  if (match.kind === 'refused') {
    const [first] = match.errors;
    throw new ConflictError('employee-identity-in-use', `The ${first!.column} ${first!.reason}`, {
      errors: match.errors.map((error) => ({ pointer: `/employee/${error.column}`, detail: error.reason })),
    });
  }
  // Every cell of a record given here is readable: the rule decides.
  if (match.kind !== 'new-employee' && match.kind !== 'second-employment') throw new Error(`unexpected match ${match.kind}`);

  const employeeId = match.kind === 'second-employment' ? match.employeeId : crypto.randomUUID();
  await uniquely(async () => {
    // The same person elsewhere (same number, birth date and name) keeps their record as it is.
    if (match.kind === 'new-employee') await insertEmployee(trx, { id: employeeId, payroll_provider_id: payroll.payroll_provider_id, ...employeeFields });
    await insertEmployment(trx, { employee_id: employeeId, payroll_id: payroll.id, ...employmentFieldsOf(record, payroll.employer_id, currency) });
  });
  const created = toEmployeeResource(await employeeOnPayroll(trx, payroll.id, employeeId));
  await audit(trx, 'employee.created', created, null, change);
  return created;
}

/**
 * Changes an employee's record on a payroll: the fields given replace what is stored (null clears an
 * optional one), the merged record must pass the same rules as a new one, and what changed has the
 * consequences a provider's push has (followEmploymentChange: billers told, mandates moved). The
 * name and contact details are this employment's; the national registration number and date of
 * birth are the person's, for every payroll (decision 0015): an operator may correct them even when
 * payrolls disagree, which is how such a conflict is settled.
 */
export async function updateEmployeeOnPayroll(
  trx: Executor,
  payrollId: string,
  employeeId: string,
  changes: EmployeeChanges,
  change: Change,
  action: Extract<AuditAction, 'employee.updated' | 'employee.left'> = 'employee.updated',
): Promise<EmployeeResource> {
  const payroll = await payrollOf(trx, payrollId);
  const employment = isUuid(employeeId) ? await findEmployment(trx, employeeId, payroll.id, { rowLock: true }) : undefined;
  if (!employment) throw new NotFoundError(`Employee ${employeeId} on payroll ${payrollId}`);
  const current = await employeeOnPayroll(trx, payroll.id, employeeId);
  const before = toEmployeeResource(current);
  const { id: _id, payroll_id: _payroll, created_at: _created, updated_at: _updated, ...stored } = before;
  const merged = employeeRecordSchema.safeParse({ ...dropNulls(stored), ...changes });
  if (!merged.success) {
    throw new InvalidError('invalid-employee', 'The employee record would be invalid with these changes', {
      errors: merged.error.issues.map((issue) => ({ pointer: `/employee/${issue.path.join('/')}`, detail: issue.message })),
    });
  }
  const record = merged.data;
  const currency = checkRecord(record, payroll.currency);
  const employeeFields = employeeFieldsOf(record);
  if (employeeFields.national_registration_number && employeeFields.national_registration_number !== current.national_registration_number) {
    const candidates = await findImportCandidates(
      trx,
      { payrollId: payroll.id, providerId: payroll.payroll_provider_id },
      { payrollReferences: [], nationalRegistrationNumbers: [employeeFields.national_registration_number] },
    );
    const holder = candidates.byNationalRegistrationNumber[0];
    if (holder && holder.employeeId !== current.id) {
      throw new ConflictError('national-registration-number-in-use', 'Another employee of this provider has this national registration number', {
        errors: [{ pointer: '/employee/national_registration_number', detail: 'belongs to another employee' }],
      });
    }
  }
  if (record.payroll_reference !== current.payroll_reference) {
    const holder = await findEmployeeIdByPayrollReference(trx, payroll.id, record.payroll_reference);
    if (holder && holder !== current.id) {
      throw new ConflictError('payroll-reference-in-use', 'Another employee on this payroll has this payroll reference', {
        errors: [{ pointer: '/employee/payroll_reference', detail: 'belongs to another employee' }],
      });
    }
  }

  const employeeChanged = changedFields(current, {
    national_registration_number: employeeFields.national_registration_number,
    date_of_birth: employeeFields.date_of_birth,
  });
  // Compared with the names shown: an employment that never had its own keeps showing the employee's.
  const employmentChanged = changedFields(
    { ...employment, given_name: current.given_name, family_name: current.family_name },
    employmentFieldsOf(record, payroll.employer_id, currency),
  );
  if (!employeeChanged && !employmentChanged) return before;
  await uniquely(async () => {
    if (employeeChanged) await updateEmployee(trx, current.id, employeeChanged);
    if (employmentChanged) await updateEmployment(trx, employment.id, employmentChanged);
  });
  await followEmploymentChange(trx, { employeeId: current.id, payrollId: payroll.id, before: toEmployeeUpdatePayload(current) });
  const after = toEmployeeResource(await employeeOnPayroll(trx, payroll.id, current.id));
  await audit(trx, action, after, before, change);
  return after;
}

/** The employee left on `endDate`: a leaver, with what a leaver pushed by the provider brings (mandates end, pending payments cancelled). */
export async function recordLeaver(trx: Executor, payrollId: string, employeeId: string, endDate: string, change: Change): Promise<EmployeeResource> {
  const payroll = await payrollOf(trx, payrollId);
  const current = await employeeOnPayroll(trx, payroll.id, employeeId);
  if (current.employment_status === 'leaver') {
    throw new ConflictError('employee-already-left', `Employee ${employeeId} is already a leaver on this payroll (end date ${current.end_date ?? 'unknown'})`, {
      members: { employment_status: current.employment_status },
    });
  }
  if (current.start_date && endDate < current.start_date) {
    throw new InvalidError('end-before-start', `The end date ${endDate} is before the start date ${current.start_date}`, {
      errors: [{ pointer: '/end_date', detail: 'must not be before the start date' }],
    });
  }
  return updateEmployeeOnPayroll(trx, payrollId, employeeId, { employment_status: 'leaver', end_date: endDate }, change, 'employee.left');
}

/** The currency a payroll pays in, which its salaries are stated in. */
export async function payrollCurrencyOf(db: Executor, payrollId: string): Promise<string> {
  return (await payrollOf(db, payrollId)).currency;
}

export async function showEmployeeOnPayroll(db: Executor, payrollId: string, employeeId: string): Promise<EmployeeResource> {
  const payroll = await payrollOf(db, payrollId);
  return toEmployeeResource(await employeeOnPayroll(db, payroll.id, employeeId));
}

export async function listPayrollEmployees(db: Executor, payrollId: string, filters: { status?: EmploymentStatus | undefined }, paging: PagingQuery) {
  const payroll = await payrollOf(db, payrollId);
  const rows = await listEmployeesOnPayroll(db, payroll.id, filters, paging);
  const page = pageOf(rows, paging);
  return { employees: page.items.map(({ id: _employmentId, employee_id, ...row }) => toEmployeeResource({ ...row, id: employee_id })), paging: page.paging };
}

function dropNulls<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null)) as Partial<T>;
}

async function audit(trx: Executor, action: AuditAction, after: EmployeeResource, before: EmployeeResource | null, change: Change) {
  await recordAction(trx, { actor: change.actor, action, resourceType: 'employee', resourceId: after.id, reason: change.reason, before, after });
}
