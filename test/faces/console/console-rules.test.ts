import { describe, expect, it } from 'vitest';
import { consolePermits, consoleRoles, type ConsoleAction } from '../../../src/faces/console/console-permissions.ts';
import { escapeHtml, html, trustedHtml } from '../../../src/faces/console/html.ts';
import {
  generatePassword,
  hashPassword,
  passwordMatches,
  PasswordChecks,
  PasswordChecksBusy,
  passwordProblem,
  type ScryptCost,
} from '../../../src/faces/console/password-hash.ts';
import { deviceTokenFor, trustedDeviceOf } from '../../../src/faces/console/sign-in-device.ts';
import { safeNextPath } from '../../../src/faces/console/sign-in-redirect.ts';
import {
  SIGN_IN_PRIORITY,
  signInAddressKey,
  signInBusyBuckets,
  signInCheckPlace,
  signInFailureBuckets,
  signInWaitSeconds,
} from '../../../src/faces/console/sign-in-throttle.ts';

const limits = { perAccountAndAddress: 5, perAddress: 20, perAccount: 100 };

describe('signInWaitSeconds', () => {
  it("waits as long as the longest of the attempt's own buckets: device, account from this address, this address", () => {
    expect(signInWaitSeconds({ accountAndAddress: 0, address: 0, account: 0, failedHereLately: 0 })).toBe(0);
    expect(signInWaitSeconds({ accountAndAddress: 180, address: 0, account: 0, failedHereLately: 900 })).toBe(180);
    expect(signInWaitSeconds({ accountAndAddress: 0, address: 45, account: 0, failedHereLately: 0 })).toBe(45);
    expect(signInWaitSeconds({ device: 180 })).toBe(180);
    expect(signInWaitSeconds({ device: 0 })).toBe(0);
  });

  it("holds back, for an account whose bucket is empty, only the addresses that failed for it lately: the owner's address is not held", () => {
    // The account under attack: an address that failed for it waits until that failure ages out...
    expect(signInWaitSeconds({ accountAndAddress: 0, address: 0, account: 9, failedHereLately: 600 })).toBe(600);
    // ...one that has not (the owner at work, or at home) is not held back at all.
    expect(signInWaitSeconds({ accountAndAddress: 0, address: 0, account: 9, failedHereLately: 0 })).toBe(0);
    // Having failed lately alone holds back nothing while the account's bucket lasts.
    expect(signInWaitSeconds({ accountAndAddress: 0, address: 0, account: 0, failedHereLately: 600 })).toBe(0);
  });
});

