import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { z } from 'zod';
import type { AdapterFactory, PayrollProviderAdapter } from '../../../src/directory/payroll-providers/adapter.ts';
import {
  createBiller,
  createEmployee,
  createEmployer,
  createEmploymentWorld,
  createMandateRow,
  createPayroll,
  createPayrollProvider,
  createProviderClient,
  futureMonthlyPayDates,
} from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// The full availability check response, written from the salary-deduction interface's tables
// (enumerations completed as docs/integrators.md (Availability checks) says), independently of the service's own schemas.
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'UUID');
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'date (YYYY-MM-DD)');
const dateTimeWithOffset = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, 'date-time');
const iso4217 = z.string().regex(/^[A-Z]{3}$/, 'ISO 4217');

const payDateObject = z.strictObject({ pay_date: date, payroll_cutoff_date: date, pay_period: z.string() });
const payroll = z.strictObject({
  id: uuid,
  employment_status: z.enum(['active', 'leaver', 'unknown']),
  contract_type: z.enum(['full_time', 'part_time', 'fixed_term', 'zero_hours', 'unknown']),
  payment_run_frequency: z.enum(['weekly', 'fortnightly', 'four_weekly', 'monthly', 'unknown']),
  annualised_salary: z.number().int(),
  pay_dates: z.array(payDateObject),
});
const employer = z.strictObject({
  salary_deduction_opt_in_status: z.enum(['pending', 'opted_in', 'opted_out']),
  name: z.string(),
  sic_code: z.string(),
  industry_name: z.string(),
  id: z.string(),
});
const employment = z.strictObject({
  employee_id: uuid,
  start_date: dateTimeWithOffset,
  currency: iso4217,
  employer,
  payrolls: z.array(z.strictObject({ payroll })),
});
const fullAvailabilityResponse = z.strictObject({
  availability_check: z.strictObject({
    availability_status: z.enum(['confirmed', 'not_found', 'not_eligible', 'pending_employer_opt_in']),
    currency: iso4217,
    employments: z.array(z.strictObject({ employment })),
  }),
});
const lightAvailabilityResponse = z.strictObject({
  availability_check: z.strictObject({
    availability_status: z.enum(['confirmed', 'not_found', 'not_eligible', 'pending_employer_opt_in']),
    employment_count: z.number().int().min(0),
  }),
});

// Providers with an API are played by fakes; the rest of the directory is ours.
const fakeAdapters = new Map<string, Partial<PayrollProviderAdapter>>();
const adapterFor: AdapterFactory = (provider) => (fakeAdapters.get(provider.id) as PayrollProviderAdapter | undefined) ?? null;

const AVAILABILITY_LOG_KEY = 'availability-log-key-for-tests-0123456789abcdef';
/** How the lookup log names a person, computed here independently of the service. */
const hmacOf = (normalisedNumber: string) => createHmac('sha256', AVAILABILITY_LOG_KEY).update(normalisedNumber).digest('hex');

let t: TestApp;
let biller: Awaited<ReturnType<typeof createBiller>>;
let headers: Record<string, string>;

// A person as a biller identifies them: national registration number, date of birth, family name.
const identityOf = (employee: { national_registration_number: string | null; date_of_birth: string | null; family_name: string }) => ({
  national_registration_number: employee.national_registration_number!,
  date_of_birth: employee.date_of_birth!,
  family_name: employee.family_name,
});

beforeAll(async () => {
  // This file checks often with one biller; the per-biller limit has its own test file.
  t = await startTestApp({
    adapterFor,
    env: { AVAILABILITY_CHECKS_PER_MINUTE: '60000', AVAILABILITY_CHECKS_BURST: '10000', AVAILABILITY_LOG_KEY },
  });
  biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
});
afterAll(async () => {
  await t.close();
});

async function fullCheck(body: Record<string, unknown>) {
  const response = await injectJson(t.app, { method: 'POST', url: '/deductions/availability/full', headers, body: { availability_check: body } });
  return { response, body: response.json() };
}

async function fullCheckValid(body: Record<string, unknown>) {
  const { response, body: json } = await fullCheck(body);
  expect(response.statusCode, response.body).toBe(200);
  return fullAvailabilityResponse.parse(json).availability_check;
}

