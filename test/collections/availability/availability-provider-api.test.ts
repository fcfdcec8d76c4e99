import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertPayrollProvider } from '../../../src/faces/cli/demo/demo-repository.ts';
import { httpAdapterFactory } from '../../../src/directory/payroll-providers/http-adapter.ts';
import { generateSandboxDirectory, type SandboxEmployee } from '../../../src/faces/sandbox/sandbox-directory.ts';
import { startSandboxProvider, type RunningSandboxProvider } from '../../../src/faces/http/sandbox-server.ts';
import { createBiller } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// The path through a provider's API: our service asks the sandbox provider over HTTP with the same
// three identifiers, and neither side gives anything away on fewer than all three.
let t: TestApp;
let sandbox: RunningSandboxProvider;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ adapterFor: httpAdapterFactory({ timeoutMs: 3_000, backoffBaseMs: 10 }) });
  const directory = generateSandboxDirectory({ seed: 'availability-provider-api', employers: 2, payrollsPerEmployer: 1, employeesPerPayroll: 4, today: '2026-11-02' });
  sandbox = await startSandboxProvider({ directory, clientId: 'svc', clientSecret: 'secret-of-svc' });
  await insertPayrollProvider(t.db, {
    name: 'Sandbox',
    api_base_url: sandbox.url,
    api_token_url: sandbox.tokenUrl,
    api_client_id: 'svc',
    api_client_secret: 'secret-of-svc',
    lead_time_working_days: 2,
  });
  headers = await authHeaders(t.app, await createBiller(t.db));
});
afterAll(async () => {
  await sandbox.close();
  await t.close();
});

function confirmedPerson(): SandboxEmployee {
  const employerOptIn = (id: string) => sandbox.directory.employers.find((e) => e.id === id)!.salary_deduction_opt_in_status;
  const person = sandbox.directory.employees.find(
    (p) => p.employments.length === 1 && p.employments[0]!.employment_status === 'active' && employerOptIn(p.employments[0]!.employer_id) === 'opted_in',
  );
  if (!person) throw new Error('The test directory has no such person; change the seed');
  return person;
}

const check = (kind: 'light' | 'full', body: Record<string, string>) =>
  injectJson(t.app, { method: 'POST', url: `/deductions/availability/${kind}`, headers, body: { availability_check: body } });

describe('availability through a payroll provider API', () => {
  it('finds nobody on a partial identity, and pulls nothing about the person into our directory', async () => {
    const person = confirmedPerson();
    const identity = { national_registration_number: person.national_registration_number, date_of_birth: person.date_of_birth, family_name: person.family_name };
    const nothing = { availability_check: { availability_status: 'not_found', currency: 'GBP', employments: [] } };

    for (const partial of [
      { national_registration_number: person.national_registration_number },
      { ...identity, date_of_birth: '1901-01-01' },
      { ...identity, family_name: 'Somebody-Else' },
    ]) {
      const full = await check('full', partial);
      expect(full.statusCode, full.body).toBe(200);
      expect(full.json()).toEqual(nothing);
      expect((await check('light', partial)).json()).toEqual({ availability_check: { availability_status: 'not_found', employment_count: 0 } });
    }
    const stored = await t.db.selectFrom('employees').select('id').where('id', '=', person.id).execute();
    expect(stored).toEqual([]);
  });

  it('confirms with employer and salary when all three match, however the name is written', async () => {
    const person = confirmedPerson();
    const job = person.employments[0]!;
    const identity = {
      national_registration_number: person.national_registration_number.toLowerCase(),
      date_of_birth: person.date_of_birth,
      family_name: ` ${person.family_name.toUpperCase()} `,
    };

    const full = await check('full', identity);
    expect(full.statusCode, full.body).toBe(200);
    const answer = full.json().availability_check;
    expect(answer.availability_status).toBe('confirmed');
    expect(answer.employments).toHaveLength(1);
    expect(answer.employments[0].employment.employee_id).toBe(person.id);
    expect(answer.employments[0].employment.payrolls[0].payroll).toMatchObject({ id: job.payroll_id, annualised_salary: job.annualised_salary });

    expect((await check('light', identity)).json()).toEqual({ availability_check: { availability_status: 'confirmed', employment_count: 1 } });
  });
});
