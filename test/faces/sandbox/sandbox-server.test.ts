import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  employeePushResponseSchema,
  enablementResponseSchema,
  fullAvailabilityResponseSchema,
  lightAvailabilityResponseSchema,
  payrollScheduleResponseSchema,
} from '../../../src/directory/payroll-providers/reference-schemas.ts';
import {
  generateSandboxDirectory,
  type SandboxDirectory,
  type SandboxEmployee,
  type SandboxEmployment,
  type SandboxEmployer,
} from '../../../src/faces/sandbox/sandbox-directory.ts';
import { startSandboxProvider, type RunningSandboxProvider } from '../../../src/faces/http/sandbox-server.ts';

const CLIENT_ID = 'our-service';
const CLIENT_SECRET = 'sandbox-secret-value';
const directory = generateSandboxDirectory({ seed: 'sandbox-server-tests', employers: 4, payrollsPerEmployer: 2, employeesPerPayroll: 8, today: '2026-11-22' });

let sandbox: RunningSandboxProvider;
let token: string;

beforeAll(async () => {
  sandbox = await startSandboxProvider({ directory, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  token = await requestToken({ basic: true });
});
afterAll(async () => sandbox.close());

async function requestToken({ basic, secret = CLIENT_SECRET }: { basic: boolean; secret?: string }): Promise<string> {
  const response = await tokenResponse({ basic, secret });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { access_token: string; token_type: string; expires_in: number };
  expect(body.token_type).toBe('Bearer');
  expect(body.expires_in).toBe(3600);
  return body.access_token;
}

function tokenResponse({ basic, secret }: { basic: boolean; secret: string }): Promise<Response> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (!basic) {
    form.set('client_id', CLIENT_ID);
    form.set('client_secret', secret);
  }
  return fetch(sandbox.tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(basic ? { authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${secret}`).toString('base64')}` } : {}),
    },
    body: form.toString(),
  });
}

