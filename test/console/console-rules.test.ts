import { describe, expect, it } from 'vitest';
import { consolePermits, consoleRoles, type ConsoleAction } from '../../src/console/console-permissions.ts';
import { escapeHtml, html, trustedHtml } from '../../src/console/html.ts';
import { generatePassword, hashPassword, passwordMatches, passwordProblem, type ScryptCost } from '../../src/console/password-hash.ts';
import { safeNextPath } from '../../src/console/sign-in-redirect.ts';
import { afterFailedSignIn, isLockedOut, type AccountLockState } from '../../src/console/sign-in-lockout.ts';

const policy = { failures: 5, lockMinutes: 15 };
const t0 = new Date('2026-11-24T10:00:00Z');
const minutes = (n: number) => new Date(t0.getTime() + n * 60_000);

describe('afterFailedSignIn and isLockedOut', () => {
  it('locks at exactly the policy limit, for exactly the lock time', () => {
    for (let limit = 1; limit <= 8; limit++) {
      let state: AccountLockState = { failedSignIns: 0, lockedUntil: null };
      for (let failure = 1; failure <= limit; failure++) {
        expect(isLockedOut(state, t0)).toBe(false);
        state = afterFailedSignIn(state, t0, { failures: limit, lockMinutes: 15 });
        expect(state.failedSignIns).toBe(failure);
      }
      expect(state.lockedUntil).toEqual(minutes(15));
      expect(isLockedOut(state, minutes(14.99))).toBe(true);
      expect(isLockedOut(state, minutes(15))).toBe(false);
    }
  });

  it('does not extend a lock for failures while locked', () => {
    const locked = { failedSignIns: 5, lockedUntil: minutes(15) };
    for (const at of [0, 1, 7, 14.9]) expect(afterFailedSignIn(locked, minutes(at), policy)).toBe(locked);
  });

  it('starts counting again after a lock has run out: one more failure does not lock at once', () => {
    const expired = { failedSignIns: 5, lockedUntil: minutes(15) };
    expect(afterFailedSignIn(expired, minutes(16), policy)).toEqual({ failedSignIns: 1, lockedUntil: null });
  });
});

describe('consolePermits', () => {
  const actions: ConsoleAction[] = ['rerun', 'retry_job', 'redeliver_webhook', 'settle_payout', 'download_bank_file', 'import_statement', 'match_credit'];
  const expected: Record<(typeof consoleRoles)[number], ConsoleAction[]> = {
    operator: ['rerun', 'retry_job', 'redeliver_webhook', 'download_bank_file', 'import_statement', 'match_credit'],
    finance: ['settle_payout', 'download_bank_file', 'import_statement', 'match_credit'],
    viewer: [],
  };
  it.each(consoleRoles)('%s may do exactly its actions', (role) => {
    expect(actions.filter((action) => consolePermits(role, action))).toEqual(expected[role]);
  });
});

describe('html', () => {
  it('escapes every interpolated string, nests Html, joins arrays, drops null/false', () => {
    const name = `<script>alert("x")</script>&'`;
    expect(html`<p title="${name}">${name}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
    );
    expect(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value).toBe('<ul><li>a&lt;</li><li>b</li></ul>');
    expect(html`${null}${undefined}${false}${0}${trustedHtml('<b>')}`.value).toBe('0<b>');
    expect(escapeHtml('plain')).toBe('plain');
  });
});

describe('safeNextPath', () => {
  it.each([
    ['/console', '/console'],
    ['/console/runs?kind=nightly', '/console/runs?kind=nightly'],
    ['/console/payouts/1#items', '/console/payouts/1#items'],
  ])('keeps the console path %s', (next, kept) => expect(safeNextPath(next)).toBe(kept));

  it.each([undefined, '', 'https://evil.example/console', '//evil.example/console', '/console//evil.example', '/consoleevil', '/docs', '/console\\..\\x', '/console/ x', 'console'])(
    'sends %s to the overview',
    (next) => expect(safeNextPath(next)).toBe('/console'),
  );
});

describe('passwords', () => {
  const cheap: ScryptCost = { N: 1024, r: 8, p: 1 };

  it('verifies the right password only, and reads the cost from the hash', async () => {
    const stored = await hashPassword('correct horse battery staple', cheap);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await passwordMatches('correct horse battery staple', stored)).toBe(true);
    expect(await passwordMatches('correct horse battery stapl', stored)).toBe(false);
    expect(await passwordMatches('correct horse battery staple', stored.replace('scrypt$1024', 'scrypt$2048'))).toBe(false);
    expect(await passwordMatches('x', 'sha256$abc')).toBe(false);
    expect(await passwordMatches('x', 'scrypt$0$8$1$AAAA$AAAA')).toBe(false);
    // The same password hashes differently each time (salted).
    expect(await hashPassword('correct horse battery staple', cheap)).not.toBe(stored);
  });

  it('refuses short and overlong passwords, by length only', () => {
    expect(passwordProblem('a'.repeat(11))).toMatch(/at least 12/);
    expect(passwordProblem('a'.repeat(12))).toBeNull();
    expect(passwordProblem('a'.repeat(1_025))).toMatch(/at most/);
  });

  it('generates 20-character passwords from an unambiguous alphabet that pass the rule', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const password = generatePassword();
      expect(password).toMatch(/^[A-HJ-NP-Za-km-z2-9]{20}$/);
      expect(passwordProblem(password)).toBeNull();
      seen.add(password);
    }
    expect(seen.size).toBe(200);
  });
});
