import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contentDigestSha256 } from '../../../src/faces/http/content-digest.ts';

const body = 'payroll_reference,given_name\nW1,Jane\n';
const hex = createHash('sha256').update(body).digest('hex');
const base64 = createHash('sha256').update(body).digest('base64');

describe('contentDigestSha256', () => {
  it.each([
    ['absent', undefined, undefined],
    ['the sha-256 member', `sha-256=:${base64}:`, hex],
    ['any case, spaces around', ` SHA-256 = :${base64}: `, hex],
    ['beside another algorithm', `sha-512=:${'A'.repeat(86)}==:, sha-256=:${base64}:`, hex],
    ['repeated header lines', ['id-sha-256=:x:', `sha-256=:${base64}:`], hex],
    ['no sha-256 member', 'sha-512=:abcd:', null],
    ['hex instead of base64', `sha-256=:${hex}:`, null],
    ['without the colons (RFC 3230 Digest style)', `sha-256=${base64}`, null],
    ['a digest of the wrong length', `sha-256=:${Buffer.alloc(20).toString('base64')}:`, null],
    ['empty', '', null],
  ] as const)('%s', (_case, header, expected) => {
    expect(contentDigestSha256(header as string | string[] | undefined)).toBe(expected);
  });
});
