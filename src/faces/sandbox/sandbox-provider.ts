import { DateTime } from 'luxon';
import type { z } from 'zod';
import { normaliseFamilyName } from '../../directory/payrolls/person-identity.ts';
import { fromMajorUnits, TooManyDecimalsError } from '../../platform/money/major-units.ts';
import type {
  availabilityStatusSchema,
  EmployeePushRecord,
  EmployeePushResponse,
  EnablementRequest,
  EnablementResponse,
  FullAvailabilityRequest,
  FullAvailabilityResponse,
  LightAvailabilityRequest,
  LightAvailabilityResponse,
  PayrollScheduleResponse,
} from '../../directory/payroll-providers/reference-schemas.ts';
import { ConflictError, InvalidError, NotFoundError, type FieldError } from '../../platform/shared/domain-errors.ts';
import { SANDBOX_CURRENCY, type SandboxDirectory, type SandboxEmployee, type SandboxEmployer, type SandboxEmployment, type SandboxPayroll } from './sandbox-directory.ts';

type AvailabilityStatus = z.infer<typeof availabilityStatusSchema>;
type Enablement = EnablementResponse['enablement'];

/** The sandbox lives in the UK: an employment's start date-time is midnight London time. */
const SANDBOX_TIME_ZONE = 'Europe/London';

/** An employee push the sandbox accepted. */
export interface SandboxPush {
  payroll_id: string;
  record: EmployeePushRecord;
  received_at: Date;
}

/** One job of a matched person, with everything the availability rule needs. */
interface Job {
  employee: SandboxEmployee;
  employment: SandboxEmployment;
  employer: SandboxEmployer;
  payroll: SandboxPayroll;
}

type PersonFields = {
  national_registration_number?: string | undefined;
  family_name?: string | undefined;
  date_of_birth?: string | undefined;
  postal_code?: string | undefined;
};

const compact = (value: string) => value.replace(/\s+/g, '').toUpperCase();

/** JSON with object keys sorted: two records with the same content give the same text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The sandbox payroll provider's behaviour, independent of HTTP: it answers the reference
 * operations from a seeded directory and keeps what it was sent. State lives here so later
 * features (pulling deduction data after the lock, submitting confirmations) can be added as
 * methods next to the ones below.
 */
export class SandboxPayrollProvider {
  readonly directory: SandboxDirectory;
  /** Every accepted push in arrival order; idempotent replays are not repeated here. */
  readonly pushes: SandboxPush[] = [];
  /** The latest enablement answer per mandate id. */
  readonly enablements = new Map<string, Enablement>();

  private readonly employers: Map<string, SandboxEmployer>;
  private readonly payrolls: Map<string, SandboxPayroll>;
  private readonly employees: Map<string, SandboxEmployee>;
  /** The current push per (payroll, pay period, employee). */
  private readonly latestPushes = new Map<string, SandboxPush>();

  constructor(directory: SandboxDirectory) {
    this.directory = directory;
    this.employers = new Map(directory.employers.map((employer) => [employer.id, employer]));
    this.payrolls = new Map(directory.payrolls.map((payroll) => [payroll.id, payroll]));
    this.employees = new Map(directory.employees.map((employee) => [employee.id, employee]));
  }

  lightAvailability(request: LightAvailabilityRequest): LightAvailabilityResponse {
    const jobs = this.jobsOf(this.matchPeople(request.availability_check));
    return {
      availability_check: {
        availability_status: availabilityStatus(jobs, null),
        employment_count: jobs.length,
      },
    };
  }

  fullAvailability(request: FullAvailabilityRequest): FullAvailabilityResponse {
    const check = request.availability_check;
    const jobs = this.jobsOf(this.matchPeople(check));
    return {
      availability_check: {
        availability_status: availabilityStatus(jobs, check.currency ?? null),
        currency: check.currency ?? SANDBOX_CURRENCY,
        employments: jobs.map(({ employee, employment, employer, payroll }) => ({
          employment: {
            employee_id: employee.id,
            start_date: DateTime.fromISO(employment.start_date, { zone: SANDBOX_TIME_ZONE }).toISO({ suppressMilliseconds: true })!,
            currency: employment.currency,
            employer: { ...employer },
            payrolls: [
              {
                payroll: {
                  id: payroll.id,
                  employment_status: employment.employment_status,
                  contract_type: employment.contract_type,
                  payment_run_frequency: payroll.payment_run_frequency,
                  annualised_salary: employment.annualised_salary,
                  pay_dates: payroll.pay_dates.map((payDate) => ({ ...payDate })),
                },
              },
            ],
          },
        })),
      },
    };
  }

