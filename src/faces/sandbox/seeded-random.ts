/**
 * A small deterministic random source for the sandbox directory: the same seed gives the same
 * directory on every machine and Node version, which Math.random and crypto cannot promise.
 * Not for anything secret.
 */
export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** One value, chosen with the given relative weights. */
  weighted<T>(choices: ReadonlyArray<readonly [T, number]>): T;
  /** A version 4 UUID made of seeded bits. */
  uuid(): string;
}

/** cyrb53-style string hash, folded to 32 bits: spreads similar seeds ('demo', 'demo2') apart. */
function hashSeed(seed: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < seed.length; i++) {
    const code = seed.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 ^ h2) >>> 0;
}

export function seededRandom(seed: number | string): SeededRandom {
  // mulberry32: tiny, fast and well distributed for test data.
  let state = hashSeed(String(seed));
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => {
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max < min) {
      throw new RangeError(`Expected integers min <= max, got ${min} and ${max}`);
    }
    return min + Math.floor(next() * (max - min + 1));
  };
  const pick = <T>(items: readonly T[]): T => {
    if (items.length === 0) throw new RangeError('Cannot pick from an empty list');
    return items[int(0, items.length - 1)] as T;
  };
  const weighted = <T>(choices: ReadonlyArray<readonly [T, number]>): T => {
    const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = next() * total;
    for (const [value, weight] of choices) {
      roll -= weight;
      if (roll < 0) return value;
    }
    const last = choices[choices.length - 1];
    if (last === undefined) throw new RangeError('Cannot choose from an empty list');
    return last[0];
  };
  const uuid = (): string => {
    const bytes = Array.from({ length: 16 }, () => int(0, 255));
    bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
    bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
    const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
  return { next, int, pick, weighted, uuid };
}
