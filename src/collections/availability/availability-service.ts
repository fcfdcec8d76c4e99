import type { Redis } from 'ioredis';
import { RateLimiter } from '../../platform/shared/rate-limiter.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import type { AdapterFactory, PayrollProviderAdapter, ProviderConnection } from '../../directory/payroll-providers/adapter.ts';
import { listProviderConnections } from '../../directory/payrolls/directory-repository.ts';
import { saveProviderAvailability } from '../employee-changes/directory-service.ts';
import type { FullAvailabilityResponse, LightAvailabilityResponse } from '../../directory/payroll-providers/reference-schemas.ts';
import { billerReach, type DirectoryReach } from '../../platform/shared/caller.ts';
import { DependencyUnavailable, DomainError, RateLimitedError, UpstreamError } from '../../platform/shared/domain-errors.ts';
import { insertAvailabilityLookup, type AvailabilityLookup } from './availability-lookups-repository.ts';
import { findEmployeesByNationalRegistrationNumber, listEmploymentsOfEmployees, listPayDatesOfPayrolls } from './availability-repository.ts';
import { toEmploymentResources, toFullAvailabilityResource, type FullAvailabilityCheck, type LightAvailabilityCheck } from './availability-resource.ts';
import { availabilityStatus, bestAvailabilityStatus, type AvailabilityStatus } from './availability-status.ts';
import { lookupLogKey, nationalRegistrationNumberHmac } from './lookup-key.ts';
import {
  isCompleteIdentity,
  matchesKnownPerson,
  NOBODY,
  normaliseNationalRegistrationNumber,
  personIdentity,
  type PersonIdentity,
} from '../../directory/payrolls/person-identity.ts';

export interface AvailabilityDeps {
  adapterFor: AdapterFactory;
  timeZone: string;
  /** Where a provider that failed is reported when other sources still answer. */
  log: { warn(details: object, message: string): void };
  now?: Date;
  /**
   * Whose directory the caller reaches (directoryReachOf): only those providers are searched, and only
   * a live biller's check asks providers' APIs. Absent is a live biller's.
   */
  reach?: DirectoryReach;
}

const DEFAULT_CURRENCY = 'GBP';
const LIVE: DirectoryReach = { kind: 'live' };

interface ProviderCall<T> {
  provider: ProviderConnection;
  outcome: PromiseSettledResult<T>;
}

/**
 * Asks every provider that has an API at once; one provider's failure does not stop the others. A
 * check without all three identifiers is not_found whatever a provider says, so no provider is asked:
 * none learns of it, and nothing a provider would answer is pulled into our directory.
 */
