import { createHmac, randomBytes } from 'node:crypto';
import { ConfigError, type Config } from '../../platform/config/config.ts';

/**
 * The key of the lookup log's HMAC. National registration numbers are few enough (two letters, six
 * digits, a letter) to be tried one by one against a plain hash, so the log keys its hash with a
 * secret from configuration. Production must set it, or lookups of one person could not be linked
 * across processes and restarts; elsewhere a random key per process stands in.
 */
export function lookupLogKey(config: Pick<Config, 'AVAILABILITY_LOG_KEY' | 'NODE_ENV'>): { key: Buffer; configured: boolean } {
  if (config.AVAILABILITY_LOG_KEY) return { key: Buffer.from(config.AVAILABILITY_LOG_KEY, 'utf8'), configured: true };
  if (config.NODE_ENV === 'production') {
    throw new ConfigError('Invalid configuration: AVAILABILITY_LOG_KEY is required in production (missing)');
  }
  return { key: randomBytes(32), configured: false };
}

/** How the log names a person: hex HMAC-SHA256 of the normalised national registration number. */
export function nationalRegistrationNumberHmac(key: Buffer, normalisedNumber: string): string {
  return createHmac('sha256', key).update(normalisedNumber, 'utf8').digest('hex');
}
