import { createHash } from 'node:crypto';
import { clientAddressKey } from '../auth/token-throttle.ts';
import { DependencyUnavailable } from '../shared/domain-errors.ts';
import type { FailureBucket, FailureLimiter } from '../shared/rate-limiter.ts';

// Console sign-in is throttled, never locked: failures hold back where they come from, not the
// account. A lock that anyone may set by naming an account keeps its owner out (issue 31, item 3);
// a hold on the address that failed slows the guesser and leaves the owner's own browser alone.

export interface SignInThrottleLimits {
  /** Failures one address (or one browser the account signed in on) may make against one account per window. */
  perAccountAndAddress: number;
  /** Failures one address may make per window, whatever emails it tries (spraying one password over many). */
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
  /** The caller's address (IPv6 counted by its /64, as at the token endpoint). */
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
  const address = clientAddressKey(attempt.address);
  return {
    accountAndAddress: { key: `console-sign-in:account-address:${account}:${address}`, capacity: limits.perAccountAndAddress },
    address: { key: `console-sign-in:address:${address}`, capacity: limits.perAddress },
    account: { key: `console-sign-in:account:${account}`, capacity: limits.perAccount },
    failedHereLately: { key: `console-sign-in:account-address-lately:${account}:${address}`, capacity: 1 },
  };
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

/**
 * Sign-ins one address may have in flight at once in this process. A failure is counted once its
 * password is checked, so without this bound one address could send many guesses at once, all before
 * the first is counted, and fill the password-check queue everyone shares. Two, not one: a person
 * who presses Sign in twice is not refused.
 */
export const SIGN_INS_IN_FLIGHT_PER_ADDRESS = 2;

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

  /** A place for one sign-in from this address, and the function that gives it back; null when the address has none left. */
  enter(address: string): (() => void) | null {
    const key = clientAddressKey(address);
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

  /** Seconds until this attempt may have its password checked; 0 when it may now. */
  async retryAfterSeconds(attempt: SignInAttempt): Promise<number> {
    const buckets = Object.entries(signInFailureBuckets(attempt, this.limits)) as Array<[keyof SignInBuckets, FailureBucket]>;
    try {
      // Each bucket's wait on its own (the limiter gives the longest of those it is asked about); sent together, in one round trip.
      const waits = await Promise.all(buckets.map(async ([name, bucket]) => [name, await this.limiter.retryAfterSeconds([bucket])] as const));
      return signInWaitSeconds(Object.fromEntries(waits));
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