async function askProviders<T>(
  db: Executor,
  adapterFor: AdapterFactory,
  identity: PersonIdentity,
  ask: (adapter: PayrollProviderAdapter) => Promise<T>,
  reach: DirectoryReach,
): Promise<Array<ProviderCall<T>>> {
  if (!isCompleteIdentity(identity)) return [];
  // Live providers are the only ones with an API we call; no other reach may make us call them.
  const reachable = (await listProviderConnections(db, { sandbox: reach.kind !== 'live' })).flatMap((provider) => {
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
 * provider's failure (a ProviderError already says which) is the honest answer.
 */
function providerFailure(failure: unknown): DomainError {
  if (failure instanceof DomainError) return failure;
  return new UpstreamError('provider-unavailable', 'A payroll provider could not be asked, and no other source knows this person');
}

/** A directory employee holding the checked number, and whether the matching rule says it is this person. */
interface JudgedCandidate {
  id: string;
  providerId: string;
  matches: boolean;
}

/**
 * The directory's employees holding the national registration number, each judged by the rest of
 * the rule (matchesKnownPerson: date of birth, and a family name any of their payrolls gives). When
 * nobody holds the number, a stand-in is compared all the same: the work, and so the time, is the
 * same whether the number is unknown, known with other details, or known with these.
 */
async function judgedCandidates(db: Executor, identity: PersonIdentity, reach: DirectoryReach): Promise<JudgedCandidate[]> {
  const candidates = await findEmployeesByNationalRegistrationNumber(db, identity.nationalRegistrationNumber, reach);
  const compared = candidates.length > 0 ? candidates : [{ date_of_birth: NOBODY.date_of_birth, family_names: [NOBODY.family_name], id: null, payroll_provider_id: null }];
  const judged: JudgedCandidate[] = [];
  for (const candidate of compared) {
    const matches = matchesKnownPerson(candidate, identity);
    if (candidate.id !== null && candidate.payroll_provider_id !== null) {
      judged.push({ id: candidate.id, providerId: candidate.payroll_provider_id, matches });
    }
  }
  return judged;
}

/** The directory's employees who are this person: the number found them and the rule kept them. */
async function matchingEmployeeIds(db: Executor, identity: PersonIdentity, reach: DirectoryReach): Promise<string[]> {
  return (await judgedCandidates(db, identity, reach)).filter((candidate) => candidate.matches).map((candidate) => candidate.id);
}

/**
 * Full availability check: providers with an API are asked first (with the same three identifiers),
 * and what they say refreshes our directory; the answer then comes from the directory under the one
 * matching rule, so a provider that matched on less cannot widen it, and employees that providers
 * without an API pushed to us are found as well. The requested currency (GBP when not given) is the
 * one the caller wants to collect in: only employments paid in it count as usable when the caller
 * names one.
 */
export async function fullAvailabilityCheck(trx: Executor, person: FullAvailabilityCheck, deps: AvailabilityDeps): Promise<FullAvailabilityResponse> {
  const identity = personIdentity(person);
  const reach = deps.reach ?? LIVE;
  const calls = await askProviders(trx, deps.adapterFor, identity, (adapter) => adapter.fullAvailability({ availability_check: person }), reach);
  const failures = failuresOf(calls, deps, 'full availability');
  for (const { provider, outcome } of calls) {
    if (outcome.status !== 'fulfilled') continue;
    await saveProviderAvailability(trx, { providerId: provider.id, response: outcome.value, person, timeZone: deps.timeZone });
  }
  const employeeIds = await matchingEmployeeIds(trx, identity, reach);

  if (employeeIds.length === 0 && failures.length > 0) throw providerFailure(failures[0]);

  const currency = person.currency ?? null;
  const rows = await listEmploymentsOfEmployees(trx, employeeIds);
  const payDates = await listPayDatesOfPayrolls(
    trx,
    rows.map((r) => r.payroll_id),
  );
  const today = serviceToday(deps.now ?? new Date(), deps.timeZone);
  const employments = toEmploymentResources(rows, payDates, { today, timeZone: deps.timeZone, currency });
  const status = availabilityStatus({ employeeFound: employeeIds.length > 0, employments: rows.map(standingOf), currency });
  return toFullAvailabilityResource(status, person.currency ?? DEFAULT_CURRENCY, employments);
}

/**
 * Light availability check: a yes/no and a count, no personal data. A provider with an API answers
 * for its own employees (its answer is fresher than our copy); for providers without one, or one
 * that failed, our directory answers. The counts are employments as the full check groups them.
 *
 * The matching rule decides here too. A provider's light answer carries nothing to compare, so the
 * directory is asked: when it holds the number at that provider under another date of birth or
 * family name, the provider matched on less than all three (or on details payroll has since
 * changed), and its answer counts as not_found, exactly as the full check would answer from the
 * directory. When the directory does not hold the number there, the provider's own match on all
 * three (it is asked with them) stands, as a full check would store and then find it.
 */
export async function lightAvailabilityCheck(db: Executor, person: LightAvailabilityCheck, deps: AvailabilityDeps): Promise<LightAvailabilityResponse> {
  const identity = personIdentity(person);
  const reach = deps.reach ?? LIVE;
  const calls = await askProviders(db, deps.adapterFor, identity, (adapter) => adapter.lightAvailability({ availability_check: person }), reach);
  const failures = failuresOf(calls, deps, 'light availability');
  const candidates = await judgedCandidates(db, identity, reach);

  const statuses: AvailabilityStatus[] = [];
  let employmentCount = 0;
  const answered = new Set<string>();
  for (const { provider, outcome } of calls) {
    if (outcome.status !== 'fulfilled') continue;
    answered.add(provider.id);
    const known = candidates.filter((candidate) => candidate.providerId === provider.id);
    if (known.length > 0 && !known.some((candidate) => candidate.matches)) continue;
    statuses.push(outcome.value.availability_check.availability_status);
    employmentCount += outcome.value.availability_check.employment_count;
  }

  const employeeIds = candidates.filter((candidate) => candidate.matches && !answered.has(candidate.providerId)).map((candidate) => candidate.id);
  const rows = await listEmploymentsOfEmployees(db, employeeIds);
  statuses.push(availabilityStatus({ employeeFound: employeeIds.length > 0, employments: rows.map(standingOf), currency: null }));
  employmentCount += new Set(rows.map((r) => `${r.employee_id}/${r.employer_id}`)).size;

  const status = bestAvailabilityStatus(statuses);
  if (status === 'not_found' && failures.length > 0) throw providerFailure(failures[0]);
  // A not_found carries no count, whatever a provider said: the answer must be the same as for anyone unknown.
  return { availability_check: { availability_status: status, employment_count: status === 'not_found' ? 0 : employmentCount } };
}

function standingOf(row: { employment_status: 'active' | 'leaver' | 'unknown'; employer_opt_in: 'pending' | 'opted_in' | 'opted_out'; currency: string }) {
  return { employmentStatus: row.employment_status, employerOptIn: row.employer_opt_in, currency: row.currency };
}

export type AvailabilityCheckKind = AvailabilityLookup['kind'];

export interface AvailabilityChecksDeps {
  db: Database;
  redis: Redis;
  config: Pick<Config, 'QUEUE_PREFIX' | 'SERVICE_TIME_ZONE' | 'NODE_ENV' | 'AVAILABILITY_CHECKS_PER_MINUTE' | 'AVAILABILITY_CHECKS_BURST' | 'AVAILABILITY_LOG_KEY'>;
  adapterFor: AdapterFactory;
  /** Start-up notices (an unconfigured log key). */
  log: { warn(details: object, message: string): void };
}

/** One check as the API runs it: for a biller, of one kind, reporting to the request's log. */
export interface CheckRequest<P> {
  billerClientId: string;
  /** The biller's mode (Caller.sandbox): a sandbox biller's check searches its own sandbox alone (billerReach). Absent is live. */
  sandbox?: boolean;
  person: P;
  log: { warn(details: object, message: string): void };
}

/**
 * Availability checks as the API offers them: limited per biller, and each one recorded. Every check
 * takes a token from the biller's own bucket (beside the general per-client limit, and much smaller:
 * checks are how someone would walk through people's details), and leaves one row in the lookup log
 * with the biller, the time, the kind, the outcome and an HMAC of the national registration number,
 * never the person's details in clear. An answer is recorded in the transaction that produced it, so
 * nothing is disclosed unrecorded; a refused or failed check is recorded on its own afterwards.
 */
export function availabilityChecks(deps: AvailabilityChecksDeps) {
  const { config } = deps;
  const limiter = new RateLimiter(deps.redis, `${config.QUEUE_PREFIX}:availability`, config.AVAILABILITY_CHECKS_PER_MINUTE / 60, config.AVAILABILITY_CHECKS_BURST);
  const { key, configured } = lookupLogKey(config);
  if (!configured) {
    deps.log.warn({}, 'AVAILABILITY_LOG_KEY is not set: the availability lookup log uses a key of this process only');
  }

  async function takeToken(billerClientId: string) {
    try {
      return await limiter.take(billerClientId);
    } catch (error) {
      // Fails closed, like the general limit: no limit, no checks.
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }

  async function recordBestEffort(lookup: AvailabilityLookup, log: CheckRequest<unknown>['log']) {
    try {
      await insertAvailabilityLookup(deps.db, lookup);
    } catch (error) {
      log.warn({ err: error, outcome: lookup.outcome }, 'availability check could not be recorded');
    }
  }

  async function run<R>(
    kind: AvailabilityCheckKind,
    request: CheckRequest<{ national_registration_number?: string | undefined }>,
    check: (trx: Executor, availabilityDeps: AvailabilityDeps) => Promise<R>,
    statusOf: (answer: R) => AvailabilityStatus,
  ): Promise<R> {
    const nationalNumber = normaliseNationalRegistrationNumber(request.person.national_registration_number ?? '');
    const lookup = {
      biller_client_id: request.billerClientId,
      kind,
      national_registration_number_hmac: nationalNumber === '' ? null : nationalRegistrationNumberHmac(key, nationalNumber),
    };
    const decision = await takeToken(request.billerClientId);
    if (!decision.allowed) {
      await recordBestEffort({ ...lookup, outcome: 'rate_limited' }, request.log);
      throw new RateLimitedError(
        'rate-limited',
        `Too many availability checks: at most ${config.AVAILABILITY_CHECKS_PER_MINUTE} a minute, in bursts of up to ${config.AVAILABILITY_CHECKS_BURST}; retry after ${decision.retryAfterSeconds} s`,
        decision.retryAfterSeconds,
        { members: { rate_limit: 'availability_checks' } },
      );
    }
    const availabilityDeps = {
      adapterFor: deps.adapterFor,
      timeZone: config.SERVICE_TIME_ZONE,
      log: request.log,
      reach: billerReach(request.billerClientId, request.sandbox),
    };
    try {
      return await deps.db.transaction().execute(async (trx) => {
        const answer = await check(trx, availabilityDeps);
        await insertAvailabilityLookup(trx, { ...lookup, outcome: statusOf(answer) });
        return answer;
      });
    } catch (error) {
      await recordBestEffort({ ...lookup, outcome: 'failed' }, request.log);
      throw error;
    }
  }

  return {
    full: (request: CheckRequest<FullAvailabilityCheck>) =>
      run(
        'full',
        request,
        (trx, d) => fullAvailabilityCheck(trx, request.person, d),
        (a) => a.availability_check.availability_status,
      ),
    light: (request: CheckRequest<LightAvailabilityCheck>) =>
      run(
        'light',
        request,
        (trx, d) => lightAvailabilityCheck(trx, request.person, d),
        (a) => a.availability_check.availability_status,
      ),
  };
}
