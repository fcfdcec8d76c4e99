import type { RedisClient } from '../../platform/runtime/redis-connections.ts';
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
import { findEmployeesByNationalRegistrationNumber, listEmploymentsOfEmployees, listPayDatesOfPayrolls, type EmploymentRow } from './availability-repository.ts';
import { toEmploymentResources, toFullAvailabilityResource, type FullAvailabilityCheck, type LightAvailabilityCheck } from './availability-resource.ts';
import { availabilityStatus, type AvailabilityStatus } from './availability-status.ts';
import {
  availabilityAtProvider,
  availabilityOfPerson,
  type AvailabilityAtProvider,
  type DirectoryAvailabilityRecord,
  type ProviderAvailabilityAnswer,
} from './availability-at-provider.ts';
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

const matchingIds = (candidates: readonly JudgedCandidate[]) => candidates.filter((candidate) => candidate.matches).map((candidate) => candidate.id);

/** What the provider said, as availabilityAtProvider takes it. */
function answerOf<T>(call: ProviderCall<T> | undefined, statusOf: (answer: T) => AvailabilityStatus): ProviderAvailabilityAnswer {
  if (!call) return { kind: 'not_asked' };
  return call.outcome.status === 'fulfilled' ? { kind: 'answered', status: statusOf(call.outcome.value) } : { kind: 'failed' };
}

/** What the directory holds of the person at one provider, as availabilityAtProvider takes it. */
function recordOf(candidates: readonly JudgedCandidate[], statusOfEmployee: (employeeId: string) => AvailabilityStatus): DirectoryAvailabilityRecord {
  if (candidates.length === 0) return { kind: 'unknown' };
  const match = candidates.find((candidate) => candidate.matches);
  return match ? { kind: 'known', status: statusOfEmployee(match.id) } : { kind: 'other_person' };
}

/**
 * availabilityAtProvider at every provider that was asked or where the directory holds the number,
 * from what each provider answered and what the directory held when the check began.
 */
function judgeEachProvider<T>(
  calls: ReadonlyArray<ProviderCall<T>>,
  candidates: readonly JudgedCandidate[],
  providerStatusOf: (answer: T) => AvailabilityStatus,
  statusOfEmployee: (employeeId: string) => AvailabilityStatus,
): Map<string, AvailabilityAtProvider> {
  const providerIds = new Set([...calls.map((call) => call.provider.id), ...candidates.map((candidate) => candidate.providerId)]);
  const judged = new Map<string, AvailabilityAtProvider>();
  for (const providerId of providerIds) {
    const answer = answerOf(
      calls.find((call) => call.provider.id === providerId),
      providerStatusOf,
    );
    const record = recordOf(
      candidates.filter((candidate) => candidate.providerId === providerId),
      statusOfEmployee,
    );
    judged.set(providerId, availabilityAtProvider(answer, record));
  }
  return judged;
}

/** Our availabilityStatus of each employee, over the employments the rows hold for them. */
function directoryStatusOf(rows: readonly EmploymentRow[], currency: string | null) {
  return (employeeId: string) =>
    availabilityStatus({
      employeeFound: true,
      employments: rows.filter((row) => row.employee_id === employeeId).map(standingOf),
      currency,
    });
}

/**
 * Full availability check: providers with an API are asked first (with the same three identifiers),
 * and what they say refreshes our directory. The status is availabilityAtProvider's, the same rule
 * as the light check's, on what each provider answered and what the directory held when the check
 * began: the refresh changes what later checks find, not this answer. The employments shown are the
 * directory's (as refreshed) of the person at every provider whose answer is not not_found, so a
 * provider that matched on less cannot widen the match, and employees that providers without an API
 * pushed to us are found as well. The requested currency (GBP when not given) is the one the caller
 * wants to collect in: only employments paid in it count as usable when the caller names one.
 */