function yesterday(offsetDays = 1) {
  return new Date(Date.now() - offsetDays * 86_400_000).toISOString().slice(0, 10);
}

describe('POST /deductions/availability/full', () => {
  it('confirms an active employee of an opted-in employer, with employer, payroll and open pay dates', async () => {
    const world = await createEmploymentWorld(t.db);
    // A pay date whose lock has already run must not be offered.
    const locked = { pay_date: yesterday(-5), payroll_cutoff_date: yesterday(-2), pay_period: '99-2026', lock_date: yesterday(1) };
    await t.db
      .insertInto('pay_dates')
      .values({ payroll_id: world.payroll.id, ...locked })
      .execute();

    const check = await fullCheckValid(identityOf(world.employee));

    expect(check.availability_status).toBe('confirmed');
    expect(check.currency).toBe('GBP');
    expect(check.employments).toHaveLength(1);
    const found = check.employments[0]!.employment;
    expect(found.employee_id).toBe(world.employee.id);
    // Start date 2020-01-06 at midnight in Europe/London (GMT in January).
    expect(found.start_date).toBe('2020-01-06T00:00:00+00:00');
    expect(found.currency).toBe('GBP');
    expect(found.employer).toEqual({
      salary_deduction_opt_in_status: 'opted_in',
      name: world.employer.name,
      sic_code: '62020',
      industry_name: 'Information technology consultancy',
      id: world.employer.external_id,
    });
    expect(found.payrolls).toHaveLength(1);
    const p = found.payrolls[0]!.payroll;
    expect(p).toMatchObject({
      id: world.payroll.id,
      employment_status: 'active',
      contract_type: 'full_time',
      payment_run_frequency: 'monthly',
      annualised_salary: 3_600_000,
    });
    const expected = futureMonthlyPayDates().map(({ pay_date, payroll_cutoff_date, pay_period }) => ({ pay_date, payroll_cutoff_date, pay_period }));
    expect(p.pay_dates).toEqual(expected);
    expect(p.pay_dates.map((d) => d.pay_date)).not.toContain(locked.pay_date);
  });

  it('is pending_employer_opt_in when the employer has not opted in yet', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id, { optIn: 'pending' });
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: futureMonthlyPayDates() });
    const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });

    const check = await fullCheckValid(identityOf(employee));
    expect(check.availability_status).toBe('pending_employer_opt_in');
    expect(check.employments[0]!.employment.employer.salary_deduction_opt_in_status).toBe('pending');
  });

  it('is not_eligible for a leaver, and still shows the employment', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id);
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: futureMonthlyPayDates() });
    const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id, status: 'leaver' });

    const check = await fullCheckValid(identityOf(employee));
    expect(check.availability_status).toBe('not_eligible');
    expect(check.employments[0]!.employment.payrolls[0]!.payroll.employment_status).toBe('leaver');
  });

  it('is not_found for a person nobody knows', async () => {
    const check = await fullCheckValid({ national_registration_number: 'ZZ999999Z', date_of_birth: '1988-03-14', family_name: 'Taylor', currency: 'GBP' });
    expect(check).toEqual({ availability_status: 'not_found', currency: 'GBP', employments: [] });
  });

  it('answers in the requested currency, and only employments paid in it are usable', async () => {
    const world = await createEmploymentWorld(t.db);
    const person = identityOf(world.employee);

    const inEuro = await fullCheckValid({ ...person, currency: 'EUR' });
    expect(inEuro.currency).toBe('EUR');
    expect(inEuro.availability_status).toBe('not_eligible');
    expect(inEuro.employments[0]!.employment.currency).toBe('GBP');
    // No deduction can be planned on it in euros: its salary is none of the caller's business.
    expect(inEuro.employments[0]!.employment.payrolls[0]!.payroll.annualised_salary).toBe(0);

    const inPounds = await fullCheckValid({ ...person, currency: 'GBP' });
    expect(inPounds.currency).toBe('GBP');
    expect(inPounds.availability_status).toBe('confirmed');
    expect(inPounds.employments[0]!.employment.payrolls[0]!.payroll.annualised_salary).toBe(3_600_000);
  });

  it('answers not_found to a request that cannot identify anyone, and refuses unknown fields', async () => {
    const vague = await fullCheckValid({ family_name: 'Taylor', postal_code: 'SW1A 1AA' });
    expect(vague).toEqual({ availability_status: 'not_found', currency: 'GBP', employments: [] });
    expect(await fullCheckValid({})).toEqual({ availability_status: 'not_found', currency: 'GBP', employments: [] });

    const unknown = await fullCheck({ national_registration_number: 'QQ123456C', nickname: 'Al' });
    expect(unknown.response.statusCode).toBe(422);
    expect(unknown.body.errors).toContainEqual({ pointer: '/availability_check/nickname', detail: 'is not a known field' });
  });

  it('is for billers with availability:check only', async () => {
    const provider = await createProviderClient(t.db);
    const asProvider = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/availability/full',
      headers: await authHeaders(t.app, provider),
      body: { availability_check: { national_registration_number: 'QQ123456C' } },
    });
    expect(asProvider.statusCode).toBe(403);

    const billerWithoutScope = await createBiller(t.db, ['payments:read']);
    const withoutScope = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/availability/full',
      headers: await authHeaders(t.app, billerWithoutScope),
      body: { availability_check: { national_registration_number: 'QQ123456C' } },
    });
    expect(withoutScope.statusCode).toBe(403);
  });
});

