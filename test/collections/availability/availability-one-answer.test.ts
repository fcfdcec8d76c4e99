import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdapterFactory, PayrollProviderAdapter } from '../../../src/directory/payroll-providers/adapter.ts';
import type { FullAvailabilityResponse } from '../../../src/directory/payroll-providers/reference-schemas.ts';
import { ProviderError } from '../../../src/directory/payroll-providers/provider-errors.ts';
import { createBiller, createEmploymentWorld, futureMonthlyPayDates } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// One answer per person: for every answer a provider with an API can give (and for a provider that
// fails, or has no API), the light and the full check answer the same status for the same person,
// whether our directory knows them there or not. The light check only says less: a count.

type Status = FullAvailabilityResponse['availability_check']['availability_status'];
type ProviderBehaviour = Status | 'failed' | 'no API';

const fakeAdapters = new Map<string, Partial<PayrollProviderAdapter>>();
const adapterFor: AdapterFactory = (provider) => (fakeAdapters.get(provider.id) as PayrollProviderAdapter | undefined) ?? null;

let t: TestApp;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ adapterFor, env: { AVAILABILITY_CHECKS_PER_MINUTE: '60000', AVAILABILITY_CHECKS_BURST: '10000' } });
  headers = await authHeaders(t.app, await createBiller(t.db));
});
afterAll(async () => {
  await t.close();
});

interface Person {
  national_registration_number: string;
  date_of_birth: string;
  family_name: string;
}

/** Where the provider's employment lives: the payroll and employer it names, and the employee's id there. */
interface ProviderJob {
  employeeId: string;
  payrollId: string;
  employer: { id: string; name: string };
}

/** A provider's full answer consistent with its status: the employment that makes it so, or none. */
function fullAnswer(status: Status, job: ProviderJob): FullAvailabilityResponse {
  if (status === 'not_found') return { availability_check: { availability_status: status, currency: 'GBP', employments: [] } };
  const optIn = status === 'pending_employer_opt_in' ? 'pending' : 'opted_in';
  return {
    availability_check: {
      availability_status: status,
      currency: 'GBP',
      employments: [
        {
          employment: {
            employee_id: job.employeeId,
            start_date: '2020-01-06T00:00:00+00:00',
            currency: 'GBP',
            employer: { salary_deduction_opt_in_status: optIn, name: job.employer.name, sic_code: '62020', industry_name: 'Consultancy', id: job.employer.id },
            payrolls: [
              {
                payroll: {
                  id: job.payrollId,
                  employment_status: status === 'not_eligible' ? 'leaver' : 'active',
                  contract_type: 'full_time',
                  payment_run_frequency: 'monthly',
                  annualised_salary: 3_600_000,
                  pay_dates: futureMonthlyPayDates(2).map(({ pay_date, payroll_cutoff_date, pay_period }) => ({ pay_date, payroll_cutoff_date, pay_period })),
                },
              },
            ],
          },
        },
      ],
    },
  };
}

/** Gives the provider an API played by a fake that behaves as asked. */
async function provide(providerId: string, behaviour: ProviderBehaviour, job: ProviderJob) {
  if (behaviour === 'no API') return;
  await t.db.updateTable('payroll_providers').set({ api_base_url: 'https://provider.example' }).where('id', '=', providerId).execute();
  if (behaviour === 'failed') {
    const fail = async (): Promise<never> => {
      throw new ProviderError({ failure: 'unavailable', providerId, operation: 'availability', detail: 'The payroll provider is unavailable' });
    };
    fakeAdapters.set(providerId, { lightAvailability: fail, fullAvailability: fail });
    return;
  }
  fakeAdapters.set(providerId, {
    lightAvailability: async () => ({ availability_check: { availability_status: behaviour, employment_count: behaviour === 'not_found' ? 0 : 1 } }),
    fullAvailability: async () => fullAnswer(behaviour, job),
  });
}

/** Both checks for one person: the status each answered (or its error status), the light count and the full employments. */
async function bothChecks(person: Person) {
  const ask = (kind: 'light' | 'full') => injectJson(t.app, { method: 'POST', url: `/deductions/availability/${kind}`, headers, body: { availability_check: person } });
  const light = await ask('light');
  const full = await ask('full');
  const answerOf = (response: typeof light) => (response.statusCode === 200 ? response.json().availability_check.availability_status : response.statusCode);
  return {
    light: answerOf(light),
    full: answerOf(full),
    count: light.statusCode === 200 ? light.json().availability_check.employment_count : null,
    employments: full.statusCode === 200 ? (full.json().availability_check.employments as unknown[]).length : null,
  };
}

const behaviours: ProviderBehaviour[] = ['confirmed', 'pending_employer_opt_in', 'not_eligible', 'not_found', 'failed', 'no API'];

