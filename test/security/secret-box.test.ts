import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/platform/config/config.ts';
import { isSealed, masterKeyFromBase64, SecretBox, secretBoxFor, SecretsKeyError } from '../../src/platform/shared/secret-box.ts';

const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const boxA = new SecretBox(masterKeyFromBase64(keyA));
const secret = 'whsec_c2VjcmV0LXRoYXQtbXVzdC1zdGF5LXNlY3JldC0xMjM0NTY=';

const scratch = mkdtempSync(path.join(tmpdir(), 'secret-box-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('SecretBox', () => {
  it('seals into text that holds nothing of the secret and opens back to it', () => {
    const sealed = boxA.seal(secret, 'webhook-endpoint-secret');
    expect(isSealed(sealed)).toBe(true);
    expect(sealed.startsWith(`sealed:v1:${boxA.currentKeyId}:`)).toBe(true);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(boxA.open(sealed, 'webhook-endpoint-secret')).toBe(secret);
  });

  it('seals the same secret differently each time (a data key and IV per value)', () => {
    expect(boxA.seal(secret, 'webhook-endpoint-secret')).not.toBe(boxA.seal(secret, 'webhook-endpoint-secret'));
  });

  it('refuses a sealed value that was altered, or used for another purpose', () => {
    const sealed = boxA.seal(secret, 'webhook-endpoint-secret');
    const parts = sealed.split(':');
    const payload = Buffer.from(parts[4]!, 'base64url');
    payload[payload.length - 20]! ^= 1;
    const altered = [...parts.slice(0, 4), payload.toString('base64url')].join(':');
    expect(() => boxA.open(altered, 'webhook-endpoint-secret')).toThrow(SecretsKeyError);
    expect(() => boxA.open(sealed, 'payroll-provider-client-secret')).toThrow(SecretsKeyError);
    expect(() => boxA.open('sealed:v1:abc:def', 'webhook-endpoint-secret')).toThrow(SecretsKeyError);
  });

  it('does not open a value sealed under a key it does not hold, and says which key is missing', () => {
    const sealed = boxA.seal(secret, 'webhook-endpoint-secret');
    const boxB = new SecretBox(masterKeyFromBase64(keyB));
    expect(() => boxB.open(sealed, 'webhook-endpoint-secret')).toThrow(new RegExp(boxA.currentKeyId));
  });

  it('rotates: a box with the new key and the old one as previous opens both, and re-wraps old values without re-encrypting them', () => {
    const old = boxA.seal(secret, 'payroll-provider-client-secret');
    const rotating = new SecretBox(masterKeyFromBase64(keyB), [masterKeyFromBase64(keyA)]);
    expect(rotating.open(old, 'payroll-provider-client-secret')).toBe(secret);
    expect(rotating.needsResealing(old)).toBe(true);

    const rewrapped = rotating.reseal(old, 'payroll-provider-client-secret');
    expect(rewrapped.split(':')[2]).toBe(rotating.currentKeyId);
    expect(rewrapped.split(':')[4]).toBe(old.split(':')[4]);
    expect(rotating.needsResealing(rewrapped)).toBe(false);
    expect(rotating.reseal(rewrapped, 'payroll-provider-client-secret')).toBe(rewrapped);
    // Once re-wrapped, the old key can go.
    expect(new SecretBox(masterKeyFromBase64(keyB)).open(rewrapped, 'payroll-provider-client-secret')).toBe(secret);
  });

  it('reads a value stored before encryption as it is, and seals it on reseal', () => {
    expect(boxA.open('legacy-plain-secret', 'payroll-provider-client-secret')).toBe('legacy-plain-secret');
    expect(boxA.needsResealing('legacy-plain-secret')).toBe(true);
    const sealed = boxA.reseal('legacy-plain-secret', 'payroll-provider-client-secret');
    expect(isSealed(sealed)).toBe(true);
    expect(boxA.open(sealed, 'payroll-provider-client-secret')).toBe('legacy-plain-secret');
  });

  it('takes only 32-byte keys', () => {
    expect(() => masterKeyFromBase64(randomBytes(16).toString('base64'))).toThrow(SecretsKeyError);
  });
});

describe('where the master key comes from', () => {
  it('is required in production: a missing SECRETS_KEY is a configuration error naming it', () => {
    expect(() => parseConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => parseConfig({ NODE_ENV: 'production' })).toThrow(/SECRETS_KEY is required in production/);
    expect(parseConfig({ NODE_ENV: 'production', SECRETS_KEY: keyA }).SECRETS_KEY).toBe(keyA);
  });

  it('refuses a malformed key without echoing it', () => {
    const almost = keyA.slice(0, 40);
    let message = '';
    try {
      parseConfig({ SECRETS_KEY: almost });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^Invalid configuration: SECRETS_KEY must be base64 of 32 random bytes/);
    expect(message).not.toContain(almost);
    expect(() => parseConfig({ SECRETS_PREVIOUS_KEYS: `${keyA},nope` })).toThrow(/SECRETS_PREVIOUS_KEYS/);
    expect(parseConfig({ SECRETS_PREVIOUS_KEYS: ` ${keyA} , ${keyB} ` }).SECRETS_PREVIOUS_KEYS).toEqual([keyA, keyB]);
  });

  it('uses SECRETS_KEY and SECRETS_PREVIOUS_KEYS when set', () => {
    const box = secretBoxFor(parseConfig({ SECRETS_KEY: keyB, SECRETS_PREVIOUS_KEYS: keyA }));
    expect(box.currentKeyId).toBe(masterKeyFromBase64(keyB).id);
    expect(box.open(boxA.seal(secret, 'webhook-endpoint-secret'), 'webhook-endpoint-secret')).toBe(secret);
  });

  it('outside production, generates a key file readable by its owner only, once, and keeps using it', () => {
    const file = path.join(scratch, 'nested', 'secrets-key');
    const config = parseConfig({ NODE_ENV: 'development', SECRETS_KEY_FILE: file });
    const first = secretBoxFor(config);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.currentKeyId).toBe(masterKeyFromBase64(readFileSync(file, 'utf8')).id);
    const sealed = first.seal(secret, 'webhook-endpoint-secret');
    // Another process (another config object) reads the same file and opens it.
    expect(secretBoxFor(parseConfig({ NODE_ENV: 'test', SECRETS_KEY_FILE: file })).open(sealed, 'webhook-endpoint-secret')).toBe(secret);
  });

  it('refuses a key file that others can read', () => {
    const file = path.join(scratch, 'loose-key');
    secretBoxFor(parseConfig({ SECRETS_KEY_FILE: file }));
    chmodSync(file, 0o644);
    expect(() => secretBoxFor(parseConfig({ SECRETS_KEY_FILE: file, SECRETS_PREVIOUS_KEYS: keyA }))).toThrow(/chmod 600/);
  });
});