  /**
   * Enabled: the employee is active on that payroll and the employer has opted in. An employer
   * still deciding gives 'pending' (the mandate waits for it); anything else is rejected with
   * the reason.
   */
  enablement(request: EnablementRequest): EnablementResponse {
    const { employee_id, payroll_id, mandate_id } = request.enablement;
    const employment = this.employees.get(employee_id)?.employments.find((e) => e.payroll_id === payroll_id);
    const employer = employment ? this.employers.get(employment.employer_id) : undefined;
    const decide = (): Pick<Enablement, 'status' | 'reason'> => {
      if (!employment || !employer) return { status: 'rejected', reason: 'The employee is not on this payroll' };
      if (employment.employment_status === 'leaver') return { status: 'rejected', reason: 'The employee has left this employment' };
      if (employment.employment_status !== 'active') {
        return { status: 'rejected', reason: 'The payroll cannot confirm that this employment is active' };
      }
      if (employer.salary_deduction_opt_in_status === 'opted_out') {
        return { status: 'rejected', reason: 'The employer has opted out of salary deduction' };
      }
      if (employer.salary_deduction_opt_in_status === 'pending') {
        return { status: 'pending', reason: 'The employer has not yet opted in to salary deduction' };
      }
      return { status: 'enabled', reason: null };
    };
    const enablement: Enablement = { employee_id, payroll_id, mandate_id, ...decide() };
    this.enablements.set(mandate_id, enablement);
    return { enablement: { ...enablement } };
  }

  payrollInformation(payrollId: string): PayrollScheduleResponse {
    const payroll = this.payrolls.get(payrollId);
    if (!payroll) throw new NotFoundError('Payroll');
    return {
      payroll: {
        id: payroll.id,
        employer_id: payroll.employer_id,
        name: payroll.name,
        payment_run_frequency: payroll.payment_run_frequency,
        currency: payroll.currency,
        pay_dates: payroll.pay_dates.map((payDate) => ({ ...payDate })),
      },
    };
  }

  /**
   * Employee push versioning (per payroll, pay period and employee): a higher version replaces
   * the current one; the same version with the same content is an idempotent repeat; the same
   * version with other content, or a lower version, is a 409 naming the current version.
   */
  receivePush(payrollId: string, record: EmployeePushRecord, receivedAt = new Date()): EmployeePushResponse {
    const payroll = this.payrolls.get(payrollId);
    if (!payroll) throw new NotFoundError('Payroll');
    this.assertPushFits(payroll, record);

    const key = `${payrollId}|${record.pay_period}|${record.salary_deduction.employee_id}`;
    const current = this.latestPushes.get(key);
    if (current && record.version <= current.record.version) {
      const sameContent = canonicalJson(current.record) === canonicalJson(record);
      if (record.version === current.record.version && sameContent) return pushResponse(payrollId, current.record);
      throw new ConflictError(
        'push-version-conflict',
        record.version === current.record.version
          ? `Version ${record.version} was already received with different content; send a higher version`
          : `Version ${record.version} is older than the current version ${current.record.version}`,
        { members: { current_version: current.record.version } },
      );
    }
    const push: SandboxPush = { payroll_id: payrollId, record: structuredClone(record), received_at: receivedAt };
    this.latestPushes.set(key, push);
    this.pushes.push(push);
    return pushResponse(payrollId, record);
  }

  /** The push that currently stands for an employee's pay period, if any. */
  currentPush(payrollId: string, payPeriod: string, employeeId: string): SandboxPush | undefined {
    return this.latestPushes.get(`${payrollId}|${payPeriod}|${employeeId}`);
  }

