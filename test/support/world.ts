import type { IssuedCredentials } from '../../src/directory/auth/clients-service.ts';
import type { Database } from '../../src/platform/db/connection.ts';
import { createBiller, createEmployee, createEmployer, createMandateRow, createPayroll, createPayrollProvider, futureMonthlyPayDates } from './factories.ts';

type PayDate = { pay_date: string; payroll_cutoff_date: string; pay_period: string; lock_date: string };
type Person = Awaited<ReturnType<typeof createEmployee>>;
type Mandate = Awaited<ReturnType<typeof createMandateRow>>;

export interface WorldOptions {
  /** The payroll's calendar; four monthly pay dates from today (`futureMonthlyPayDates()`) unless given. */
  payDates?: PayDate[];
  /** The employer's salary-deduction opt-in; `opted_in` unless given. */
  optIn?: 'pending' | 'opted_in' | 'opted_out';
  /** Employees on the payroll (one unless given), all with this employment status (`active` unless given). */
  employees?: number;
  employmentStatus?: 'active' | 'leaver' | 'unknown';
  /** Billers (none unless given); they are created before the employees. */
  billers?: number;
  /** Every employee gets an active mandate of the first biller, created right after the employee. */
  mandates?: boolean;
}

export interface World {
  provider: Awaited<ReturnType<typeof createPayrollProvider>>;
  employer: Awaited<ReturnType<typeof createEmployer>>;
  payroll: Awaited<ReturnType<typeof createPayroll>>;
  billers: IssuedCredentials[];
  /** The first biller; throws when the world has none. */
  readonly biller: IssuedCredentials;
  /** Each employee with their employment on the payroll, in creation order. */
  people: Person[];
  /** The first person's employee and employment; throw when the world has none. */
  readonly employee: Person['employee'];
  readonly employment: Person['employment'];
  /** With `mandates: true`, one per person (same order), of the first biller; empty otherwise. */
  mandates: Array<Person & { mandate: Mandate }>;
}

function first<T>(items: readonly T[], what: string): T {
  const item = items[0];
  if (item === undefined) throw new Error(`this world has no ${what}: ask buildWorld for one`);
  return item;
}

/**
 * One payroll provider, an employer, its payroll with a calendar, and the billers, employees and
 * mandates a test asks for, built from the factories in this order (provider, employer, payroll,
 * billers, then each employee followed by its mandate).
 */
export async function buildWorld(db: Database, options: WorldOptions = {}): Promise<World> {
  const provider = await createPayrollProvider(db);
  const employer = await createEmployer(db, provider.id, { optIn: options.optIn ?? 'opted_in' });
  const payroll = await createPayroll(db, {
    providerId: provider.id,
    employerId: employer.id,
    payDates: options.payDates ?? futureMonthlyPayDates(),
  });
  const billers: IssuedCredentials[] = [];
  for (let i = 0; i < (options.billers ?? 0); i++) billers.push(await createBiller(db));
  if (options.mandates && billers.length === 0) throw new Error('buildWorld: mandates need a biller (billers: 1 or more)');
  const people: Person[] = [];
  const mandates: World['mandates'] = [];
  for (let i = 0; i < (options.employees ?? 1); i++) {
    const person = await createEmployee(db, {
      providerId: provider.id,
      payrollId: payroll.id,
      employerId: employer.id,
      status: options.employmentStatus ?? 'active',
    });
    people.push(person);
    if (options.mandates) {
      const mandate = await createMandateRow(db, { billerClientId: billers[0]!.clientId, employeeId: person.employee.id, payrollId: payroll.id });
      mandates.push({ ...person, mandate });
    }
  }
  return {
    provider,
    employer,
    payroll,
    billers,
    get biller() {
      return first(billers, 'biller');
    },
    people,
    get employee() {
      return first(people, 'employee').employee;
    },
    get employment() {
      return first(people, 'employee').employment;
    },
    mandates,
  };
}
