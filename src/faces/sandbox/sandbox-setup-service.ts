import { randomUUID } from 'node:crypto';
import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import { createClient } from '../../directory/auth/clients-service.ts';
import { defaultScopesByRole, type Scope } from '../../directory/auth/scopes.ts';
import { availabilityStatus, type AvailabilityStatus } from '../../collections/availability/availability-status.ts';
import { listPayDates } from '../../directory/calendars/calendar-repository.ts';
import { savePayCalendar } from '../../directory/calendars/calendar-service.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { registerPayrollProvider } from '../../directory/payroll-providers/provider-credentials.ts';
import { insertEmployee, insertEmployment, upsertEmployer, upsertProviderPayroll } from '../../directory/payrolls/directory-repository.ts';
import { normaliseNationalRegistrationNumber } from '../../directory/payrolls/person-identity.ts';
import { insertBeneficiaryAccount } from '../../settlement/payouts/beneficiary-account-repository.ts';
import { InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import type { SecretBox } from '../../platform/shared/secret-box.ts';
import { generateSandboxDirectory, type SandboxDirectory } from './sandbox-directory.ts';
import { nextSandboxPayDate } from './sandbox-pay-date.ts';
import {
  findClientName,
  findSandboxOfLiveBiller,
  insertSandbox,
  listActiveBeneficiaryAccounts,
  listEmploymentsOfProvider,
  listPayrollsOfProvider,
  rowLockClient,
  type SandboxRow,
} from './sandbox-repository.ts';

/** The scopes of a sandbox biller: a live biller's, and the simulation operations. */
export const SANDBOX_BILLER_SCOPES: readonly Scope[] = [...defaultScopesByRole.biller, 'sandbox:simulate'];

/**
 * Where a sandbox biller's payouts are "paid" when the live biller has no beneficiary account to copy:
 * a made-up account that no bank file ever carries (the bank file leaves sandbox billers out).
 */
export const PLACEHOLDER_BENEFICIARY_ACCOUNT = { currency: 'GBP', sort_code: '00-00-00', account_number: '00000000' } as const;

export const SANDBOX_LIMITS = { employers: { min: 1, max: 12 }, employeesPerPayroll: { min: 1, max: 200 } } as const;
const PAYROLLS_PER_EMPLOYER = 2;
const EXAMPLES_PER_STATUS = 3;

export interface NewSandbox {
  liveBillerClientId: string;
  employers: number;
  employeesPerPayroll: number;
  /** Fixes the people and calendars drawn (names, national insurance numbers, dates of birth); ids are always new. */
  seed: string;
  /** 'YYYY-MM-DD', the service's today: calendars start about a week after it. */
  today: string;
  leadTimeWorkingDays: number;
  actor: Actor;
}

export interface SandboxExampleEmployee {
  employee_id: string;
  given_name: string;
  family_name: string;
  national_registration_number: string | null;
  date_of_birth: string | null;
  postal_code: string | null;
  employer: string;
  payroll_id: string;
  /** What a full availability check (in GBP) answers for this person. */
  availability_status: AvailabilityStatus;
}

export interface SandboxDescription {
  id: string;
  /** False when the biller already had a sandbox: it is described again, without credentials. */
  created: boolean;
  live_biller_client_id: string;
  seed: string;
  biller: {
    client_id: string;
    name: string;
    /** Only when created: kept hashed, never shown again (rotate with `clients rotate-secret`). */
    client_secret?: string;
    /** Only when created (rotate with `clients rotate-api-key`). */
    api_key?: string;
  };
  payroll_provider: { id: string; name: string; client_id: string };
  beneficiary_accounts: Array<{ currency: string; sort_code: string; account_number: string; account_holder_name: string }>;
  employers: Array<{
    id: string;
    name: string;
    salary_deduction_opt_in_status: string;
    payrolls: Array<{ id: string; name: string; payment_run_frequency: string; currency: string; next_pay_date: string | null }>;
  }>;
  employee_count: number;
  example_employees: SandboxExampleEmployee[];
}

function assertWithin(name: string, pointer: string, value: number, limits: { min: number; max: number }): void {
  if (!Number.isSafeInteger(value) || value < limits.min || value > limits.max) {
    throw new InvalidError('invalid-sandbox-size', `${name} must be a whole number from ${limits.min} to ${limits.max}`, {
      errors: [{ pointer, detail: `must be a whole number from ${limits.min} to ${limits.max}` }],
    });
  }
}

/**
 * The simulated provider's directory as ours: employers, payrolls with their calendars (lock dates
 * from the provider's lead time, as for any provider), employees and employments. The generator's
 * ids are the provider's own (employers keep theirs as external ids); payrolls and employees get new
 * ones, so two sandboxes drawn from one seed never collide.
 */
async function writeDirectory(trx: Executor, providerId: string, directory: SandboxDirectory, today: string): Promise<void> {
  const employerIds = new Map<string, string>();
  for (const employer of directory.employers) {
    employerIds.set(
      employer.id,
      await upsertEmployer(
        trx,
        providerId,
        {
          externalId: employer.id,
          name: employer.name,
          sicCode: employer.sic_code,
          industryName: employer.industry_name,
          optIn: employer.salary_deduction_opt_in_status,
        },
        'sandbox create',
      ),
    );
  }
  const payrollIds = new Map<string, string>();
  for (const payroll of directory.payrolls) {
    const id = randomUUID();
    payrollIds.set(payroll.id, id);
    await upsertProviderPayroll(trx, {
      id,
      providerId,
      employerId: employerIds.get(payroll.employer_id)!,
      name: payroll.name,
      frequency: payroll.payment_run_frequency,
      currency: payroll.currency,
    });
    await savePayCalendar(trx, id, payroll.pay_dates, today);
  }
  for (const person of directory.employees) {
    const employee = await insertEmployee(trx, {
      id: randomUUID(),
      payroll_provider_id: providerId,
      national_registration_number: normaliseNationalRegistrationNumber(person.national_registration_number),
      date_of_birth: person.date_of_birth,
      given_name: person.given_name,
      family_name: person.family_name,
      email_address: person.email_address,
      phone_number: person.phone_number,
      postal_code: person.postal_code,
    });
    for (const job of person.employments) {
      await insertEmployment(trx, {
        employee_id: employee.id,
        payroll_id: payrollIds.get(job.payroll_id)!,
        employer_id: employerIds.get(job.employer_id)!,
        payroll_reference: job.payroll_reference,
        given_name: person.given_name,
        family_name: person.family_name,
        email_address: person.email_address,
        phone_number: person.phone_number,
        postal_code: person.postal_code,
        start_date: job.start_date,
        end_date: job.end_date,
        employment_status: job.employment_status,
        contract_type: job.contract_type,
        annualised_salary: job.annualised_salary,
        currency: job.currency,
      });
    }
  }
}

/**
 * `sandbox create`: a sandbox twin of a live biller, in one transaction. The twin is a client of its
 * own (role biller, sandbox, with the simulation scope) with a new secret and API key: the live
 * biller's credentials never reach sandbox data, as Stripe's test keys are not its live keys. Beside
 * it: the live biller's beneficiary accounts copied (or a placeholder), a sandbox payroll provider
 * (files only, no API) with a client of its own that the simulation acts as, and a generated
 * directory of employers (opted in, pending, opted out), payrolls of several frequencies with
 * calendars for the months ahead, and employees.
 *
 * One sandbox per live biller: run again, it makes nothing and describes the existing sandbox
 * (without credentials, which are kept hashed).
 */
export async function createSandbox(db: Database, secrets: SecretBox, request: NewSandbox): Promise<SandboxDescription> {
  assertWithin('employers', '/employers', request.employers, SANDBOX_LIMITS.employers);
  assertWithin('employees', '/employees', request.employeesPerPayroll, SANDBOX_LIMITS.employeesPerPayroll);
  return db.transaction().execute(async (trx) => {
    const live = await rowLockClient(trx, request.liveBillerClientId);
    if (!live) throw new NotFoundError(`Client ${request.liveBillerClientId}`);
    if (live.role !== 'biller' || live.sandbox) {
      throw new InvalidError('not-a-live-biller', `Client ${live.id} is ${live.sandbox ? 'a sandbox client' : `a ${live.role} client`}; a sandbox is made for a live biller`, {
        errors: [{ pointer: '/biller', detail: 'must be a live biller client' }],
      });
    }
    const existing = await findSandboxOfLiveBiller(trx, live.id);
    if (existing) return describeSandbox(trx, existing, request.today, { created: false });

    const name = `${live.name} (sandbox)`;
    const provider = await registerPayrollProvider(trx, secrets, {
      name: `Sandbox Payroll for ${live.name}`,
      apiBaseUrl: null,
      apiTokenUrl: null,
      apiClientId: null,
      apiClientSecret: null,
      leadTimeWorkingDays: request.leadTimeWorkingDays,
      sandbox: true,
    });
    const biller = await createClient(trx, { name, role: 'biller', scopes: SANDBOX_BILLER_SCOPES, sandbox: true });
    // Its credentials are dropped: nobody outside acts as the simulated provider; the simulation does.
    const providerClient = await createClient(trx, { name: provider.name, role: 'payroll_provider', payrollProviderId: provider.id, sandbox: true });

    const accounts = await listActiveBeneficiaryAccounts(trx, live.id);
    const copies = accounts.length > 0 ? accounts : [{ ...PLACEHOLDER_BENEFICIARY_ACCOUNT, account_holder_name: name }];
    for (const { currency, ...details } of copies) await insertBeneficiaryAccount(trx, biller.clientId, currency, details);

    const directory = generateSandboxDirectory({
      seed: request.seed,
      employers: request.employers,
      payrollsPerEmployer: PAYROLLS_PER_EMPLOYER,
      employeesPerPayroll: request.employeesPerPayroll,
      today: request.today,
    });
    await writeDirectory(trx, provider.id, directory, request.today);

    const sandbox = await insertSandbox(trx, {
      live_biller_client_id: live.id,
      biller_client_id: biller.clientId,
      payroll_provider_id: provider.id,
      provider_client_id: providerClient.clientId,
      seed: request.seed,
      created_by: request.actor.kind === 'client' ? request.actor.clientId : request.actor.user,
    });
    const description = await describeSandbox(trx, sandbox, request.today, { created: true });
    await recordAction(trx, {
      actor: request.actor,
      action: 'sandbox.created',
      resourceType: 'sandbox',
      resourceId: sandbox.id,
      reason: null,
      after: {
        live_biller_client_id: live.id,
        biller_client_id: biller.clientId,
        payroll_provider_id: provider.id,
        seed: request.seed,
        employers: description.employers.length,
        employees: description.employee_count,
      },
    });
    return { ...description, biller: { ...description.biller, client_secret: biller.clientSecret, api_key: biller.apiKey } };
  });
}

/** People to try the API with: a few whom an availability check confirms, then a few it would not. */
function exampleEmployees(rows: Awaited<ReturnType<typeof listEmploymentsOfProvider>>): { count: number; examples: SandboxExampleEmployee[] } {
  const byEmployee = new Map<string, typeof rows>();
  for (const row of rows) byEmployee.set(row.employee_id, [...(byEmployee.get(row.employee_id) ?? []), row]);
  const examples: SandboxExampleEmployee[] = [];
  for (const wanted of ['confirmed', 'pending_employer_opt_in', 'not_eligible'] as const) {
    let taken = 0;
    for (const jobs of byEmployee.values()) {
      if (taken === EXAMPLES_PER_STATUS) break;
      const status = availabilityStatus({
        employeeFound: true,
        employments: jobs.map((job) => ({ employmentStatus: job.employment_status, employerOptIn: job.employer_opt_in, currency: 'GBP' })),
        currency: 'GBP',
      });
      if (status !== wanted) continue;
      const job = jobs.find((j) => j.employment_status === 'active' && j.employer_opt_in === 'opted_in') ?? jobs[0]!;
      examples.push({
        employee_id: job.employee_id,
        given_name: job.given_name,
        family_name: job.family_name,
        national_registration_number: job.national_registration_number,
        date_of_birth: job.date_of_birth,
        postal_code: job.postal_code,
        employer: job.employer_name,
        payroll_id: job.payroll_id,
        availability_status: status,
      });
      taken++;
    }
  }
  return { count: byEmployee.size, examples };
}

async function describeSandbox(trx: Executor, sandbox: SandboxRow, today: string, options: { created: boolean }): Promise<SandboxDescription> {
  const billerName = await findClientName(trx, sandbox.biller_client_id);
  const providerName = await findClientName(trx, sandbox.provider_client_id);
  const accounts = await listActiveBeneficiaryAccounts(trx, sandbox.biller_client_id);
  const payrolls = await listPayrollsOfProvider(trx, sandbox.payroll_provider_id);
  const employments = await listEmploymentsOfProvider(trx, sandbox.payroll_provider_id);
  const employers: SandboxDescription['employers'] = [];
  for (const payroll of payrolls) {
    let employer = employers.find((e) => e.id === payroll.employer_id);
    if (!employer) {
      employer = { id: payroll.employer_id, name: payroll.employer_name, salary_deduction_opt_in_status: payroll.employer_opt_in, payrolls: [] };
      employers.push(employer);
    }
    const calendar = await listPayDates(trx, payroll.id);
    employer.payrolls.push({
      id: payroll.id,
      name: payroll.name,
      payment_run_frequency: payroll.payment_run_frequency,
      currency: payroll.currency,
      next_pay_date: nextSandboxPayDate(
        calendar.map((d) => ({ pay_date: d.pay_date, lock_date: d.lock_date, locked: d.locked_at !== null })),
        today,
      ),
    });
  }
  const { count, examples } = exampleEmployees(employments);
  return {
    id: sandbox.id,
    created: options.created,
    live_biller_client_id: sandbox.live_biller_client_id,
    seed: sandbox.seed,
    biller: { client_id: sandbox.biller_client_id, name: billerName ?? '' },
    payroll_provider: { id: sandbox.payroll_provider_id, name: providerName ?? '', client_id: sandbox.provider_client_id },
    beneficiary_accounts: accounts,
    employers,
    employee_count: count,
    example_employees: examples,
  };
}
