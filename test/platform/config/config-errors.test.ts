import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/platform/config/config.ts';

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
});