export async function fullAvailabilityCheck(trx: Executor, person: FullAvailabilityCheck, deps: AvailabilityDeps): Promise<FullAvailabilityResponse> {
  const identity = personIdentity(person);
  const reach = deps.reach ?? LIVE;
  const currency = person.currency ?? null;
  const calls = await askProviders(trx, deps.adapterFor, identity, (adapter) => adapter.fullAvailability({ availability_check: person }), reach);
  const failures = failuresOf(calls, deps, 'full availability');
  const before = await judgedCandidates(trx, identity, reach);
  let refreshed = false;
  for (const { provider, outcome } of calls) {
    if (outcome.status !== 'fulfilled') continue;
    await saveProviderAvailability(trx, { providerId: provider.id, response: outcome.value, person, timeZone: deps.timeZone });
    refreshed = true;
  }
  // Only answering providers' people were refreshed: elsewhere the directory is as it was.
  const after = refreshed ? await judgedCandidates(trx, identity, reach) : before;

  const rows = await listEmploymentsOfEmployees(trx, matchingIds(after));
  const judged = judgeEachProvider(calls, before, (answer) => answer.availability_check.availability_status, directoryStatusOf(rows, currency));
  const { status, unanswered } = availabilityOfPerson([...judged.values()]);
  if (unanswered) throw providerFailure(failures[0]);

  const shown = new Set(
    matchingIds(
      after.filter((candidate) => {
        const at = judged.get(candidate.providerId);
        return at !== undefined && at.status !== 'not_found';
      }),
    ),
  );
  const shownRows = rows.filter((row) => shown.has(row.employee_id));
  const payDates = await listPayDatesOfPayrolls(
    trx,
    shownRows.map((r) => r.payroll_id),
  );
  const today = serviceToday(deps.now ?? new Date(), deps.timeZone);
  const employments = toEmploymentResources(shownRows, payDates, { today, timeZone: deps.timeZone, currency });
  return toFullAvailabilityResource(status, person.currency ?? DEFAULT_CURRENCY, employments);
}

/**
 * Light availability check: a yes/no and a count, no personal data. The status is
 * availabilityAtProvider's, exactly as the full check decides it: a provider with an API answers for
 * its own employees (it is the system of record for current employment), unless our directory holds
 * the number there under other details; for providers without one, or one that failed, our
 * directory answers. The count is the answering source's: the provider's employment_count, or our
 * employments as the full check groups them (one per employee and employer).
 */
export async function lightAvailabilityCheck(db: Executor, person: LightAvailabilityCheck, deps: AvailabilityDeps): Promise<LightAvailabilityResponse> {
  const identity = personIdentity(person);
  const reach = deps.reach ?? LIVE;
  const calls = await askProviders(db, deps.adapterFor, identity, (adapter) => adapter.lightAvailability({ availability_check: person }), reach);
  const failures = failuresOf(calls, deps, 'light availability');
  const candidates = await judgedCandidates(db, identity, reach);
  const rows = await listEmploymentsOfEmployees(db, matchingIds(candidates));
  const judged = judgeEachProvider(calls, candidates, (answer) => answer.availability_check.availability_status, directoryStatusOf(rows, null));
  const { status, unanswered } = availabilityOfPerson([...judged.values()]);
  if (unanswered) throw providerFailure(failures[0]);

  let employmentCount = 0;
  for (const [providerId, at] of judged) {
    if (at.status === 'not_found') continue;
    if (at.answeredBy === 'provider') {
      const call = calls.find((c) => c.provider.id === providerId);
      if (call?.outcome.status === 'fulfilled') employmentCount += call.outcome.value.availability_check.employment_count;
    } else if (at.answeredBy === 'directory') {
      const ids = new Set(matchingIds(candidates.filter((candidate) => candidate.providerId === providerId)));
      employmentCount += new Set(rows.filter((r) => ids.has(r.employee_id)).map((r) => `${r.employee_id}/${r.employer_id}`)).size;
    }
  }
  // A not_found carries no count, whatever a provider said: the answer must be the same as for anyone unknown.
  return { availability_check: { availability_status: status, employment_count: status === 'not_found' ? 0 : employmentCount } };
}

function standingOf(row: { employment_status: 'active' | 'leaver' | 'unknown'; employer_opt_in: 'pending' | 'opted_in' | 'opted_out'; currency: string }) {
  return { employmentStatus: row.employment_status, employerOptIn: row.employer_opt_in, currency: row.currency };
}

export type AvailabilityCheckKind = AvailabilityLookup['kind'];

export interface AvailabilityChecksDeps {
  db: Database;
  redis: RedisClient;
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
