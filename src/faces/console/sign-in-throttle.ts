import { createHash } from 'node:crypto';
import { clientAddressKey } from '../../directory/auth/token-throttle.ts';
import { DependencyUnavailable } from '../../platform/shared/domain-errors.ts';
import type { FailureBucket, FailureLimiter } from '../../platform/shared/rate-limiter.ts';
import type { CheckPlace } from './password-hash.ts';

// Console sign-in is throttled, never locked: failures hold back where they come from, not the
// account. A lock that anyone may set by naming an account keeps its owner out (issue 31, item 3);
// a hold on the address that failed slows the guesser and leaves the owner's own browser alone.
//
// An "address" here is a network: an IPv4 address, or an IPv6 /48 (a site: one subscriber may hold
// 65,536 /64s, and tunnel brokers hand out /48s for free). Counted by /64, one /56 kept every
// password check busy (issue 31, item 3).

/** The IPv6 prefix a sign-in's address is counted by (see clientAddressKey). */
export const SIGN_IN_IPV6_PREFIX_BITS = 48;

/** The network an address belongs to, for every bound on sign-in: an IPv4 address, an IPv6 /48. */
export const signInAddressKey = (address: string): string => clientAddressKey(address, SIGN_IN_IPV6_PREFIX_BITS);

export interface SignInThrottleLimits {
  /** Failures one address (or one browser the account signed in on) may make against one account per window. */
  perAccountAndAddress: number;
  /**
   * Failures one address may make per window, whatever emails it tries (spraying one password over
   * many); a sign-in refused because the password checks were busy counts as one.
   */
  perAddress: number;
  /** Failures against one account per window from browsers it never signed in on, from any address (a botnet). */
  perAccount: number;
}

export interface SignInAttempt {
  /**
   * The email as typed (normalised): every email gets buckets, an account's or not, so that being
   * held back says nothing about which accounts exist.
   */
  email: string;
  /** The caller's address (IPv6 counted by its /48: see signInAddressKey). */
  address: string;
  /** A browser this account signed in on before (its device token's id), or null. */
  device: string | null;
}

/** An email as a bucket key: fixed length, and no email kept in Redis. */
function accountKey(email: string): string {
  return createHash('sha256').update(email, 'utf8').digest('base64url');
}

/** The failure buckets of one sign-in attempt, by what each bounds. */
export interface SignInBuckets {
  /** A browser the account signed in on: its own bucket for the account, and nothing else. */
  device?: FailureBucket;
  /** This address against this account. */
  accountAndAddress?: FailureBucket;
  /** This address, all emails. */
  address?: FailureBucket;
  /** This account, every browser but its owner's. */
  account?: FailureBucket;
  /** One failure, refilling over the whole window: whether this address has failed for this account lately. */
  failedHereLately?: FailureBucket;
  /** One failure, refilling over the whole window: whether this address has failed at all lately (any email, or refused busy). */
  addressFailedLately?: FailureBucket;
}

/**
 * The failure buckets a sign-in attempt is held back by, and spends on failing. A browser the account
 * signed in on has a bucket of its own for that account and nothing else: failures elsewhere, from its
 * own address included, cannot keep it out. Any other caller has the account from its address, its
 * address over all accounts, and the account from everywhere (see signInWaitSeconds).
 */
export function signInFailureBuckets(attempt: SignInAttempt, limits: SignInThrottleLimits): SignInBuckets {
  const account = accountKey(attempt.email);
  if (attempt.device !== null) return { device: { key: `console-sign-in:account-device:${account}:${attempt.device}`, capacity: limits.perAccountAndAddress } };
  const address = signInAddressKey(attempt.address);
  return {
    accountAndAddress: { key: `console-sign-in:account-address:${account}:${address}`, capacity: limits.perAccountAndAddress },
    address: { key: `console-sign-in:address:${address}`, capacity: limits.perAddress },
    account: { key: `console-sign-in:account:${account}`, capacity: limits.perAccount },
    failedHereLately: { key: `console-sign-in:account-address-lately:${account}:${address}`, capacity: 1 },
    addressFailedLately: { key: `console-sign-in:address-lately:${address}`, capacity: 1 },
  };
}

/**
 * The buckets a sign-in refused as busy spends: its address's, and only those. A refusal says
 * nothing about the account, but it is the address's to pay for, so a flood that keeps the password
 * checks busy spends its own budget and is then held back with 429 before it reaches them. A browser
 * the account signed in on spends nothing (it has no address buckets).
 */
export function signInBusyBuckets(buckets: SignInBuckets): FailureBucket[] {
  return [buckets.address, buckets.addressFailedLately].filter((bucket) => bucket !== undefined);
}

/** How long each of an attempt's buckets says to wait, in seconds (0: not empty; absent: no such bucket). */
export type SignInBucketWaits = { [K in keyof SignInBuckets]?: number };

/**
 * Seconds an attempt must wait before its password is checked (0: check it now). Its own buckets
 * (device; account from this address; this address) hold it back when empty. The account's bucket,
 * once the failures from everywhere have used it up, holds back only the addresses that have failed
 * for the account lately: an address that has not, the owner's at work or at home, still signs in
 * with the right password. So guessing at one account from many addresses gets `perAccount`
 * failures a window, then one more per address never used before.
 */
