import { getNextMillis } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/config.ts';

function errorOf(env: Record<string, string>): string {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('configuration errors', () => {
  it('name the variable and show the value given', () => {
    expect(errorOf({ PORT: 'abc' })).toBe('Invalid configuration: PORT Invalid input: expected number, received NaN (got "abc")');
  });

  it('never show a connection URL’s password, even in a URL that does not parse', () => {
    const message = errorOf({ DATABASE_URL: 'postgres://app:s3cr3t-pw@db host/deductions' });
    expect(message).toMatch(/^Invalid configuration: DATABASE_URL /);
    expect(message).toContain('postgres://app:***@db host/deductions');
    expect(message).not.toContain('s3cr3t-pw');
    expect(errorOf({ REDIS_URL: 'redis://:hunter2@ bad' })).not.toContain('hunter2');
  });

  it('show a secret by its length only', () => {
    const message = errorOf({ AVAILABILITY_LOG_KEY: 'too-short-secret' });
    expect(message).toContain('(got 16 characters)');
    expect(message).not.toContain('too-short-secret');
  });

  it('refuse a console password cost below OWASP’s in production, and allow it elsewhere', () => {
    expect(errorOf({ NODE_ENV: 'production', CONSOLE_PASSWORD_SCRYPT_LOG_N: '14' })).toContain('CONSOLE_PASSWORD_SCRYPT_LOG_N must be at least 17 in production');
    expect(parseConfig({ NODE_ENV: 'test', CONSOLE_PASSWORD_SCRYPT_LOG_N: '14' }).CONSOLE_PASSWORD_SCRYPT_LOG_N).toBe(14);
    expect(parseConfig({}).CONSOLE_PASSWORD_SCRYPT_LOG_N).toBe(17);
  });

  it('read NIGHTLY_CRON as the job scheduler does: what BullMQ would refuse is refused at start-up, what it runs is accepted', () => {
    const patterns = ['0 1 * * *', '30 23 * * 1-5', '*/15 * * * *', '0 0 1 1 *', '0 0 29 2 *', '0 0 30 2 *', '61 * * * *', '0 25 * * *', 'every night', '* * * * * * *'];
    for (const pattern of patterns) {
      let schedulerRuns: boolean;
      try {
        schedulerRuns = getNextMillis(Date.now(), { pattern }) !== undefined;
      } catch {
        schedulerRuns = false;
      }
      const accepted = (() => {
        try {
          parseConfig({ NIGHTLY_CRON: pattern });
          return true;
        } catch (error) {
          if (error instanceof ConfigError) return false;
          throw error;
        }
      })();
      expect(accepted, pattern).toBe(schedulerRuns);
    }
    expect(errorOf({ NIGHTLY_CRON: '0 0 30 2 *' })).toContain('NIGHTLY_CRON is not a cron pattern');
  });
});
