import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey, requestFingerprint } from '../../../src/platform/idempotency/idempotency-service.ts';

const KEY = '7d3c1f2a-9b4e-4c1d-8a5f-0e6b2c3d4e5f';

describe('parseIdempotencyKey', () => {
  it('accepts a bare UUID', () => {
    expect(parseIdempotencyKey(KEY)).toBe(KEY);
  });

  it('accepts the quoted form of the IETF draft', () => {
    expect(parseIdempotencyKey(`"${KEY}"`)).toBe(KEY);
  });

  it('normalises case and surrounding whitespace so one key is one key', () => {
    expect(parseIdempotencyKey(KEY.toUpperCase())).toBe(KEY);
    expect(parseIdempotencyKey(`  "${KEY.toUpperCase()}"  `)).toBe(KEY);
  });

  it('takes the first value of a repeated header', () => {
    expect(parseIdempotencyKey([KEY, 'not-a-uuid'])).toBe(KEY);
  });

  it('treats an absent or blank header as no key (undefined)', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('')).toBeUndefined();
    expect(parseIdempotencyKey('   ')).toBeUndefined();
  });

  it.each([
    'not-a-uuid',
    '12345',
    KEY.slice(0, -1),
    `${KEY}0`,
    KEY.replaceAll('-', ''),
    `{${KEY}}`,
    `"${KEY}`,
    `${KEY}"`,
    `'${KEY}'`,
    `""${KEY}""`,
    `${KEY}, ${KEY}`,
    'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  ])('rejects a non-UUID key %j (null)', (value) => {
    expect(parseIdempotencyKey(value)).toBeNull();
  });
});

describe('requestFingerprint', () => {
  const body = JSON.stringify({ name: 'widget' });
  const base = requestFingerprint('POST', '/test/widgets', body);

  it('is deterministic and a sha-256 hex digest', () => {
    expect(requestFingerprint('POST', '/test/widgets', body)).toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs by method', () => {
    expect(requestFingerprint('PUT', '/test/widgets', body)).not.toBe(base);
  });

  it('differs by url, including the query string', () => {
    expect(requestFingerprint('POST', '/test/notes', body)).not.toBe(base);
    expect(requestFingerprint('POST', '/test/widgets?x=1', body)).not.toBe(base);
  });

  it('differs by body, down to the exact bytes sent', () => {
    expect(requestFingerprint('POST', '/test/widgets', JSON.stringify({ name: 'gadget' }))).not.toBe(base);
    expect(requestFingerprint('POST', '/test/widgets', JSON.stringify({ name: 'widget' }, null, 2))).not.toBe(base);
    expect(requestFingerprint('POST', '/test/widgets', undefined)).not.toBe(base);
  });

  it('cannot be forged by moving text between url and body', () => {
    expect(requestFingerprint('POST', '/a', 'b')).not.toBe(requestFingerprint('POST', '/a\nb', ''));
  });

  it('treats a missing body like an empty one', () => {
    expect(requestFingerprint('POST', '/x', undefined)).toBe(requestFingerprint('POST', '/x', ''));
  });
});
