import { listPayDates } from '../../directory/calendars/calendar-repository.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { identityUpdate, normaliseNationalRegistrationNumber } from '../../directory/payrolls/person-identity.ts';
import { directoryReachOf, type Caller } from '../../platform/shared/caller.ts';
import { ConflictError, ForbiddenError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import {
  findEmployee,
  findEmployeeIdByNationalRegistrationNumber,
  findEmployeeIdByPayrollReference,
  findEmployeeOnPayroll,
  findEmployment,
  findPayrollWithEmployer,
  insertEmployee,
  insertEmployment,
  isEmployedElsewhere,
  updateEmployee,
  updateEmployment,
  type EmployeeFields,
  type EmploymentFields,
} from '../../directory/payrolls/directory-repository.ts';
import type { PayrollScheduleResponse } from '../../directory/payroll-providers/reference-schemas.ts';
import { changedFields } from './directory-service.ts';
import { uuidSchema } from '../../platform/shared/schemas.ts';
import { toEmployeeResource, toEmployeeUpdatePayload, type EmployeeRecord, type EmployeeResource } from '../../directory/payrolls/employee-resource.ts';
import { followEmploymentChange } from './employment-change.ts';
import { toPayrollScheduleResource } from '../../directory/payrolls/payroll-resource.ts';

const isUuid = (value: string) => uuidSchema.safeParse(value).success;

/**
 * Payroll information: any payroll the caller reaches (directoryReachOf). A live biller plans
 * deductions against any live payroll's calendar, a sandbox biller against its own sandbox's payrolls
 * only; a payroll provider sees its own. Anything else is as unknown as a made-up id. Operators have
 * no business here.
 */
export async function getPayrollSchedule(db: Executor, caller: Caller, payrollId: string): Promise<PayrollScheduleResponse> {
  if (caller.role === 'operator') {
    throw new ForbiddenError('forbidden-role', 'Payroll information is not available to operator clients');
  }
  const payroll = isUuid(payrollId) ? await findPayrollWithEmployer(db, payrollId, { reach: directoryReachOf(caller) }) : undefined;
  if (!payroll) throw new NotFoundError(`Payroll ${payrollId}`);
  const payDates = await listPayDates(db, payroll.id);
  return toPayrollScheduleResource({ ...payroll, pay_dates: payDates });
}

export interface EmployeePutResult {
  created: boolean;
  employee: EmployeeResource;
}

/**
 * A payroll provider tells us about one employee on one of its payrolls (employees in). The PUT
 * replaces the employment's record on that payroll (name as that payroll spells it, contact
 * details, dates, status, salary: a field left out is cleared); of the person it sets only who they
 * are (decision 0015): a national registration number or date of birth left out is kept, one given
 * fills a gap or corrects the person's, unless another payroll employs them too and relies on the
 * stored one (409 employee-identity-conflict; an operator settles it). What changed then flows on
 * to the billers holding mandates (see followEmploymentChange). Run inside one transaction.
 */
export async function putEmployee(trx: Executor, caller: Caller, target: { payrollId: string; employeeId: string }, record: EmployeeRecord): Promise<EmployeePutResult> {
  const { payrollId, employeeId } = target;
  const payroll = isUuid(payrollId) ? await findPayrollWithEmployer(trx, payrollId) : undefined;
  if (!payroll || payroll.payroll_provider_id !== caller.payrollProviderId) throw new NotFoundError(`Payroll ${payrollId}`);
  // The employee id is the provider's UUID and becomes ours; anything else cannot name an employee.
  if (!isUuid(employeeId)) throw new NotFoundError(`Employee ${employeeId}`);

  const currency = record.currency ?? payroll.currency;
  if (currency !== payroll.currency) {
    throw new InvalidError('currency-mismatch', `Payroll ${payrollId} pays in ${payroll.currency}, not ${currency}`, {
      errors: [{ pointer: '/employee/currency', detail: `must be the payroll currency ${payroll.currency}` }],
    });
  }

  const existing = await findEmployee(trx, employeeId, { rowLock: true });
  // Another provider's employee is not this provider's to see or change.
  if (existing && existing.payroll_provider_id !== payroll.payroll_provider_id) throw new NotFoundError(`Employee ${employeeId}`);

  const employeeFields: EmployeeFields = {
    national_registration_number: record.national_registration_number ? normaliseNationalRegistrationNumber(record.national_registration_number) : null,
    date_of_birth: record.date_of_birth ?? null,
    given_name: record.given_name,
    family_name: record.family_name,
    email_address: record.email_address ?? null,
    phone_number: record.phone_number ?? null,
    postal_code: record.postal_code ?? null,
  };
  await assertIdentifiersFree(trx, payroll, employeeId, employeeFields.national_registration_number, record.payroll_reference);

  const employment = await findEmployment(trx, employeeId, payrollId, { rowLock: true });
  const beforeRow = employment ? await findEmployeeOnPayroll(trx, employeeId, payrollId) : undefined;
  const before = beforeRow ? toEmployeeUpdatePayload(beforeRow) : null;
  const identity = existing ? identityUpdate(existing, employeeFields, await isEmployedElsewhere(trx, employeeId, payrollId)) : undefined;
  if (identity && identity.conflicts.length > 0) {
    throw new ConflictError(
      'employee-identity-conflict',
      'The employee is employed on another payroll too, and its record there relies on the stored national registration number and date of birth; an operator corrects them',
      { errors: identity.conflicts.map((field) => ({ pointer: `/employee/${field}`, detail: 'differs from the one on record for this employee' })) },
    );
  }

  try {
    if (!existing) {
      await insertEmployee(trx, { id: employeeId, payroll_provider_id: payroll.payroll_provider_id, ...employeeFields });
    } else if (Object.keys(identity!.changes).length > 0) {
      await updateEmployee(trx, employeeId, identity!.changes);
    }

    const employmentFields: EmploymentFields = {
      employer_id: payroll.employer_id,
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
    if (!employment) {
      await insertEmployment(trx, { employee_id: employeeId, payroll_id: payrollId, ...employmentFields });
    } else {
      const changed = changedFields(employment, employmentFields);
      if (changed) await updateEmployment(trx, employment.id, changed);
    }
  } catch (error) {
    // A concurrent PUT claimed the same id, reference or national registration number first.
    if ((error as { code?: string }).code === '23505') {
      throw new ConflictError('concurrent-update', 'Another update of this employee or its identifiers won; retry the request');
    }
    throw error;
  }

  await followEmploymentChange(trx, { employeeId, payrollId, before });
  const after = await findEmployeeOnPayroll(trx, employeeId, payrollId);
  return { created: !employment, employee: toEmployeeResource(after!) };
}

async function assertIdentifiersFree(
  trx: Executor,
  payroll: { id: string; payroll_provider_id: string },
  employeeId: string,
  nationalRegistrationNumber: string | null,
  payrollReference: string,
): Promise<void> {
  if (nationalRegistrationNumber) {
    const holder = await findEmployeeIdByNationalRegistrationNumber(trx, payroll.payroll_provider_id, nationalRegistrationNumber);
    if (holder && holder !== employeeId) {
      throw new ConflictError('national-registration-number-in-use', 'Another employee of this provider has this national registration number', {
        errors: [{ pointer: '/employee/national_registration_number', detail: 'belongs to another employee' }],
      });
    }
  }
  const holder = await findEmployeeIdByPayrollReference(trx, payroll.id, payrollReference);
  if (holder && holder !== employeeId) {
    throw new ConflictError('payroll-reference-in-use', 'Another employee on this payroll has this payroll reference', {
      errors: [{ pointer: '/employee/payroll_reference', detail: 'belongs to another employee' }],
    });
  }
}
