import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Console passwords are chosen by people, so they are hashed with a memory-hard function: Node's
// scrypt at OWASP's recommended cost (N=2^17, r=8, p=1). The cost travels in the hash, so raising it
// later leaves existing hashes verifiable.

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

export const PASSWORD_COST: ScryptCost = passwordCost(17);

/** The cost at N=2^logN (CONSOLE_PASSWORD_SCRYPT_LOG_N), r=8, p=1. */
export function passwordCost(logN: number): ScryptCost {
  return { N: 2 ** logN, r: 8, p: 1 };
}
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
 * A hash no password matches, at the cost new hashes get: checking a password against it takes as
 * long as against a real account's, so an unknown or disabled account answers no sooner than a real
 * one. Its key is all zeros, which scrypt does not give for any password one could find.
 */
function unmatchableHash(cost: ScryptCost): string {
  return ['scrypt', cost.N, cost.r, cost.p, Buffer.alloc(SALT_BYTES).toString('base64url'), Buffer.alloc(KEY_BYTES).toString('base64url')].join('$');
}

/** No room for this sign-in among those waiting for a password check (or it gave up its place to one that comes first). */
export class PasswordChecksBusy extends Error {
  constructor() {
    super('too many sign-ins are waiting for a password check');
  }
}

/**
 * Where a password check waits: `priority` first (lower is sooner), then its `group`'s turn among the
 * groups waiting at that priority, round-robin (one check for each group in turn, however many one
 * group sends).
 */
export interface CheckPlace {
  priority: number;
  group: string;
}

interface Waiter {
  readonly place: CheckPlace;
  start(): void;
  refuse(error: PasswordChecksBusy): void;
}

/**
 * Checks sign-in passwords a few at a time. scrypt already runs off the event loop, in libuv's
 * threadpool (4 threads unless UV_THREADPOOL_SIZE says otherwise), but other work queues in that same
 * pool: WebCrypto (signing access tokens), file reads, DNS lookups. So sign-ins may take only
 * `concurrency` of its threads, and only `waiting` more may wait for one.
 *
 * Waiting is not first come, first served, which would let whoever sends the most keep everyone else
 * out (issue 31, item 3): a check waits by its place (see CheckPlace), and when every waiting place
 * is taken, a newcomer takes the place of the last-come check of the group with the most waiting,
 * of the lowest priority waiting, when that is lower than its own, or the same priority and that
 * group has at least two more waiting than the newcomer's own. Otherwise the newcomer is refused.
 * Either way, the one left out is refused at once (PasswordChecksBusy) rather than left to wait
 * without end. So a check of the first priority is never refused while any other waits, and a group
 * that sends many gets no more than its turn.
 */
export class PasswordChecks {
  private running = 0;
  private waitingCount = 0;
  /** Waiting checks by priority, then by group; a Map keeps its groups in turn order. */
  private readonly lanes = new Map<number, Map<string, Waiter[]>>();

  private readonly unmatchable: string;

  constructor(
    private readonly concurrency: number,
    private readonly waiting: number,
    /** The cost new hashes get (CONSOLE_PASSWORD_SCRYPT_LOG_N): an account's absence is checked at it. */
    cost: ScryptCost = PASSWORD_COST,
  ) {
    this.unmatchable = unmatchableHash(cost);
  }

  /** Checks running and waiting now (for tests and figures). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waitingCount };
  }

  /**
   * Whether the password matches the stored hash. Without one (an unknown or disabled account) it is
   * checked against a hash no password matches, at the same cost: every answer takes as long.
   * Rejects with PasswordChecksBusy, before any hashing, when there is no place for it or its place
   * is given to a check that comes first.
   */
  async check(password: string, stored: string | null, place: CheckPlace = { priority: 0, group: '' }): Promise<boolean> {
    await this.turn(place);
    try {
      const matches = await passwordMatches(password, stored ?? this.unmatchable);
      return stored !== null && matches;
    } finally {
      this.next();
    }
  }

  private turn(place: CheckPlace): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waitingCount >= this.waiting) {
      const victim = this.victimFor(place);
      if (!victim) return Promise.reject(new PasswordChecksBusy());
      this.remove(victim);
      victim.refuse(new PasswordChecksBusy());
    }
    return new Promise<void>((resolve, reject) => {
      const lane = this.lanes.get(place.priority) ?? new Map<string, Waiter[]>();
      this.lanes.set(place.priority, lane);
      const queue = lane.get(place.group);
      const waiter: Waiter = { place, start: resolve, refuse: reject };
      if (queue) queue.push(waiter);
      else lane.set(place.group, [waiter]);
      this.waitingCount++;
    });
  }

  /** A check ended: its thread goes to the next waiting check (first priority, that priority's next group), or is freed. */
  private next(): void {
    for (const priority of [...this.lanes.keys()].sort((a, b) => a - b)) {
      const lane = this.lanes.get(priority)!;
      const first = lane.entries().next();
      if (first.done) continue;
      const [group, queue] = first.value;
      const waiter = queue.shift()!;
      // The group's turn is over: to the back of the round, if it has more waiting.
      lane.delete(group);
      if (queue.length > 0) lane.set(group, queue);
      if (lane.size === 0) this.lanes.delete(priority);
      this.waitingCount--;
      waiter.start();
      return;
    }
    this.running--;
  }

  /** The waiting check a newcomer at `place` may take the place of, if any (see the class). */
  private victimFor(place: CheckPlace): Waiter | undefined {
    const lowest = Math.max(...this.lanes.keys());
    if (lowest < place.priority) return undefined;
    const lane = this.lanes.get(lowest)!;
    let longest: Waiter[] = [];
    // Ties go to the group latest in turn: the one whose checks would wait longest anyway.
    for (const queue of lane.values()) if (queue.length >= longest.length) longest = queue;
    if (lowest === place.priority && longest.length < (lane.get(place.group)?.length ?? 0) + 2) return undefined;
    return longest.at(-1);
  }

  private remove(waiter: Waiter): void {
    const lane = this.lanes.get(waiter.place.priority)!;
    const queue = lane.get(waiter.place.group)!;
    queue.splice(queue.indexOf(waiter), 1);
    if (queue.length === 0) lane.delete(waiter.place.group);
    if (lane.size === 0) this.lanes.delete(waiter.place.priority);
    this.waitingCount--;
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