async function call(method: 'GET' | 'POST', path: string, body?: unknown, bearer: string | null = token) {
  const response = await fetch(sandbox.url + path, {
    method,
    headers: {
      ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: (await response.json()) as any };
}

type Job = { employment: SandboxEmployment; employer: SandboxEmployer };
const employerOf = (d: SandboxDirectory, id: string) => d.employers.find((e) => e.id === id)!;

/** The first person whose only job matches. */
function personWithOnly(predicate: (job: Job) => boolean): SandboxEmployee {
  const person = directory.employees.find(
    (p) => p.employments.length === 1 && predicate({ employment: p.employments[0]!, employer: employerOf(directory, p.employments[0]!.employer_id) }),
  );
  if (!person) throw new Error('The test directory has no such person; change the seed');
  return person;
}

const active = (optIn: string) => (job: Job) => job.employment.employment_status === 'active' && job.employer.salary_deduction_opt_in_status === optIn;
const confirmedPerson = personWithOnly(active('opted_in'));
const pendingPerson = personWithOnly(active('pending'));
const optedOutPerson = personWithOnly(active('opted_out'));
const leaver = personWithOnly((job) => job.employment.employment_status === 'leaver' && job.employer.salary_deduction_opt_in_status === 'opted_in');
const unknownStatus = personWithOnly((job) => job.employment.employment_status === 'unknown');

const full = (fields: Record<string, string>) => call('POST', '/deductions/availability/full', { availability_check: fields });
const light = (fields: Record<string, string>) => call('POST', '/deductions/availability/light', { availability_check: fields });
const statusOf = async (fields: Record<string, string>) => {
  const answer = await full(fields);
  expect(answer.status).toBe(200);
  expect(fullAvailabilityResponseSchema.safeParse(answer.body).success).toBe(true);
  return answer.body.availability_check.availability_status as string;
};

describe('sandbox token endpoint', () => {
  it('issues opaque tokens by HTTP Basic or form credentials', async () => {
    const viaForm = await requestToken({ basic: false });
    expect(viaForm).not.toBe(token);
    expect(viaForm).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('rejects a wrong secret with 401 invalid_client', async () => {
    for (const basic of [true, false]) {
      const response = await tokenResponse({ basic, secret: 'wrong' });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'invalid_client' });
    }
  });

  it('refuses operations without a valid token', async () => {
    const none = await call('GET', `/payrolls/${directory.payrolls[0]!.id}`, undefined, null);
    expect(none.status).toBe(401);
    expect(none.contentType).toMatch(/^application\/problem\+json/);
    const forged = await call('GET', `/payrolls/${directory.payrolls[0]!.id}`, undefined, 'not-a-token');
    expect(forged.status).toBe(401);
  });
});

describe('sandbox availability', () => {
  it('confirms an active employee of an opted-in employer, found by national registration number', async () => {
    const answer = await full({ national_registration_number: confirmedPerson.national_registration_number.toLowerCase() });
    expect(fullAvailabilityResponseSchema.parse(answer.body)).toEqual(answer.body);
    const check = answer.body.availability_check;
    expect(check.availability_status).toBe('confirmed');
    expect(check.currency).toBe('GBP');
    expect(check.employments).toHaveLength(1);
    const employment = check.employments[0].employment;
    const job = confirmedPerson.employments[0]!;
    expect(employment.employee_id).toBe(confirmedPerson.id);
    expect(employment.start_date).toMatch(new RegExp(`^${job.start_date}T00:00:00\\+0[01]:00$`));
    expect(employment.employer.id).toBe(job.employer_id);
    expect(employment.payrolls[0].payroll).toMatchObject({ id: job.payroll_id, employment_status: 'active', annualised_salary: job.annualised_salary });
    expect(employment.payrolls[0].payroll.pay_dates).toEqual(directory.payrolls.find((p) => p.id === job.payroll_id)!.pay_dates);
  });

  it('tells each kind of employee apart', async () => {
    expect(await statusOf({ national_registration_number: pendingPerson.national_registration_number })).toBe('pending_employer_opt_in');
    expect(await statusOf({ national_registration_number: optedOutPerson.national_registration_number })).toBe('not_eligible');
    expect(await statusOf({ national_registration_number: leaver.national_registration_number })).toBe('not_eligible');
    expect(await statusOf({ national_registration_number: unknownStatus.national_registration_number })).toBe('not_eligible');
    expect(await statusOf({ national_registration_number: 'QQ000000Z' })).toBe('not_found');
    // Collecting in a currency the employee is not paid in is not possible.
    expect(await statusOf({ national_registration_number: confirmedPerson.national_registration_number, currency: 'EUR' })).toBe('not_eligible');
  });

  it('matches on family name (any case) and date of birth, narrowed by postal code when given', async () => {
    const { family_name, date_of_birth, postal_code } = confirmedPerson;
    expect(await statusOf({ family_name: family_name.toUpperCase(), date_of_birth })).toBe('confirmed');
    expect(await statusOf({ family_name, date_of_birth, postal_code: postal_code.replace(' ', '').toLowerCase() })).toBe('confirmed');
    expect(await statusOf({ family_name, date_of_birth, postal_code: 'ZZ9 9ZZ' })).toBe('not_found');
    expect(await statusOf({ family_name, date_of_birth: '1900-01-01' })).toBe('not_found');
  });

  it('answers the light check with a status and an employment count only', async () => {
    const answer = await light({ national_registration_number: confirmedPerson.national_registration_number });
    expect(lightAvailabilityResponseSchema.parse(answer.body)).toEqual(answer.body);
    expect(answer.body).toEqual({ availability_check: { availability_status: 'confirmed', employment_count: 1 } });
    const unknown = await light({ family_name: 'Nobody', date_of_birth: '1980-01-01' });
    expect(unknown.body).toEqual({ availability_check: { availability_status: 'not_found', employment_count: 0 } });
  });

  it('lists every job of someone with two', async () => {
    const twoJobs = directory.employees.find((p) => p.employments.length === 2);
    if (!twoJobs) throw new Error('The test directory has no second job; change the seed');
    const answer = await light({ national_registration_number: twoJobs.national_registration_number });
    expect(answer.body.availability_check.employment_count).toBe(2);
  });

  it('rejects a check that identifies nobody, and unknown fields, with 422', async () => {
    const vague = await full({ given_name: 'Oliver' });
    expect(vague.status).toBe(422);
    expect(vague.body.type).toMatch(/insufficient-identifiers$/);
    const extra = await call('POST', '/deductions/availability/light', { availability_check: { shoe_size: '9' } });
    expect(extra.status).toBe(422);
    expect(extra.body.errors).toEqual([{ pointer: '/availability_check/shoe_size', detail: 'is not a known field' }]);
  });
});

describe('sandbox enablement and payroll information', () => {
  const enable = (person: SandboxEmployee, payrollId = person.employments[0]!.payroll_id) =>
    call('POST', '/deductions/enablement', {
      enablement: { employee_id: person.id, payroll_id: payrollId, mandate_id: crypto.randomUUID() },
    });

  it('enables an active employee of an opted-in employer and explains every refusal', async () => {
    const enabled = await enable(confirmedPerson);
    expect(enablementResponseSchema.parse(enabled.body).enablement).toMatchObject({ status: 'enabled', reason: null, employee_id: confirmedPerson.id });
    expect((await enable(leaver)).body.enablement).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/left/) });
    expect((await enable(optedOutPerson)).body.enablement).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/opted out/) });
    expect((await enable(unknownStatus)).body.enablement.status).toBe('rejected');
    expect((await enable(pendingPerson)).body.enablement).toMatchObject({ status: 'pending', reason: expect.stringMatching(/not yet opted in/) });
    const otherPayroll = directory.payrolls.find((p) => p.id !== confirmedPerson.employments[0]!.payroll_id)!.id;
    expect((await enable(confirmedPerson, otherPayroll)).body.enablement).toMatchObject({ status: 'rejected', reason: 'The employee is not on this payroll' });
    const mandateId = enabled.body.enablement.mandate_id as string;
    expect(sandbox.provider.enablements.get(mandateId)?.status).toBe('enabled');
  });

  it('answers payroll information with the calendar, and 404 for an unknown payroll', async () => {
    const payroll = directory.payrolls[1]!;
    const answer = await call('GET', `/payrolls/${payroll.id}`);
    expect(payrollScheduleResponseSchema.parse(answer.body)).toEqual(answer.body);
    expect(answer.body.payroll).toEqual({
      id: payroll.id,
      employer_id: payroll.employer_id,
      name: payroll.name,
      payment_run_frequency: payroll.payment_run_frequency,
      currency: 'GBP',
      pay_dates: payroll.pay_dates,
    });
    const unknown = await call('GET', `/payrolls/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.contentType).toMatch(/^application\/problem\+json/);
  });
});

describe('sandbox employee push versioning', () => {
  const job = confirmedPerson.employments[0]!;
  const payroll = directory.payrolls.find((p) => p.id === job.payroll_id)!;
  const payPeriod = payroll.pay_dates[0]!.pay_period;
  const record = (version: number, amount: number, overrides: Record<string, unknown> = {}) => ({
    pay_period: payPeriod,
    id: 'push-1',
    version,
    salary_deduction: { employee_id: confirmedPerson.id, deduction_amount: amount, currency: 'GBP' },
    requested_payments: [
      {
        payment_information: {
          payment_reference: 'SD-0001',
          payment_amount: amount,
          payment_account: { account_number: '41234978', sort_code: '20-00-00', account_holder_name: 'Deductions Ltd' },
        },
      },
    ],
    ...overrides,
  });
  const push = (body: unknown, payrollId = payroll.id) => call('POST', `/deductions/payroll/${payrollId}`, body);

  it('accepts a first version, repeats it idempotently, and lets a higher version replace it', async () => {
    const first = await push(record(1, 125.5));
    expect(first.status).toBe(200);
    expect(employeePushResponseSchema.parse(first.body)).toEqual({
      pay_period: payPeriod,
      id: 'push-1',
      payroll_id: payroll.id,
      version: 1,
      salary_deduction: { employee_id: confirmedPerson.id, deduction_amount: 125.5, currency: 'GBP' },
      outcome: 'Accepted',
    });
    const accepted = sandbox.pushes.length;

    const again = await push(record(1, 125.5));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(sandbox.pushes.length).toBe(accepted);

    const conflicting = await push(record(1, 99));
    expect(conflicting.status).toBe(409);
    expect(conflicting.body).toMatchObject({ current_version: 1, type: expect.stringMatching(/push-version-conflict$/) });

    const second = await push(record(2, 100));
    expect(second.status).toBe(200);
    expect(second.body.version).toBe(2);
    expect(sandbox.pushes.length).toBe(accepted + 1);
    expect(sandbox.provider.currentPush(payroll.id, payPeriod, confirmedPerson.id)?.record.salary_deduction.deduction_amount).toBe(100);

    const older = await push(record(1, 125.5));
    expect(older.status).toBe(409);
    expect(older.body.current_version).toBe(2);
    expect(sandbox.provider.currentPush(payroll.id, payPeriod, confirmedPerson.id)?.record.version).toBe(2);
  });

  it('keeps versions per pay period', async () => {
    const nextPeriod = payroll.pay_dates[1]!.pay_period;
    const answer = await push(record(1, 10, { pay_period: nextPeriod }));
    expect(answer.status).toBe(200);
  });

  it('refuses pushes that do not fit the payroll', async () => {
    expect((await push(record(1, 10), crypto.randomUUID())).status).toBe(404);
    const wrongPeriod = await push(record(1, 10, { pay_period: '99-1999' }));
    expect(wrongPeriod.status).toBe(422);
    expect(wrongPeriod.body.errors).toEqual([expect.objectContaining({ pointer: '/pay_period' })]);
    const stranger = await push(record(1, 10, { salary_deduction: { employee_id: crypto.randomUUID(), deduction_amount: 10, currency: 'GBP' } }));
    expect(stranger.body.errors).toEqual([expect.objectContaining({ pointer: '/salary_deduction/employee_id' })]);
    const euros = await push(record(1, 10, { salary_deduction: { employee_id: confirmedPerson.id, deduction_amount: 10, currency: 'EUR' } }));
    expect(euros.body.errors).toEqual([expect.objectContaining({ pointer: '/salary_deduction/currency' })]);
    const fractions = await push(record(1, 10.005));
    expect(fractions.status).toBe(422);
    expect(fractions.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
      '/salary_deduction/deduction_amount',
      '/requested_payments/0/payment_information/payment_amount',
    ]);
    const malformed = await push({ ...record(1, 10), version: 1.5 });
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors).toEqual([expect.objectContaining({ pointer: '/version' })]);
  });
});
