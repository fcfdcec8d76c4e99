import { serviceToday } from '../calendars/lock-date.ts';
import type { Executor } from '../db/connection.ts';
import { HttpProblem, unprocessable } from '../http/problem.ts';
import type { AdapterFactory, PayrollProviderAdapter, ProviderConnection } from '../payroll-providers/adapter.ts';
import { listProviderConnections } from '../payroll-providers/directory-repository.ts';
import { saveProviderAvailability, type PersonDetails } from '../payroll-providers/directory-service.ts';
import type {
  FullAvailabilityResponse,
  LightAvailabilityRequest,
  LightAvailabilityResponse,
} from '../payroll-providers/reference-schemas.ts';
import { findMatchingEmployees, listEmploymentsOfEmployees, listPayDatesOfPayrolls } from './availability-repository.ts';
import { toEmploymentResources, toFullAvailabilityResource } from './availability-resource.ts';
import { availabilityStatus, bestAvailabilityStatus, type AvailabilityStatus } from './availability-status.ts';
import { personIdentity, type PersonIdentity } from './person-identity.ts';

export interface AvailabilityDeps {
  adapterFor: AdapterFactory;
  timeZone: string;
  /** Where a provider that failed is reported when other sources still answer. */
  log: { warn(details: object, message: string): void };
  now?: Date;
}

const DEFAULT_CURRENCY = 'GBP';

function identityOrProblem(fields: Parameters<typeof personIdentity>[0]): PersonIdentity {
  const identity = personIdentity(fields);
  if (identity) return identity;
  throw unprocessable(
    'insufficient-identity',
    'Identify the person by national_registration_number, or by family_name together with date_of_birth',
    [
      { pointer: '/availability_check/national_registration_number', detail: 'is required unless family_name and date_of_birth are given' },
      ...(fields.family_name ? [] : [{ pointer: '/availability_check/family_name', detail: 'is required without national_registration_number' }]),
      ...(fields.date_of_birth ? [] : [{ pointer: '/availability_check/date_of_birth', detail: 'is required without national_registration_number' }]),
    ],
  );
}

interface ProviderCall<T> {
  provider: ProviderConnection;
  outcome: PromiseSettledResult<T>;
}

/** Asks every provider that has an API at once; one provider's failure does not stop the others. */
async function askProviders<T>(
  db: Executor,
  adapterFor: AdapterFactory,
  ask: (adapter: PayrollProviderAdapter) => Promise<T>,
): Promise<Array<ProviderCall<T>>> {
  const reachable = (await listProviderConnections(db)).flatMap((provider) => {
    const adapter = adapterFor(provider);
    return adapter ? [{ provider, adapter }] : [];
  });
  const outcomes = await Promise.allSettled(reachable.map(({ adapter }) => ask(adapter)));
  return reachable.map(({ provider }, i) => ({ provider, outcome: outcomes[i]! }));
}

function failuresOf(calls: ReadonlyArray<ProviderCall<unknown>>, deps: AvailabilityDeps, operation: string): unknown[] {
  const failures: unknown[] = [];
  for (const { provider, outcome } of calls) {
    if (outcome.status === 'fulfilled') continue;
    failures.push(outcome.reason);
    deps.log.warn({ err: outcome.reason, providerId: provider.id, operation }, 'payroll provider failed; answering from other sources');
  }
  return failures;
}

/**
 * When nothing was found and a provider could not be asked, "not found" would be a guess: the
 * provider's problem (a ProviderError is already one: 502, 504) is the honest answer.
 */
function providerProblem(failure: unknown): HttpProblem {
  if (failure instanceof HttpProblem) return failure;
  return new HttpProblem(502, 'provider-unavailable', 'A payroll provider could not be asked, and no other source knows this person');
}

/**
 * Full availability check: providers with an API are asked first and what they say is kept in our
 * directory; the answer then comes from the directory, so employees that providers without an API
 * pushed to us are found as well. The requested currency (GBP when not given) is the one the caller
 * wants to collect in: only employments paid in it count as usable when the caller names one.
 */
export async function fullAvailabilityCheck(
  trx: Executor,
  person: PersonDetails,
  deps: AvailabilityDeps,
): Promise<FullAvailabilityResponse> {
  const identity = identityOrProblem(person);
  const calls = await askProviders(trx, deps.adapterFor, (adapter) => adapter.fullAvailability({ availability_check: person }));
  const failures = failuresOf(calls, deps, 'full availability');

  // Whoever a provider recognised is this person, even when our record is spelt differently.
  const recognised = new Set<string>();
  for (const { provider, outcome } of calls) {
    if (outcome.status !== 'fulfilled') continue;
    const kept = await saveProviderAvailability(trx, { providerId: provider.id, response: outcome.value, person, timeZone: deps.timeZone });
    for (const id of kept) recognised.add(id);
  }
  for (const employee of await findMatchingEmployees(trx, identity)) recognised.add(employee.id);
  const employeeIds = [...recognised].sort();

  if (employeeIds.length === 0 && failures.length > 0) throw providerProblem(failures[0]);

  const rows = await listEmploymentsOfEmployees(trx, employeeIds);
  const payDates = await listPayDatesOfPayrolls(trx, rows.map((r) => r.payroll_id));
  const today = serviceToday(deps.now ?? new Date(), deps.timeZone);
  const employments = toEmploymentResources(rows, payDates, { today, timeZone: deps.timeZone });
  const status = availabilityStatus({
    employeeFound: employeeIds.length > 0,
    employments: rows.map(standingOf),
    currency: person.currency ?? null,
  });
  return toFullAvailabilityResource(status, person.currency ?? DEFAULT_CURRENCY, employments);
}

/**
 * Light availability check: a yes/no and a count, no personal data. A provider with an API answers
 * for its own employees (its answer is fresher than our copy); for providers without one, or one
 * that failed, our directory answers. The counts are employments as the full check groups them.
 */
export async function lightAvailabilityCheck(
  db: Executor,
  person: LightAvailabilityRequest['availability_check'],
  deps: AvailabilityDeps,
): Promise<LightAvailabilityResponse> {
  const identity = identityOrProblem(person);
  const calls = await askProviders(db, deps.adapterFor, (adapter) => adapter.lightAvailability({ availability_check: person }));
  const failures = failuresOf(calls, deps, 'light availability');

  const statuses: AvailabilityStatus[] = [];
  let employmentCount = 0;
  const answered: string[] = [];
  for (const { provider, outcome } of calls) {
    if (outcome.status !== 'fulfilled') continue;
    answered.push(provider.id);
    statuses.push(outcome.value.availability_check.availability_status);
    employmentCount += outcome.value.availability_check.employment_count;
  }

  const employees = await findMatchingEmployees(db, identity, answered);
  const rows = await listEmploymentsOfEmployees(db, employees.map((e) => e.id));
  statuses.push(availabilityStatus({ employeeFound: employees.length > 0, employments: rows.map(standingOf), currency: null }));
  employmentCount += new Set(rows.map((r) => `${r.employee_id}/${r.employer_id}`)).size;

  const status = bestAvailabilityStatus(statuses);
  if (status === 'not_found' && failures.length > 0) throw providerProblem(failures[0]);
  return { availability_check: { availability_status: status, employment_count: employmentCount } };
}

function standingOf(row: { employment_status: 'active' | 'leaver' | 'unknown'; employer_opt_in: 'pending' | 'opted_in' | 'opted_out'; currency: string }) {
  return { employmentStatus: row.employment_status, employerOptIn: row.employer_opt_in, currency: row.currency };
}
