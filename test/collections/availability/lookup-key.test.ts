import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lookupLogKey, nationalRegistrationNumberHmac } from '../../../src/collections/availability/lookup-key.ts';
import { ConfigError } from '../../../src/platform/config/config.ts';

const KEY = 'a-key-of-at-least-thirty-two-characters!';

describe('lookupLogKey', () => {
  it('uses AVAILABILITY_LOG_KEY when set, in any environment', () => {
    for (const NODE_ENV of ['production', 'development', 'test'] as const) {
      const { key, configured } = lookupLogKey({ AVAILABILITY_LOG_KEY: KEY, NODE_ENV });
      expect(configured).toBe(true);
      expect(nationalRegistrationNumberHmac(key, 'QQ123456C')).toBe(createHmac('sha256', KEY).update('QQ123456C').digest('hex'));
    }
  });

  it('refuses to start in production without it', () => {
    expect(() => lookupLogKey({ AVAILABILITY_LOG_KEY: undefined, NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => lookupLogKey({ AVAILABILITY_LOG_KEY: undefined, NODE_ENV: 'production' })).toThrow(/AVAILABILITY_LOG_KEY/);
  });

  it('elsewhere stands in a random key: stable within the process, different in the next', () => {
    const first = lookupLogKey({ AVAILABILITY_LOG_KEY: undefined, NODE_ENV: 'development' });
    const second = lookupLogKey({ AVAILABILITY_LOG_KEY: undefined, NODE_ENV: 'development' });
    expect(first.configured).toBe(false);
    expect(first.key).toHaveLength(32);
    expect(nationalRegistrationNumberHmac(first.key, 'QQ123456C')).toBe(nationalRegistrationNumberHmac(first.key, 'QQ123456C'));
    expect(nationalRegistrationNumberHmac(first.key, 'QQ123456C')).not.toBe(nationalRegistrationNumberHmac(second.key, 'QQ123456C'));
  });
});

describe('nationalRegistrationNumberHmac', () => {
  it('is 64 hex characters that differ per number and hold none of it', () => {
    const key = Buffer.from(KEY);
    const a = nationalRegistrationNumberHmac(key, 'QQ123456C');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toContain('123456');
    expect(nationalRegistrationNumberHmac(key, 'QQ123457C')).not.toBe(a);
  });
});