describe('light and full give one answer for a person our directory knows (confirmed) at that provider', () => {
  // The provider decides when it answers; our directory when it fails or has no API.
  const expected: Record<ProviderBehaviour, Status> = {
    confirmed: 'confirmed',
    pending_employer_opt_in: 'pending_employer_opt_in',
    not_eligible: 'not_eligible',
    not_found: 'not_found',
    failed: 'confirmed',
    'no API': 'confirmed',
  };

  it.each(behaviours)('the provider %s', async (behaviour) => {
    const world = await createEmploymentWorld(t.db);
    const job = { employeeId: world.employee.id, payrollId: world.payroll.id, employer: { id: world.employer.external_id, name: world.employer.name } };
    await provide(world.provider.id, behaviour, job);
    const person = {
      national_registration_number: world.employee.national_registration_number!,
      date_of_birth: world.employee.date_of_birth!,
      family_name: world.employee.family_name,
    };
    try {
      const first = await bothChecks(person);
      expect(first).toEqual({
        light: expected[behaviour],
        full: expected[behaviour],
        count: expected[behaviour] === 'not_found' ? 0 : 1,
        employments: expected[behaviour] === 'not_found' ? 0 : 1,
      });
      // The full check refreshed our directory from the provider's answer: asked again, still one answer.
      expect(await bothChecks(person)).toEqual(first);
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
  });

  it('the provider not_found: the employment we still hold there is neither shown nor counted, and stays in our directory', async () => {
    const world = await createEmploymentWorld(t.db);
    await provide(world.provider.id, 'not_found', { employeeId: world.employee.id, payrollId: world.payroll.id, employer: { id: 'x', name: 'x' } });
    const person = {
      national_registration_number: world.employee.national_registration_number!,
      date_of_birth: world.employee.date_of_birth!,
      family_name: world.employee.family_name,
    };
    try {
      const full = await injectJson(t.app, { method: 'POST', url: '/deductions/availability/full', headers, body: { availability_check: person } });
      expect(full.json()).toEqual({ availability_check: { availability_status: 'not_found', currency: 'GBP', employments: [] } });
      const light = await injectJson(t.app, { method: 'POST', url: '/deductions/availability/light', headers, body: { availability_check: person } });
      expect(light.json()).toEqual({ availability_check: { availability_status: 'not_found', employment_count: 0 } });
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
    // Only the answer follows the provider; what we hold is left for payroll's own updates to change.
    const stored = await t.db.selectFrom('employments').select('employment_status').where('id', '=', world.employment.id).executeTakeFirstOrThrow();
    expect(stored.employment_status).toBe('active');
    // With the provider's API gone (no API), our directory answers again, for both.
    await t.db.updateTable('payroll_providers').set({ api_base_url: null }).where('id', '=', world.provider.id).execute();
    expect(await bothChecks(person)).toEqual({ light: 'confirmed', full: 'confirmed', count: 1, employments: 1 });
  });
});

describe('light and full give one answer when our directory holds the number there under other details', () => {
  // Our matching rule decides before any provider: a provider that matched on less cannot widen it.
  it.each(behaviours)('the provider %s', async (behaviour) => {
    const world = await createEmploymentWorld(t.db);
    const job = { employeeId: world.employee.id, payrollId: world.payroll.id, employer: { id: world.employer.external_id, name: world.employer.name } };
    await provide(world.provider.id, behaviour, job);
    const guess = { national_registration_number: world.employee.national_registration_number!, date_of_birth: '1990-06-01', family_name: world.employee.family_name };
    try {
      // A failing provider cannot tell the caller the number is known: the same failure as for a number nobody holds.
      const answer = behaviour === 'failed' ? 502 : 'not_found';
      const count = behaviour === 'failed' ? null : 0;
      expect(await bothChecks(guess)).toEqual({ light: answer, full: answer, count, employments: count });
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
  });
});

describe('light and full give one answer for a person our directory does not know', () => {
  const expected: Record<ProviderBehaviour, Status | number> = {
    confirmed: 'confirmed',
    pending_employer_opt_in: 'pending_employer_opt_in',
    not_eligible: 'not_eligible',
    not_found: 'not_found',
    // Nobody could say: the provider's failure, for both.
    failed: 502,
    'no API': 'not_found',
  };

  it.each(behaviours)('the provider %s', async (behaviour) => {
    const world = await createEmploymentWorld(t.db);
    // A person of the provider's we have never heard of, on a payroll of theirs new to us.
    const job = { employeeId: crypto.randomUUID(), payrollId: crypto.randomUUID(), employer: { id: `EMP-${crypto.randomUUID()}`, name: 'Northwind Traders Ltd' } };
    await provide(world.provider.id, behaviour, job);
    const person = { national_registration_number: `ZZ${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}A`, date_of_birth: '1979-09-30', family_name: 'Mbeki' };
    try {
      const known = typeof expected[behaviour] === 'string' && expected[behaviour] !== 'not_found';
      const first = await bothChecks(person);
      expect(first).toEqual({
        light: expected[behaviour],
        full: expected[behaviour],
        count: typeof expected[behaviour] === 'number' ? null : known ? 1 : 0,
        employments: typeof expected[behaviour] === 'number' ? null : known ? 1 : 0,
      });
      // After the full check stored what the provider said, both still agree.
      expect(await bothChecks(person)).toEqual(first);
    } finally {
      fakeAdapters.delete(world.provider.id);
    }
  });
});