describe('POST /deductions/availability/full with providers that have an API', () => {
  async function apiProvider() {
    const provider = await createPayrollProvider(t.db);
    await t.db.updateTable('payroll_providers').set({ api_base_url: 'https://provider.example' }).where('id', '=', provider.id).execute();
    return provider;
  }

  it('keeps what the provider answered in the directory and answers from it', async () => {
    const provider = await apiProvider();
    const employeeId = crypto.randomUUID();
    const payrollId = crypto.randomUUID();
    const payDates = futureMonthlyPayDates(2).map(({ pay_date, payroll_cutoff_date, pay_period }) => ({ pay_date, payroll_cutoff_date, pay_period }));
    const calls: unknown[] = [];
    fakeAdapters.set(provider.id, {
      fullAvailability: async (request) => {
        calls.push(request);
        return {
          availability_check: {
            availability_status: 'confirmed',
            currency: 'GBP',
            employments: [
              {
                employment: {
                  employee_id: employeeId,
                  start_date: '2024-07-01T00:00:00+01:00',
                  currency: 'GBP',
                  employer: { salary_deduction_opt_in_status: 'opted_in', name: 'Acme Retail plc', sic_code: '47110', industry_name: 'Retail', id: 'ACME-1' },
                  payrolls: [
                    {
                      payroll: {
                        id: payrollId,
                        employment_status: 'active',
                        contract_type: 'part_time',
                        payment_run_frequency: 'monthly',
                        annualised_salary: 2_400_000,
                        pay_dates: payDates,
                      },
                    },
                  ],
                },
              },
            ],
          },
        };
      },
    });

    const person = { national_registration_number: 'AB 12 34 56 D', given_name: 'Sam', family_name: 'Okafor', date_of_birth: '1991-02-03' };
    const check = await fullCheckValid(person);
    fakeAdapters.delete(provider.id);

    expect(calls).toEqual([{ availability_check: person }]);
    expect(check.availability_status).toBe('confirmed');
    const found = check.employments[0]!.employment;
    expect(found).toMatchObject({ employee_id: employeeId, start_date: '2024-07-01T00:00:00+01:00', employer: { id: 'ACME-1', name: 'Acme Retail plc' } });
    expect(found.payrolls[0]!.payroll).toMatchObject({ id: payrollId, contract_type: 'part_time', annualised_salary: 2_400_000, pay_dates: payDates });

    const employee = await t.db.selectFrom('employees').selectAll().where('id', '=', employeeId).executeTakeFirstOrThrow();
    expect(employee).toMatchObject({ payroll_provider_id: provider.id, national_registration_number: 'AB123456D', given_name: 'Sam', family_name: 'Okafor' });
    const storedEmployment = await t.db.selectFrom('employments').selectAll().where('employee_id', '=', employeeId).executeTakeFirstOrThrow();
    expect(storedEmployment).toMatchObject({ payroll_id: payrollId, start_date: '2024-07-01', employment_status: 'active', annualised_salary: 2_400_000 });
    const storedPayDates = await t.db.selectFrom('pay_dates').selectAll().where('payroll_id', '=', payrollId).orderBy('pay_date').execute();
    expect(storedPayDates.map((d) => d.pay_date)).toEqual(payDates.map((d) => d.pay_date));
    // Lock dates are computed from the provider's lead time: two working days before the cutoff at most.
    for (const d of storedPayDates) expect(d.lock_date < d.payroll_cutoff_date).toBe(true);

    // Found again from the directory alone, by name and birth date, once the provider is gone.
    const again = await fullCheckValid({ national_registration_number: 'ab123456d', family_name: 'OKAFOR', date_of_birth: '1991-02-03' });
    expect(again.employments.map((e) => e.employment.employee_id)).toEqual([employeeId]);
  });

  it('a provider reporting a known employee as a leaver ends the mandates on that employment', async () => {
    const world = await createEmploymentWorld(t.db);
    const mandateBiller = await createBiller(t.db);
    const mandate = await createMandateRow(t.db, {
      billerClientId: mandateBiller.clientId,
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      status: 'active',
    });
    fakeAdapters.set(world.provider.id, {
      fullAvailability: async () => ({
        availability_check: {
          availability_status: 'not_eligible',
          currency: 'GBP',
          employments: [
            {
              employment: {
                employee_id: world.employee.id,
                start_date: '2020-01-06T00:00:00+00:00',
                currency: 'GBP',
                employer: {
                  salary_deduction_opt_in_status: 'opted_in',
                  name: world.employer.name,
                  sic_code: '62020',
                  industry_name: 'Information technology consultancy',
                  id: world.employer.external_id,
                },
                payrolls: [
                  {
                    payroll: {
                      id: world.payroll.id,
                      employment_status: 'leaver',
                      contract_type: 'full_time',
                      payment_run_frequency: 'monthly',
                      annualised_salary: 3_600_000,
                      pay_dates: [],
                    },
                  },
                ],
              },
            },
          ],
        },
      }),
    });
    try {
      const check = await fullCheckValid(identityOf(world.employee));
      expect(check.availability_status).toBe('not_eligible');
    } finally {
      fakeAdapters.delete(world.provider.id);
    }

    const stored = await t.db.selectFrom('mandates').select(['status', 'version']).where('id', '=', mandate.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'expired', version: 2 });
    const events = await t.db.selectFrom('events').select(['type', 'biller_client_id']).where('biller_client_id', '=', mandateBiller.clientId).orderBy('sequence').execute();
    expect(events.map((e) => e.type)).toEqual(['employee.updated', 'mandate.updated']);
    // The directory row kept its payroll reference: the availability answer has none to give.
    const employment = await t.db.selectFrom('employments').selectAll().where('id', '=', world.employment.id).executeTakeFirstOrThrow();
    expect(employment).toMatchObject({ employment_status: 'leaver', payroll_reference: world.employment.payroll_reference });
  });

  it('answers from the directory when a provider fails, and surfaces the failure when nothing is known', async () => {
    const provider = await apiProvider();
    const { ProviderError } = await import('../../../src/directory/payroll-providers/provider-errors.ts');
    fakeAdapters.set(provider.id, {
      fullAvailability: async () => {
        throw new ProviderError({ failure: 'timeout', providerId: provider.id, operation: 'full availability', detail: 'The payroll provider did not answer in time' });
      },
      lightAvailability: async () => {
        throw new ProviderError({ failure: 'unavailable', providerId: provider.id, operation: 'light availability', detail: 'The payroll provider is unavailable' });
      },
    });
    try {
      const world = await createEmploymentWorld(t.db);
      const known = await fullCheckValid(identityOf(world.employee));
      expect(known.availability_status).toBe('confirmed');

      const stranger = { national_registration_number: 'ZZ000001Z', date_of_birth: '1970-01-01', family_name: 'Nobody' };
      const { response, body } = await fullCheck(stranger);
      expect(response.statusCode).toBe(504);
      expect(body.type).toMatch(/provider-timeout$/);

      const light = await injectJson(t.app, {
        method: 'POST',
        url: '/deductions/availability/light',
        headers,
        body: { availability_check: stranger },
      });
      expect(light.statusCode).toBe(502);

      // Failed checks are recorded too, though their transaction rolled back.
      const failed = await t.db
        .selectFrom('availability_lookups')
        .select(['kind', 'outcome'])
        .where('national_registration_number_hmac', '=', hmacOf('ZZ000001Z'))
        .orderBy('checked_at')
        .execute();
      expect(failed).toEqual([
        { kind: 'full', outcome: 'failed' },
        { kind: 'light', outcome: 'failed' },
      ]);
    } finally {
      fakeAdapters.delete(provider.id);
    }
  });
});

