import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// Client secrets and API keys are 256-bit random values we generate, never user-chosen passwords,
// so a fast SHA-256 digest is a sound hash: there is nothing to brute-force from a dictionary.

export function generateSecret(prefix: 'cs' | 'ak'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function secretMatches(secret: string, expectedHash: string): boolean {
  const actual = Buffer.from(hashSecret(secret), 'hex');
  const expected = Buffer.from(expectedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Enough of a key to recognise it in a listing without revealing it. */
export function keyPrefix(apiKey: string): string {
  return apiKey.slice(0, 10);
}
