import { bestAvailabilityStatus, type AvailabilityStatus } from './availability-status.ts';

/** What a payroll provider said of the person when asked through its API, if it was. */
export type ProviderAvailabilityAnswer =
  | { kind: 'answered'; status: AvailabilityStatus }
  /** Asked, and it failed (timeout, error, unusable answer). */
  | { kind: 'failed' }
  /** Not asked: the provider has no API (instruction files only), the caller's reach calls none, or the check lacks one of the three identifiers. */
  | { kind: 'not_asked' };

/** What our directory holds of the person at that provider, as the check found it before anything was refreshed. */
export type DirectoryAvailabilityRecord =
  /** Nobody at that provider holds the national registration number. */
  | { kind: 'unknown' }
  /** Someone there holds the number, but the matching rule does not say it is this person (another date of birth or family name, or none known to compare). */
  | { kind: 'other_person' }
  /** The matching rule found the person there; `status` is availabilityStatus over their employments. */
  | { kind: 'known'; status: AvailabilityStatus };

export interface AvailabilityAtProvider {
  status: AvailabilityStatus;
  /** Whose answer it is: a light check counts the provider's employments or ours accordingly, a full check shows ours when the status is not not_found. */
  answeredBy: 'provider' | 'directory' | 'nobody';
  /** Nobody could answer: the provider failed and our directory cannot vouch for the person there. */
  unanswered: boolean;
}

/**
 * The one availability rule at one payroll provider, for the light and the full check alike (they
 * differ only in how much they show), so the two can never disagree about a person:
 *
 * - our matching rule decides first: when the directory holds the number at that provider under
 *   another date of birth or family name, the person is not_found there whatever the provider says
 *   (a provider that matched on less cannot widen the match);
 * - otherwise a provider that answered is the system of record for its own current employments, and
 *   its status stands, not_found included: an employment our directory still holds but the provider
 *   no longer reports is not offered to a biller, who would plan deductions nobody will make;
 * - a provider that failed, or that we do not ask, leaves the answer to our directory: the person as
 *   we know them there, or not_found;
 * - not_found because a provider failed and we do not know the person there is not an answer but a
 *   guess (`unanswered`); the holder of the number under other details counts so too, so a failing
 *   provider cannot tell a caller whether the number is known.
 */
export function availabilityAtProvider(provider: ProviderAvailabilityAnswer, directory: DirectoryAvailabilityRecord): AvailabilityAtProvider {
  const failed = provider.kind === 'failed';
  if (directory.kind === 'other_person') return { status: 'not_found', answeredBy: 'nobody', unanswered: failed };
  if (provider.kind === 'answered') return { status: provider.status, answeredBy: 'provider', unanswered: false };
  if (directory.kind === 'known') return { status: directory.status, answeredBy: 'directory', unanswered: false };
  return { status: 'not_found', answeredBy: 'nobody', unanswered: failed };
}

/**
 * A person over every provider: the most useful answer of any provider wins (a person can work for
 * several employers), and a not_found that some provider could not answer is unanswered, which the
 * checks report as that provider's failure rather than as not_found.
 */
export function availabilityOfPerson(atProviders: readonly AvailabilityAtProvider[]): { status: AvailabilityStatus; unanswered: boolean } {
  const status = bestAvailabilityStatus(atProviders.map((at) => at.status));
  return { status, unanswered: status === 'not_found' && atProviders.some((at) => at.unanswered) };
}