describe('POST /deductions/availability/light', () => {
  async function lightCheck(body: Record<string, unknown>) {
    const response = await injectJson(t.app, { method: 'POST', url: '/deductions/availability/light', headers, body: { availability_check: body } });
    expect(response.statusCode, response.body).toBe(200);
    return lightAvailabilityResponse.parse(response.json()).availability_check;
  }

  it('gives the status and the number of employments, and nothing personal', async () => {
    const world = await createEmploymentWorld(t.db);
    // A second employment with another employer.
    const otherEmployer = await createEmployer(t.db, world.provider.id, { optIn: 'pending' });
    const otherPayroll = await createPayroll(t.db, { providerId: world.provider.id, employerId: otherEmployer.id, payDates: futureMonthlyPayDates() });
    await t.db
      .insertInto('employments')
      .values({ employee_id: world.employee.id, employer_id: otherEmployer.id, payroll_id: otherPayroll.id, payroll_reference: 'SECOND-1' })
      .execute();

    expect(await lightCheck(identityOf(world.employee))).toEqual({
      availability_status: 'confirmed',
      employment_count: 2,
    });
    const nothing = { availability_status: 'not_found', employment_count: 0 };
    expect(await lightCheck({ national_registration_number: 'ZZ999998Z', date_of_birth: '1988-03-14', family_name: 'Taylor' })).toEqual(nothing);
    // The same rule as the full check: the number alone, or with one wrong detail, finds nobody.
    expect(await lightCheck({ national_registration_number: world.employee.national_registration_number! })).toEqual(nothing);
    expect(await lightCheck({ ...identityOf(world.employee), date_of_birth: '1988-03-15' })).toEqual(nothing);
    expect(await lightCheck({ ...identityOf(world.employee), family_name: 'Someone' })).toEqual(nothing);
    expect(await lightCheck({ family_name: world.employee.family_name, date_of_birth: '1988-03-14' })).toEqual(nothing);
  });

  it('takes the answer of a provider with an API for its own employees', async () => {
    const provider = await createPayrollProvider(t.db);
    await t.db.updateTable('payroll_providers').set({ api_base_url: 'https://provider.example' }).where('id', '=', provider.id).execute();
    fakeAdapters.set(provider.id, {
      lightAvailability: async () => ({ availability_check: { availability_status: 'pending_employer_opt_in', employment_count: 1 } }),
    });
    try {
      expect(await lightCheck({ national_registration_number: 'ZZ999997Z', date_of_birth: '1990-01-01', family_name: 'Adeyemi' })).toEqual({
        availability_status: 'pending_employer_opt_in',
        employment_count: 1,
      });
    } finally {
      fakeAdapters.delete(provider.id);
    }
  });
});

