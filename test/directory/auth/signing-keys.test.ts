import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader, exportPKCS8, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenIssuer } from '../../../src/directory/auth/token-issuer.ts';
import { ConfigError } from '../../../src/platform/config/config.ts';

const options = { issuer: 'urn:test', audience: 'urn:test:api', ttlSeconds: 3600 };
let dir: string;
let n = 0;
const keyPath = () => join(dir, `key-${n++}.pem`);

async function writeKey(mode: number): Promise<string> {
  const file = keyPath();
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  writeFileSync(file, await exportPKCS8(privateKey), { mode: 0o600 });
  chmodSync(file, mode);
  return file;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'signing-keys-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('signing-key rotation', () => {
  it('keeps verifying the previous key’s tokens, lists both keys, and signs new tokens with the current one', async () => {
    const active = keyPath();
    const before = await TokenIssuer.fromKeyFile(active, options);
    const oldToken = await before.issue({ clientId: 'c1', scopes: ['payments:read'] });

    // The documented rotation: the key moves to the previous-key file, a new one is made in its place.
    const previous = keyPath();
    renameSync(active, previous);
    const rotated = await TokenIssuer.fromKeyFile(active, options, previous);

    expect(rotated.jwks.keys.map((key) => key.kid)).toEqual([rotated.kid, before.kid]);
    expect(rotated.kid).not.toBe(before.kid);
    expect(rotated.jwks.keys.every((key) => key.d === undefined && key.alg === 'ES256' && key.use === 'sig')).toBe(true);

    expect(await rotated.verify(oldToken)).toMatchObject({ clientId: 'c1', scopes: ['payments:read'] });
    const newToken = await rotated.issue({ clientId: 'c2', scopes: [] });
    expect(decodeProtectedHeader(newToken).kid).toBe(rotated.kid);
    expect((await rotated.verify(newToken)).clientId).toBe('c2');

    // Once the previous key is dropped, its tokens stop verifying.
    const after = await TokenIssuer.fromKeyFile(active, options);
    expect(after.jwks.keys).toHaveLength(1);
    await expect(after.verify(oldToken)).rejects.toThrow();
    expect((await after.verify(newToken)).clientId).toBe('c2');
  });

  it('derives per-purpose secrets from the keys, current first, so paging cursors survive the rotation', async () => {
    const previous = await writeKey(0o600);
    const current = await writeKey(0o600);
    const old = await TokenIssuer.fromKeyFile(previous, options);
    const rotated = await TokenIssuer.fromKeyFile(current, options, previous);
    const alone = await TokenIssuer.fromKeyFile(current, options);
    const [currentSecret, previousSecret] = rotated.derivedSecrets('paging cursors');
    expect(currentSecret).toEqual(alone.derivedSecrets('paging cursors')[0]);
    expect(previousSecret).toEqual(old.derivedSecrets('paging cursors')[0]);
    expect(currentSecret).not.toEqual(rotated.derivedSecrets('something else')[0]);
    expect(currentSecret).toHaveLength(32);
  });

  it('refuses a previous key file that is missing or holds the current key', async () => {
    const current = await writeKey(0o600);
    await expect(TokenIssuer.fromKeyFile(current, options, join(dir, 'absent.pem'))).rejects.toThrow(
      new ConfigError(`AUTH_PREVIOUS_SIGNING_KEY_FILE ${join(dir, 'absent.pem')} does not exist`),
    );
    await expect(TokenIssuer.fromKeyFile(current, options, current)).rejects.toThrow(/holds the same key as AUTH_SIGNING_KEY_FILE/);
  });
});

describe('key file mode', () => {
  for (const mode of [0o644, 0o640, 0o604, 0o620, 0o660]) {
    it(`refuses a signing key of mode ${mode.toString(8)} with a ConfigError naming the fix`, async () => {
      const file = await writeKey(mode);
      const attempt = TokenIssuer.fromKeyFile(file, options);
      await expect(attempt).rejects.toBeInstanceOf(ConfigError);
      await expect(attempt).rejects.toThrow(`AUTH_SIGNING_KEY_FILE ${file} is open to group or others (mode 0${mode.toString(8)}); restrict it with: chmod 600 ${file}`);
    });
  }

  it('accepts 0600 and 0400, and creates a missing key as 0600', async () => {
    await expect(TokenIssuer.fromKeyFile(await writeKey(0o600), options)).resolves.toBeInstanceOf(TokenIssuer);
    await expect(TokenIssuer.fromKeyFile(await writeKey(0o400), options)).resolves.toBeInstanceOf(TokenIssuer);
    await expect(TokenIssuer.fromKeyFile(join(dir, 'new', 'key.pem'), options)).resolves.toBeInstanceOf(TokenIssuer);
  });

  it('checks the previous key file too', async () => {
    const previous = await writeKey(0o644);
    await expect(TokenIssuer.fromKeyFile(await writeKey(0o600), options, previous)).rejects.toThrow(
      /^AUTH_PREVIOUS_SIGNING_KEY_FILE .* is open to group or others \(mode 0644\)/,
    );
  });

  it('stops `deductions serve` with that one line and the configuration exit code', async () => {
    const file = await writeKey(0o644);
    const bin = new URL('../../../bin/deductions.mjs', import.meta.url).pathname;
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [bin, 'serve'], {
        env: { ...process.env, AUTH_SIGNING_KEY_FILE: file, LOG_LEVEL: 'silent', PORT: '0', QUEUE_PREFIX: `test-${crypto.randomUUID()}` },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(run.stderr.trim()).toBe(`AUTH_SIGNING_KEY_FILE ${file} is open to group or others (mode 0644); restrict it with: chmod 600 ${file}`);
    expect(run.code).toBe(78);
  });
});