  private assertPushFits(payroll: SandboxPayroll, record: EmployeePushRecord): void {
    const errors: FieldError[] = [];
    if (!payroll.pay_dates.some((payDate) => payDate.pay_period === record.pay_period)) {
      errors.push({ pointer: '/pay_period', detail: `is not a pay period of payroll ${payroll.id}` });
    }
    const employee = this.employees.get(record.salary_deduction.employee_id);
    if (!employee?.employments.some((employment) => employment.payroll_id === payroll.id)) {
      errors.push({ pointer: '/salary_deduction/employee_id', detail: 'is not an employee on this payroll' });
    }
    if (record.salary_deduction.currency !== payroll.currency) {
      errors.push({ pointer: '/salary_deduction/currency', detail: `must be ${payroll.currency}, the payroll's currency` });
    }
    const amounts: Array<[string, number]> = [
      ['/salary_deduction/deduction_amount', record.salary_deduction.deduction_amount],
      ...record.requested_payments.map((item, index): [string, number] => [
        `/requested_payments/${index}/payment_information/payment_amount`,
        item.payment_information.payment_amount,
      ]),
    ];
    for (const [pointer, amount] of amounts) {
      try {
        fromMajorUnits(amount, payroll.currency);
      } catch (error) {
        if (!(error instanceof TooManyDecimalsError || error instanceof RangeError)) throw error;
        errors.push({ pointer, detail: error.message });
      }
    }
    if (errors.length > 0) throw new InvalidError('invalid-employee-push', 'The push does not fit this payroll', { errors });
  }

  private matchPeople(fields: PersonFields): SandboxEmployee[] {
    const nationalNumber = fields.national_registration_number?.trim();
    const people = this.directory.employees;
    if (nationalNumber) {
      // Like a careful provider, every other identifier given must agree too: the number alone is
      // no proof that the caller knows the person.
      const familyName = fields.family_name === undefined ? undefined : normaliseFamilyName(fields.family_name);
      return people.filter(
        (person) =>
          compact(person.national_registration_number) === compact(nationalNumber) &&
          (fields.date_of_birth === undefined || person.date_of_birth === fields.date_of_birth) &&
          (familyName === undefined || (familyName !== '' && normaliseFamilyName(person.family_name) === familyName)),
      );
    }
    const familyName = fields.family_name?.trim().toLowerCase();
    if (!familyName || !fields.date_of_birth) {
      throw new InvalidError('insufficient-identifiers', 'Give national_registration_number, or family_name with date_of_birth, to identify a person', {
        errors: [{ pointer: '/availability_check', detail: 'identifies nobody: add national_registration_number, or family_name and date_of_birth' }],
      });
    }
    const postalCode = fields.postal_code?.trim();
    return people.filter(
      (person) =>
        person.family_name.toLowerCase() === familyName &&
        person.date_of_birth === fields.date_of_birth &&
        (!postalCode || compact(person.postal_code) === compact(postalCode)),
    );
  }

  private jobsOf(people: SandboxEmployee[]): Job[] {
    return people.flatMap((employee) =>
      employee.employments.map((employment) => ({
        employee,
        employment,
        employer: this.employers.get(employment.employer_id)!,
        payroll: this.payrolls.get(employment.payroll_id)!,
      })),
    );
  }
}

/**
 * confirmed: an active employment (paid in the wanted currency, when one is named) at an
 * opted-in employer; pending_employer_opt_in: such an employment only at employers still
 * deciding; not_eligible: known, but only as a leaver, with an unknown status, or at an employer
 * that opted out; not_found: nobody matched.
 */
function availabilityStatus(jobs: readonly Job[], currency: string | null): AvailabilityStatus {
  if (jobs.length === 0) return 'not_found';
  const usable = jobs.filter(({ employment }) => employment.employment_status === 'active' && (currency === null || employment.currency === currency));
  if (usable.some(({ employer }) => employer.salary_deduction_opt_in_status === 'opted_in')) return 'confirmed';
  if (usable.some(({ employer }) => employer.salary_deduction_opt_in_status === 'pending')) return 'pending_employer_opt_in';
  return 'not_eligible';
}

function pushResponse(payrollId: string, record: EmployeePushRecord): EmployeePushResponse {
  return {
    pay_period: record.pay_period,
    id: record.id,
    payroll_id: payrollId,
    version: record.version,
    salary_deduction: { ...record.salary_deduction },
    outcome: 'Accepted',
  };
}