describe('who may learn what: the matching rule', () => {
  /** An employee whose family name has an accent, a hyphen and an apostrophe. */
  async function employeeNamed(familyName: string) {
    const world = await createEmploymentWorld(t.db);
    const employee = await t.db.updateTable('employees').set({ family_name: familyName }).where('id', '=', world.employee.id).returningAll().executeTakeFirstOrThrow();
    return { ...world, employee };
  }

  it('answers not_found to the number alone, a wrong date of birth, a wrong family name, or no number', async () => {
    const world = await createEmploymentWorld(t.db);
    const person = identityOf(world.employee);
    const nothing = { availability_status: 'not_found', currency: 'GBP', employments: [] };

    expect(await fullCheckValid({ national_registration_number: person.national_registration_number })).toEqual(nothing);
    expect(await fullCheckValid({ ...person, date_of_birth: '1988-03-15' })).toEqual(nothing);
    expect(await fullCheckValid({ ...person, family_name: 'Tailor' })).toEqual(nothing);
    expect(await fullCheckValid({ date_of_birth: person.date_of_birth, family_name: person.family_name })).toEqual(nothing);
    // Everything else right does not make up for a missing identifier.
    expect(
      await fullCheckValid({
        national_registration_number: person.national_registration_number,
        family_name: person.family_name,
        given_name: 'Alex',
        postal_code: 'SW1A 1AA',
      }),
    ).toEqual(nothing);

    // And the same person, fully identified, is there: the not_found above is the rule, not absence.
    expect((await fullCheckValid(person)).availability_status).toBe('confirmed');
  });

  it('confirms with the data when all three match, whatever the case, spacing, accents, hyphens and apostrophes', async () => {
    const world = await employeeNamed("Núñez-O'Brien");
    const nrn = world.employee.national_registration_number!;
    const spaced = `${nrn.slice(0, 2).toLowerCase()} ${nrn.slice(2, 4)} ${nrn.slice(4, 6)} ${nrn.slice(6, 8)} ${nrn.slice(8).toLowerCase()}`;

    const check = await fullCheckValid({ national_registration_number: spaced, date_of_birth: '1988-03-14', family_name: '  nunez  obrien ' });
    expect(check.availability_status).toBe('confirmed');
    expect(check.employments).toHaveLength(1);
    const found = check.employments[0]!.employment;
    expect(found.employee_id).toBe(world.employee.id);
    expect(found.employer.name).toBe(world.employer.name);
    expect(found.payrolls[0]!.payroll).toMatchObject({ id: world.payroll.id, annualised_salary: 3_600_000 });

    const light = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/availability/light',
      headers,
      body: { availability_check: { national_registration_number: spaced, date_of_birth: '1988-03-14', family_name: 'NUÑEZ O’BRIEN' } },
    });
    expect(light.json()).toEqual({ availability_check: { availability_status: 'confirmed', employment_count: 1 } });
  });

  it("lets a biller check any provider's employee it can fully identify: an availability check comes before any mandate", async () => {
    // The biller already collects from an employee of one provider...
    const own = await createEmploymentWorld(t.db);
    await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: own.employee.id, payrollId: own.payroll.id, status: 'active' });
    // ...and checks a person employed through another provider, with whom it has nothing yet.
    const other = await createEmploymentWorld(t.db);
    expect(other.provider.id).not.toBe(own.provider.id);

    const check = await fullCheckValid(identityOf(other.employee));
    expect(check.availability_status).toBe('confirmed');
    const found = check.employments[0]!.employment;
    expect(found.employee_id).toBe(other.employee.id);
    expect(found.employer.name).toBe(other.employer.name);
    expect(found.payrolls[0]!.payroll.annualised_salary).toBe(3_600_000);

    // The number alone still gives nothing away, whoever's employee it is.
    expect(await fullCheckValid({ national_registration_number: other.employee.national_registration_number! })).toEqual({
      availability_status: 'not_found',
      currency: 'GBP',
      employments: [],
    });
  });

  it('answers not_found in exactly the same bytes and headers whether the number is known or not', async () => {
    const world = await createEmploymentWorld(t.db);
    const person = identityOf(world.employee);
    const volatile = new Set(['date', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id']);
    const answer = async (url: string, body: Record<string, unknown>) => {
      const response = await injectJson(t.app, { method: 'POST', url, headers, body: { availability_check: body } });
      expect(response.statusCode).toBe(200);
      const kept = Object.entries(response.headers).filter(([name]) => !volatile.has(name));
      return { body: response.body, headers: Object.fromEntries(kept) };
    };
    for (const url of ['/deductions/availability/full', '/deductions/availability/light']) {
      const unknownNumber = await answer(url, { ...person, national_registration_number: 'ZZ123456Z' });
      const numberAlone = await answer(url, { national_registration_number: person.national_registration_number });
      const wrongBirthDate = await answer(url, { ...person, date_of_birth: '1970-01-01' });
      const wrongName = await answer(url, { ...person, family_name: 'Smith' });
      expect(unknownNumber.body).toMatch(/"not_found"/);
      for (const other of [numberAlone, wrongBirthDate, wrongName]) expect(other).toEqual(unknownNumber);
    }
  });

  it("does not show a provider's answer that our rule would not match", async () => {
    // A provider that matched on the number alone would hand over an employee we know by other details.
    const world = await createEmploymentWorld(t.db);
    await t.db.updateTable('payroll_providers').set({ api_base_url: 'https://provider.example' }).where('id', '=', world.provider.id).execute();
    const asked: unknown[] = [];
    fakeAdapters.set(world.provider.id, {
      fullAvailability: async (request) => {
        asked.push(request);
        return {
          availability_check: {
            availability_status: 'confirmed',
            currency: 'GBP',
            employments: [
              {
                employment: {
                  employee_id: world.employee.id,
                  start_date: '2020-01-06T00:00:00+00:00',
                  currency: 'GBP',
                  employer: {
                    salary_deduction_opt_in_status: 'opted_in',
                    name: world.employer.name,
                    sic_code: '62020',
                    industry_name: 'Information technology consultancy',
                    id: world.employer.external_id,
                  },
                  payrolls: [
                    {
                      payroll: {
                        id: world.payroll.id,
                        employment_status: 'active',
                        contract_type: 'full_time',
                        payment_run_frequency: 'monthly',
                        annualised_salary: 3_600_000,
                        pay_dates: [],
                      },
                    },
                  ],
                },
              },
            ],
          },
        };
      },
    });
    try {
      const guess = { ...identityOf(world.employee), date_of_birth: '1990-06-01' };
      expect(await fullCheckValid(guess)).toEqual({ availability_status: 'not_found', currency: 'GBP', employments: [] });
      // The provider was asked with every identifier the biller gave, to match on them itself.
      expect(asked).toEqual([{ availability_check: guess }]);
      // Our record keeps payroll's date of birth: a caller's guess does not overwrite it.
      const stored = await t.db.selectFrom('employees').select('date_of_birth').where('id', '=', world.employee.id).executeTakeFirstOrThrow();
      expect(stored.date_of_birth).toBe('1988-03-14');

      // Without all three identifiers no provider is asked at all.
      await fullCheckValid({ national_registration_number: world.employee.national_registration_number! });
      expect(asked).toHaveLength(1);
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
  });

  it("does not show a provider's light answer that our rule would not match, and shows it when it would", async () => {
    // The provider matched on the number alone; the directory knows that number there by other details.
    const world = await createEmploymentWorld(t.db);
    await t.db.updateTable('payroll_providers').set({ api_base_url: 'https://provider.example' }).where('id', '=', world.provider.id).execute();
    const asked: unknown[] = [];
    fakeAdapters.set(world.provider.id, {
      lightAvailability: async (request) => {
        asked.push(request);
        return { availability_check: { availability_status: 'confirmed', employment_count: 1 } };
      },
    });
    const light = async (body: Record<string, unknown>) => {
      const response = await injectJson(t.app, { method: 'POST', url: '/deductions/availability/light', headers, body: { availability_check: body } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    };
    try {
      const nothing = { availability_check: { availability_status: 'not_found', employment_count: 0 } };
      const wrongBirthDate = { ...identityOf(world.employee), date_of_birth: '1990-06-01' };
      expect(await light(wrongBirthDate)).toEqual(nothing);
      expect(await light({ ...identityOf(world.employee), family_name: 'Somebody' })).toEqual(nothing);
      // The provider was asked, and said yes: the rule, not the provider, decided.
      expect(asked).toHaveLength(2);
      expect(asked[0]).toEqual({ availability_check: wrongBirthDate });
      // All three right: the provider's answer for its own employee is the answer.
      expect(await light(identityOf(world.employee))).toEqual({ availability_check: { availability_status: 'confirmed', employment_count: 1 } });
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
  });

  // With an Idempotency-Key the answer is kept a day for a retry: test/faces/http/integrator-contract.test.ts.
  it('without an Idempotency-Key, answers every check afresh, stores no answer, and marks it not to be cached', async () => {
    const world = await createEmploymentWorld(t.db);
    const keysBefore = await t.db
      .selectFrom('idempotency_keys')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/availability/full',
      headers,
      body: { availability_check: identityOf(world.employee) },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const keysAfter = await t.db
      .selectFrom('idempotency_keys')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(keysAfter.n)).toBe(Number(keysBefore.n));
  });
});

describe('the availability lookup log', () => {
  it('records every check: biller, time, kind, outcome and an HMAC of the number, never the person in clear', async () => {
    const world = await createEmploymentWorld(t.db);
    const employee = world.employee;
    const nrn = employee.national_registration_number!;
    const since = new Date(Date.now() - 1000);
    const own = await createBiller(t.db);
    const ownHeaders = await authHeaders(t.app, own);
    const send = (url: string, body: Record<string, unknown>) => injectJson(t.app, { method: 'POST', url, headers: ownHeaders, body: { availability_check: body } });

    const person = { ...identityOf(employee), given_name: 'Alex', email_address: 'alex@example.com', phone_number: '+447700900123', postal_code: 'SW1A 1AA' };
    expect((await send('/deductions/availability/full', person)).statusCode).toBe(200);
    const { given_name: _given, phone_number: _phone, ...lightFields } = person;
    expect((await send('/deductions/availability/light', { ...lightFields, national_registration_number: nrn.toLowerCase() })).statusCode).toBe(200);
    expect((await send('/deductions/availability/full', { national_registration_number: nrn })).statusCode).toBe(200);
    expect((await send('/deductions/availability/light', { family_name: employee.family_name, date_of_birth: '1988-03-14' })).statusCode).toBe(200);
    // Invalid requests are refused before anything is looked up, and are no check.
    expect((await send('/deductions/availability/full', { national_registration_number: nrn, nickname: 'Al' })).statusCode).toBe(422);

    const rows = await t.db.selectFrom('availability_lookups').selectAll().where('biller_client_id', '=', own.clientId).orderBy('checked_at').execute();
    expect(rows.map(({ kind, outcome, national_registration_number_hmac }) => ({ kind, outcome, national_registration_number_hmac }))).toEqual([
      { kind: 'full', outcome: 'confirmed', national_registration_number_hmac: hmacOf(nrn) },
      { kind: 'light', outcome: 'confirmed', national_registration_number_hmac: hmacOf(nrn) },
      { kind: 'full', outcome: 'not_found', national_registration_number_hmac: hmacOf(nrn) },
      { kind: 'light', outcome: 'not_found', national_registration_number_hmac: null },
    ]);
    for (const row of rows) {
      expect(row.checked_at.getTime()).toBeGreaterThanOrEqual(since.getTime());
      expect(row.checked_at.getTime()).toBeLessThanOrEqual(Date.now());
    }

    // Repeated lookups of one person can be found, across billers, by the HMAC alone.
    const byPerson = await t.db.selectFrom('availability_lookups').select('biller_client_id').where('national_registration_number_hmac', '=', hmacOf(nrn)).execute();
    expect(byPerson.map((r) => r.biller_client_id)).toEqual([own.clientId, own.clientId, own.clientId]);

    // Nothing of the person in clear: the whole table, as text, holds none of what was sent (each
    // searched for in a form that no UUID, hex digest or timestamp can hold by chance).
    const { rows: text } = await sql<{ row: string }>`select t::text as row from availability_lookups t`.execute(t.db);
    const dump = text
      .map((r) => r.row)
      .join('\n')
      .toLowerCase();
    for (const secret of [nrn.toLowerCase(), employee.family_name.toLowerCase(), '1988-03-14', 'alex', 'sw1a', '+447700900123']) {
      expect(dump).not.toContain(secret);
    }
  });
});