describe('signInFailureBuckets', () => {
  const attempt = { email: 'ops@example.com', address: '203.0.113.7', device: null };

  it('gives an unknown browser the account from its address, its address, the account, and whether it failed here (for the account, at all) lately', () => {
    const buckets = signInFailureBuckets(attempt, limits);
    expect(Object.keys(buckets).sort()).toEqual(['account', 'accountAndAddress', 'address', 'addressFailedLately', 'failedHereLately']);
    expect(buckets.addressFailedLately).toEqual({ key: 'console-sign-in:address-lately:203.0.113.7', capacity: 1 });
    expect(buckets.accountAndAddress!.capacity).toBe(5);
    expect(buckets.address).toEqual({ key: 'console-sign-in:address:203.0.113.7', capacity: 20 });
    expect(buckets.account!.capacity).toBe(100);
    expect(buckets.failedHereLately!.capacity).toBe(1);
    // The email is hashed: no email is kept in Redis, and keys have one length however long it is.
    for (const bucket of Object.values(buckets)) expect(bucket.key).not.toContain('ops@example.com');
  });

  it('keeps emails, addresses and devices apart, and counts an IPv6 caller by its /48 (a site), not its /64', () => {
    const keys = (a: typeof attempt) => Object.values(signInFailureBuckets(a, limits)).map((bucket) => bucket.key);
    expect(keys({ ...attempt, email: 'other@example.com' })).not.toEqual(keys(attempt));
    expect(keys({ ...attempt, address: '2001:db8:1:2::1' })).toEqual(keys({ ...attempt, address: '2001:db8:1:2:ffff::9' }));
    // A /56 or a whole /48 of /64s is one address: it cannot multiply its budget by its subnets.
    expect(keys({ ...attempt, address: '2001:db8:1:2::1' })).toEqual(keys({ ...attempt, address: '2001:db8:1:ff03::1' }));
    expect(keys({ ...attempt, address: '2001:db8:1:2::1' })).not.toEqual(keys({ ...attempt, address: '2001:db8:2:2::1' }));
    expect(keys({ ...attempt, address: '203.0.113.7' })).not.toEqual(keys({ ...attempt, address: '203.0.113.8' }));
  });

  it('names the network of an address: IPv4 as it is (mapped too), IPv6 by its /48', () => {
    expect(signInAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(signInAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(signInAddressKey('2001:db8:77:ff0b::1')).toBe('2001:db8:77::/48');
    expect(signInAddressKey('2001:0db8:0077:0000:0000:0000:0000:0001')).toBe('2001:db8:77::/48');
    expect(signInAddressKey('fe80::1%eth0')).toBe('fe80:0:0::/48');
  });

  it('spends a busy refusal against the address alone, and nothing of a browser the account signed in on', () => {
    const buckets = signInFailureBuckets(attempt, limits);
    expect(signInBusyBuckets(buckets)).toEqual([buckets.address, buckets.addressFailedLately]);
    expect(signInBusyBuckets(signInFailureBuckets({ ...attempt, device: 'AAAAAAAAAAAAAAAAAAAAAA' }, limits))).toEqual([]);
  });

  it("gives a browser the account signed in on a bucket of its own for the account and nothing else: others' failures cannot hold it back", () => {
    const buckets = signInFailureBuckets({ ...attempt, device: 'AAAAAAAAAAAAAAAAAAAAAA' }, limits);
    expect(Object.keys(buckets)).toEqual(['device']);
    expect(buckets.device!.capacity).toBe(5);
    expect(buckets.device!.key).toContain('AAAAAAAAAAAAAAAAAAAAAA');
  });
});

describe('signInCheckPlace', () => {
  const attempt = { email: 'ops@example.com', address: '2001:db8:5:6::1', device: null };

  it("puts a browser the account signed in on first, taking turns with the account's other browsers, whatever its address did", () => {
    const place = signInCheckPlace({ ...attempt, device: 'AAAAAAAAAAAAAAAAAAAAAA' }, { device: 0 });
    expect(place.priority).toBe(SIGN_IN_PRIORITY.trustedDevice);
    expect(signInCheckPlace({ ...attempt, address: '198.51.100.1', device: 'BBBBBBBBBBBBBBBBBBBBBB' }, { device: 0 })).toEqual(place);
    expect(signInCheckPlace({ ...attempt, email: 'fiona@example.com', device: 'AAAAAAAAAAAAAAAAAAAAAA' }, { device: 0 }).group).not.toBe(place.group);
  });

  it('puts an address that has not failed lately before one that has, each address (network) taking its turn', () => {
    const quiet = signInCheckPlace(attempt, { address: 0, addressFailedLately: 0 });
    const failing = signInCheckPlace(attempt, { address: 0, addressFailedLately: 600 });
    expect(quiet).toEqual({ priority: SIGN_IN_PRIORITY.quietAddress, group: 'address:2001:db8:5::/48' });
    expect(failing).toEqual({ priority: SIGN_IN_PRIORITY.failingAddress, group: 'address:2001:db8:5::/48' });
    expect(SIGN_IN_PRIORITY.trustedDevice).toBeLessThan(SIGN_IN_PRIORITY.quietAddress);
    expect(SIGN_IN_PRIORITY.quietAddress).toBeLessThan(SIGN_IN_PRIORITY.failingAddress);
    // The email plays no part: unknown and real accounts wait alike.
    expect(signInCheckPlace({ ...attempt, email: 'nobody@example.com' }, { addressFailedLately: 0 })).toEqual(quiet);
  });
});

describe('device tokens', () => {
  const key = Buffer.alloc(32, 1);
  const previous = Buffer.alloc(32, 2);

  it('name the device for the email they were issued for, under the current or a previous key', () => {
    const token = deviceTokenFor([key], 'ops@example.com');
    const id = trustedDeviceOf([key], token, 'ops@example.com');
    expect(id).toMatch(/^[\w-]{22}$/);
    expect(token.startsWith(`${id}.`)).toBe(true);
    expect(trustedDeviceOf([key, previous], deviceTokenFor([previous], 'ops@example.com', id!), 'ops@example.com')).toBe(id);
    // A device keeps its id when its token is issued again.
    expect(trustedDeviceOf([key], deviceTokenFor([key], 'ops@example.com', id!), 'ops@example.com')).toBe(id);
  });

  it("trust nothing else: another account's token, a changed tag or id, another key, garbage", () => {
    const token = deviceTokenFor([key], 'ops@example.com');
    const [id, tag] = token.split('.') as [string, string];
    expect(trustedDeviceOf([key], token, 'fiona@example.com')).toBeNull();
    expect(trustedDeviceOf([key], `${id}.${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`, 'ops@example.com')).toBeNull();
    expect(trustedDeviceOf([key], `${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}.${tag}`, 'ops@example.com')).toBeNull();
    expect(trustedDeviceOf([previous], token, 'ops@example.com')).toBeNull();
    // The tag's last character carries two spare bits: a spelling that decodes to the same bytes is refused too.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = `${tag.slice(0, -1)}${alphabet[alphabet.indexOf(tag.at(-1)!) ^ 1]}`;
    expect(Buffer.from(sameBytes, 'base64url')).toEqual(Buffer.from(tag, 'base64url'));
    expect(trustedDeviceOf([key], `${id}.${sameBytes}`, 'ops@example.com')).toBeNull();
    for (const garbage of [undefined, '', '.', 'x.y', `${token}.x`, `${id}.${tag}=`]) expect(trustedDeviceOf([key], garbage, 'ops@example.com')).toBeNull();
  });
});

describe('PasswordChecks', () => {
  const cheap: ScryptCost = { N: 1024, r: 8, p: 1 };

  it('runs at most `concurrency` checks at once, lets `waiting` more queue, and refuses any further at once', async () => {
    const stored = await hashPassword('correct horse battery staple', cheap);
    const checks = new PasswordChecks(1, 2);
    const accepted = [checks.check('correct horse battery staple', stored), checks.check('wrong', stored), checks.check('wrong', stored)];
    expect(checks.load).toEqual({ running: 1, waiting: 2 });
    await expect(checks.check('correct horse battery staple', stored)).rejects.toBeInstanceOf(PasswordChecksBusy);
    expect(await Promise.all(accepted)).toEqual([true, false, false]);
    // The queue drained: checks are accepted again.
    expect(checks.load).toEqual({ running: 0, waiting: 0 });
    expect(await checks.check('correct horse battery staple', stored)).toBe(true);
  });

  /** Starts checks at their places, in the order given; says in which order they ran, and which were refused busy. */
  async function runAll(checks: PasswordChecks, places: Array<[name: string, priority: number, group: string]>) {
    const stored = await hashPassword('correct horse battery staple', cheap);
    const ran: string[] = [];
    const refused: string[] = [];
    await Promise.all(
      places.map(([name, priority, group]) =>
        checks.check('wrong', stored, { priority, group }).then(
          () => void ran.push(name),
          (error: unknown) => {
            expect(error).toBeInstanceOf(PasswordChecksBusy);
            refused.push(name);
          },
        ),
      ),
    );
    return { ran, refused };
  }

  it('takes the waiting checks by priority, then round-robin between groups: one group sending many waits its turn', async () => {
    const { ran, refused } = await runAll(new PasswordChecks(1, 8), [
      ['running', 2, 'flood'],
      ['flood 1', 2, 'flood'],
      ['flood 2', 2, 'flood'],
      ['flood 3', 2, 'flood'],
      ['other', 2, 'other'],
      ['quiet', 1, 'home'],
      ['owner', 0, 'account'],
    ]);
    expect(refused).toEqual([]);
    expect(ran).toEqual(['running', 'owner', 'quiet', 'flood 1', 'other', 'flood 2', 'flood 3']);
  });

  it('gives a full queue to a check that comes first, or to a group with two fewer waiting, at the expense of the last-come of the longest group', async () => {
    const { ran, refused } = await runAll(new PasswordChecks(1, 3), [
      ['running', 2, 'a'],
      ['a1', 2, 'a'],
      ['a2', 2, 'a'],
      ['a3', 2, 'a'],
      // Full. b has none waiting, a three: b takes a3's place.
      ['b1', 2, 'b'],
      // a has two waiting, b one: a may not take its own place back.
      ['a4', 2, 'a'],
      // c has none, a two: c takes a2's place.
      ['c1', 2, 'c'],
      // One each: nobody gives up a place to d at its priority...
      ['d1', 2, 'd'],
      // ...but a check that comes first takes the place of the last-come of the longest group there.
      ['owner', 0, 'account'],
      // A check that comes last never takes another's place.
      ['late', 3, 'e'],
    ]);
    expect(refused).toEqual(['a3', 'a4', 'a2', 'd1', 'c1', 'late']);
    expect(ran).toEqual(['running', 'owner', 'a1', 'b1']);
  });

  it('checks a password without a stored hash (unknown or disabled account) at full cost, and never accepts it', async () => {
    const checks = new PasswordChecks(2, 8);
    const real = await hashPassword('correct horse battery staple');
    const timed = async (stored: string | null) => {
      const start = performance.now();
      const matches = await checks.check('correct horse battery staple', stored);
      return { matches, ms: performance.now() - start };
    };
    const withAccount = await timed(real);
    const withoutAccount = await timed(null);
    expect(withAccount.matches).toBe(true);
    expect(withoutAccount.matches).toBe(false);
    expect(withoutAccount.ms).toBeGreaterThan(withAccount.ms / 2);
  });
});

describe('consolePermits', () => {
  const actions: ConsoleAction[] = [
    'rerun',
    'retry_job',
    'redeliver_webhook',
    'settle_payout',
    'download_bank_file',
    'import_statement',
    'match_credit',
    'import_deduction_return',
  ];
  const expected: Record<(typeof consoleRoles)[number], ConsoleAction[]> = {
    operator: ['rerun', 'retry_job', 'redeliver_webhook', 'download_bank_file', 'import_statement', 'match_credit', 'import_deduction_return'],
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

  it.each([
    ['/console/./runs', '/console/runs'],
    ['/console/runs/../payouts?status=paid', '/console/payouts?status=paid'],
  ])('resolves dot segments as a browser does: %s is %s', (next, kept) => expect(safeNextPath(next)).toBe(kept));

  it.each([
    undefined,
    '',
    'https://evil.example/console',
    '//evil.example/console',
    '/console//evil.example',
    '/consoleevil',
    '/docs',
    '/console\\..\\x',
    '/console/ x',
    'console',
    '/console/../../evil',
    '/console/..',
    '/console/../docs',
    '/console/%2e%2e/evil',
    '/console/.%2E/evil',
    '/console/runs/../../evil?x=/console',
  ])('sends %s to the overview', (next) => expect(safeNextPath(next)).toBe('/console'));
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
