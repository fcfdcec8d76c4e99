import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import pLimit, { type LimitFunction } from 'p-limit';

// Console passwords are chosen by people, so they are hashed with a memory-hard function: Node's
// scrypt at OWASP's recommended cost (N=2^17, r=8, p=1). The cost travels in the hash, so raising it
// later leaves existing hashes verifiable.

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const PASSWORD_COST: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1_024;

const KEY_BYTES = 32;
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; Node's default ceiling (32 MiB) is below OWASP's cost.
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(password: string, cost: ScryptCost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** False for a wrong password and for a hash this code cannot read; compares in constant time. */
export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0)) return false;
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (expected.length !== KEY_BYTES || password.length > MAX_PASSWORD_LENGTH) return false;
  const actual = await derive(password, Buffer.from(parts[4]!, 'base64url'), { N, r, p });
  return timingSafeEqual(actual, expected);
}

/**
 * A hash no password matches, at today's cost: checking a password against it takes as long as
 * against a real account's, so an unknown or disabled account answers no sooner than a real one.
 * Its key is all zeros, which scrypt does not give for any password one could find.
 */
const UNMATCHABLE_HASH = ['scrypt', PASSWORD_COST.N, PASSWORD_COST.r, PASSWORD_COST.p, Buffer.alloc(SALT_BYTES).toString('base64url'), Buffer.alloc(KEY_BYTES).toString('base64url')].join('$');

/** More sign-ins wait for a password check than PasswordChecks lets wait. */
export class PasswordChecksBusy extends Error {
  constructor() {
    super('too many sign-ins are waiting for a password check');
  }
}

/**
 * Checks sign-in passwords a few at a time. scrypt already runs off the event loop, in libuv's
 * threadpool (4 threads unless UV_THREADPOOL_SIZE says otherwise), but other work queues in that same
 * pool: WebCrypto (signing access tokens), file reads, DNS lookups. So a burst of sign-ins may take
 * only `concurrency` of its threads, and only `waiting` more sign-ins may queue for one; any further
 * is refused at once (PasswordChecksBusy) rather than left to wait without end.
 */
export class PasswordChecks {
  private readonly limit: LimitFunction;

  constructor(
    concurrency: number,
    private readonly waiting: number,
  ) {
    this.limit = pLimit(concurrency);
  }

  /**
   * Whether the password matches the stored hash. Without one (an unknown or disabled account) it is
   * checked against a hash no password matches, at the same cost: every answer takes as long.
   * Rejects with PasswordChecksBusy, before any hashing, when the queue is full.
   */
  async check(password: string, stored: string | null): Promise<boolean> {
    if (this.limit.activeCount + this.limit.pendingCount >= this.limit.concurrency + this.waiting) throw new PasswordChecksBusy();
    return this.limit(async () => {
      const matches = await passwordMatches(password, stored ?? UNMATCHABLE_HASH);
      return stored !== null && matches;
    });
  }
}

/** Why a new password is refused, or null. Length is what matters (NIST SP 800-63B), not character classes. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `a password needs at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `a password has at most ${MAX_PASSWORD_LENGTH} characters`;
  return null;
}

/** A password for a new account, shown once: 20 characters from a 57-letter alphabet (about 117 bits). */
export function generatePassword(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  const bytes = randomBytes(40);
  let out = '';
  for (const byte of bytes) {
    // Rejection sampling keeps every letter equally likely.
    if (byte < alphabet.length * Math.floor(256 / alphabet.length)) out += alphabet[byte % alphabet.length];
    if (out.length === 20) return out;
  }
  return out + generatePassword().slice(out.length);
}
