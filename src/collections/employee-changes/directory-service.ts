import { DateTime } from 'luxon';
import { savePayCalendar } from '../../directory/calendars/calendar-service.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { normaliseNationalRegistrationNumber } from '../../directory/payrolls/person-identity.ts';
import { toEmployeeUpdatePayload } from '../../directory/payrolls/employee-resource.ts';
import { followEmploymentChange } from './employment-change.ts';
import {
  findEmployee,
  findEmployeeIdByNationalRegistrationNumber,
  findEmployeeOnPayroll,
  findEmployment,
  insertEmployee,
  insertEmployment,
  updateEmployee,
  updateEmployment,
  upsertEmployer,
  upsertProviderPayroll,
  type EmployeeFields,
} from '../../directory/payrolls/directory-repository.ts';
import type { FullAvailabilityRequest, FullAvailabilityResponse } from '../../directory/payroll-providers/reference-schemas.ts';

export type PersonDetails = FullAvailabilityRequest['availability_check'];

type ProviderEmployment = FullAvailabilityResponse['availability_check']['employments'][number]['employment'];

/**
 * The calendar date a provider's date-time means, in the service time zone: providers send
 * employment start dates as midnight with an offset, which is a date, not an instant.
 */
export function serviceDateOf(dateTime: string, timeZone: string): string {
  const parsed = DateTime.fromISO(dateTime, { setZone: true });
  if (!parsed.isValid) throw new RangeError(`not an ISO 8601 date-time: ${dateTime}`);
  return parsed.setZone(timeZone).toISODate()!;
}

/**
 * Keeps what a provider's full availability answer told us: employers, payrolls with their
 * calendars, the employee and its employments, all under the provider's own ids. The provider is
 * the authority on employment; the person details of the check only fill gaps in the employee row,
 * so a caller's spelling never overwrites payroll's. Records the provider cannot own (an id already
 * used by another provider) are skipped. Gives the ids of the employees kept.
 */
export async function saveProviderAvailability(
  trx: Executor,
  input: { providerId: string; response: FullAvailabilityResponse; person: PersonDetails; timeZone: string },
): Promise<string[]> {
  const kept = new Set<string>();
  for (const { employment } of input.response.availability_check.employments) {
    if (await saveEmployment(trx, input, employment)) kept.add(employment.employee_id);
  }
  return [...kept];
}

async function saveEmployment(trx: Executor, input: { providerId: string; person: PersonDetails; timeZone: string }, employment: ProviderEmployment): Promise<boolean> {
  const { providerId } = input;
  if (!(await saveEmployee(trx, providerId, employment.employee_id, input.person))) return false;

  const employerId = await upsertEmployer(trx, providerId, {
    externalId: employment.employer.id,
    name: employment.employer.name,
    sicCode: employment.employer.sic_code || null,
    industryName: employment.employer.industry_name || null,
    optIn: employment.employer.salary_deduction_opt_in_status,
  });
  const startDate = serviceDateOf(employment.start_date, input.timeZone);

  for (const { payroll } of employment.payrolls) {
    const owned = await upsertProviderPayroll(trx, {
      id: payroll.id,
      providerId,
      employerId,
      // Named as people say it ("four-weekly", not four_weekly) until an operator names it otherwise.
      name: `${employment.employer.name} ${payroll.payment_run_frequency.replace('_', '-')} payroll`,
      frequency: payroll.payment_run_frequency,
      currency: employment.currency,
    });
    if (!owned) continue;
    await savePayCalendar(trx, payroll.id, payroll.pay_dates, serviceToday(new Date(), input.timeZone));

    const fields = {
      employer_id: employerId,
      start_date: startDate,
      employment_status: payroll.employment_status,
      contract_type: payroll.contract_type,
      annualised_salary: payroll.annualised_salary,
      currency: employment.currency,
    };
    const existing = await findEmployment(trx, employment.employee_id, payroll.id, { rowLock: true });
    if (!existing) {
      // The availability answer carries no payroll reference; the employee id stands in (unique on
      // the payroll) until the provider sends the real one. Nor does it say how payroll names the
      // person or reaches them: the employee's name stands until payroll sends its record.
      await insertEmployment(trx, {
        employee_id: employment.employee_id,
        payroll_id: payroll.id,
        payroll_reference: employment.employee_id,
        end_date: null,
        given_name: null,
        family_name: null,
        email_address: null,
        phone_number: null,
        postal_code: null,
        ...fields,
      });
      continue;
    }
    const changed = changedFields(existing, fields);
    if (!changed) continue;
    const beforeRow = await findEmployeeOnPayroll(trx, employment.employee_id, payroll.id);
    await updateEmployment(trx, existing.id, changed);
    await followEmploymentChange(trx, {
      employeeId: employment.employee_id,
      payrollId: payroll.id,
      before: beforeRow ? toEmployeeUpdatePayload(beforeRow) : null,
    });
  }
  return true;
}

/** Creates the employee, or fills its empty fields; false when the id is another provider's. */
async function saveEmployee(trx: Executor, providerId: string, employeeId: string, person: PersonDetails): Promise<boolean> {
  const existing = await findEmployee(trx, employeeId, { rowLock: true });
  if (existing && existing.payroll_provider_id !== providerId) return false;

  const offered: EmployeeFields = {
    national_registration_number: person.national_registration_number ? normaliseNationalRegistrationNumber(person.national_registration_number) : null,
    date_of_birth: person.date_of_birth ?? null,
    // Names are required on an employee; unknown ones stay empty until the provider sends them.
    given_name: person.given_name?.trim() ?? '',
    family_name: person.family_name?.trim() ?? '',
    email_address: person.email_address ?? null,
    phone_number: person.phone_number ?? null,
    postal_code: person.postal_code ?? null,
  };
  if (offered.national_registration_number) {
    const holder = await findEmployeeIdByNationalRegistrationNumber(trx, providerId, offered.national_registration_number);
    // The number is someone else's in our directory: keep the record we have rather than move it.
    if (holder && holder !== employeeId) offered.national_registration_number = null;
  }

  if (!existing) {
    await insertEmployee(trx, { id: employeeId, payroll_provider_id: providerId, ...offered });
    return true;
  }
  const gaps: Partial<EmployeeFields> = {};
  for (const key of Object.keys(offered) as Array<keyof EmployeeFields>) {
    const value = offered[key];
    if ((existing[key] === null || existing[key] === '') && value !== null && value !== '') gaps[key] = value;
  }
  if (Object.keys(gaps).length > 0) await updateEmployee(trx, employeeId, gaps);
  return true;
}

/** The fields whose stored value differs, or null: an unchanged record writes nothing. */
export function changedFields<T extends object>(stored: Partial<Record<keyof T, unknown>>, wanted: T): Partial<T> | null {
  const changed: Partial<T> = {};
  let any = false;
  for (const key of Object.keys(wanted) as Array<keyof T>) {
    if (stored[key] !== wanted[key]) {
      changed[key] = wanted[key];
      any = true;
    }
  }
  return any ? changed : null;
}