export function signInWaitSeconds(waits: SignInBucketWaits): number {
  const own = Math.max(waits.device ?? 0, waits.accountAndAddress ?? 0, waits.address ?? 0);
  const underAttack = (waits.account ?? 0) > 0 ? (waits.failedHereLately ?? 0) : 0;
  return Math.max(own, underAttack);
}

/** The order password checks are taken in: a browser the account signed in on, then an address that has not failed lately, then the rest. */
export const SIGN_IN_PRIORITY = { trustedDevice: 0, quietAddress: 1, failingAddress: 2 } as const;

/**
 * Where an attempt's password check waits (see PasswordChecks). A browser the account signed in on
 * comes first, taking its turn with the account's other browsers: a stranger cannot have one, so no
 * flood of strangers keeps the owner's browser waiting. Then an address that has not failed lately,
 * as an owner's new browser at home or at work: a flood fails, so each of its networks comes first
 * once a window at most. Then everyone else. Each address (network) takes its turn with the others
 * of its priority, however many sign-ins it sends.
 */
export function signInCheckPlace(attempt: SignInAttempt, waits: SignInBucketWaits): CheckPlace {
  if (attempt.device !== null) return { priority: SIGN_IN_PRIORITY.trustedDevice, group: `account:${accountKey(attempt.email)}` };
  const priority = (waits.addressFailedLately ?? 0) > 0 ? SIGN_IN_PRIORITY.failingAddress : SIGN_IN_PRIORITY.quietAddress;
  return { priority, group: `address:${signInAddressKey(attempt.address)}` };
}

/** What the buckets say of an attempt: how long it must wait (0: check it now), and where its check waits. */
export interface SignInAssessment {
  retryAfterSeconds: number;
  place: CheckPlace;
}

/**
 * Sign-ins one address (network), or one account from the browsers it signed in on, may have in
 * flight at once in this process. A failure is counted once its password is checked, so without this
 * bound one address could send many guesses at once, all before the first is counted. Two, not one:
 * a person who presses Sign in twice is not refused. A browser the account signed in on is bounded
 * with the account's other browsers, not with its address, so others at its address cannot use up
 * its places.
 */
export const SIGN_INS_IN_FLIGHT_PER_ADDRESS = 2;

/** What an attempt's sign-ins in flight are bounded by (see SIGN_INS_IN_FLIGHT_PER_ADDRESS). */
function inFlightKey(attempt: SignInAttempt): string {
  return attempt.device !== null ? `account:${accountKey(attempt.email)}` : `address:${signInAddressKey(attempt.address)}`;
}

/**
 * Failed console sign-ins counted in Redis failure buckets (shared by every API process), refilling
 * over the window: a held-back caller may try again as soon as one failure has refilled. Fails
 * closed, like the token endpoint: with Redis unreachable, sign-in answers 503.
 */
export class SignInThrottle {
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly limiter: FailureLimiter,
    private readonly limits: SignInThrottleLimits,
  ) {}

  /** A place for one sign-in, and the function that gives it back; null when its address (or its account's browsers) have none left. */
  enter(attempt: SignInAttempt): (() => void) | null {
    const key = inFlightKey(attempt);
    const current = this.inFlight.get(key) ?? 0;
    if (current >= SIGN_INS_IN_FLIGHT_PER_ADDRESS) return null;
    this.inFlight.set(key, current + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const remaining = (this.inFlight.get(key) ?? 1) - 1;
      if (remaining > 0) this.inFlight.set(key, remaining);
      else this.inFlight.delete(key);
    };
  }

  /** Seconds until this attempt may have its password checked (0 when it may now), and where its check waits. */
  async assess(attempt: SignInAttempt): Promise<SignInAssessment> {
    const buckets = Object.entries(signInFailureBuckets(attempt, this.limits)) as Array<[keyof SignInBuckets, FailureBucket]>;
    try {
      // Each bucket's wait on its own (the limiter gives the longest of those it is asked about); sent together, in one round trip.
      const waits: SignInBucketWaits = Object.fromEntries(
        await Promise.all(buckets.map(async ([name, bucket]) => [name, await this.limiter.retryAfterSeconds([bucket])] as const)),
      );
      return { retryAfterSeconds: signInWaitSeconds(waits), place: signInCheckPlace(attempt, waits) };
    } catch (error) {
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }

  /** A sign-in refused because the password checks were busy: spent against its address (see signInBusyBuckets). */
  async recordBusy(attempt: SignInAttempt): Promise<void> {
    try {
      await this.limiter.recordFailure(signInBusyBuckets(signInFailureBuckets(attempt, this.limits)));
    } catch (error) {
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }

  async recordFailure(attempt: SignInAttempt): Promise<void> {
    try {
      await this.limiter.recordFailure(Object.values(signInFailureBuckets(attempt, this.limits)));
    } catch (error) {
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }
}
