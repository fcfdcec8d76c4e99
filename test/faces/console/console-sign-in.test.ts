import { randomBytes, randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertConsoleUser } from '../../../src/faces/console/console-user-repository.ts';
import { signIn, type SignInGuards, type SignInOutcome } from '../../../src/faces/console/console-user-service.ts';
import { hashPassword, PasswordChecks } from '../../../src/faces/console/password-hash.ts';
import { SignInThrottle } from '../../../src/faces/console/sign-in-throttle.ts';
import { FailureLimiter } from '../../../src/platform/shared/rate-limiter.ts';
import { CONSOLE_PASSWORD, createConsoleUserOf, signedInAs } from '../../support/console.ts';
import { createBiller } from '../../support/factories.ts';
import { fetchToken, startTestApp, type TestApp } from '../../support/test-app.ts';
import { BrowserAt, errorOf, sessionCookieOf } from './sign-in-from.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const start = performance.now();
  const result = await work();
  return { ms: performance.now() - start, result };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Attackers looping wrong sign-ins at unknown emails, one loop per address, each load of the form and
 * post as fast as answers come (ten milliseconds after a refusal, a round trip over a network),
 * until stopped. Tallies every answer by address and status.
 */
function flood(app: TestApp['app'], addresses: readonly string[]) {
  let stopped = false;
  const tallies = new Map<string, Record<number, number>>(addresses.map((address) => [address, {}]));
  const loops = addresses.map(async (address, i) => {
    const tally = tallies.get(address)!;
    for (let n = 0; !stopped; n++) {
      const answer = await new BrowserAt(app, address).signIn(`flood-${i}-${n}@example.com`, `guess ${n}`);
      tally[answer.statusCode] = (tally[answer.statusCode] ?? 0) + 1;
      if (answer.statusCode !== 401) await sleep(10);
    }
  });
  const total = () => {
    const sum: Record<number, number> = {};
    for (const tally of tallies.values()) for (const [status, n] of Object.entries(tally)) sum[Number(status)] = (sum[Number(status)] ?? 0) + n;
    return sum;
  };
  return {
    tallies,
    total,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return total();
    },
  };
}

/** Signs in until 303 (a 503 retried after its Retry-After), at most `tries` times: the statuses seen and the time each took. */
async function signInUntilIn(browser: BrowserAt, email: string, tries: number) {
  const seen: Array<{ status: number; ms: number }> = [];
  for (let i = 0; i < tries; i++) {
    const { ms, result } = await timed(() => browser.signIn(email, CONSOLE_PASSWORD));
    seen.push({ status: result.statusCode, ms: Math.round(ms) });
    if (result.statusCode === 303) break;
    await sleep(1_000 * Number(result.headers['retry-after'] ?? 1));
  }
  return seen;
}

describe('console sign-in', () => {
  it('signs a person in with a session cookie and out again', async () => {
    const { browser, user } = await signedInAs(t.app, t.db, 'viewer');
    const overview = await browser.get('/console');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('Viewer Person (viewer)');
    const out = await browser.post('/console/sign-out');
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/console/sign-in');
    expect((await browser.get('/console')).statusCode).toBe(303);
    const actions = await t.db.selectFrom('audit_log').select(['action', 'actor_kind', 'actor']).where('resource_id', '=', user.id).orderBy('at').execute();
    expect(actions.map((a) => a.action)).toEqual(['console_user.created', 'console.signed_in', 'console.signed_out']);
    expect(actions[1]).toMatchObject({ actor_kind: 'console', actor: user.email });
  });

  it('answers 400 to a malformed sign-in form (a repeated or overlong field) before anything is checked', async () => {
    const user = await createConsoleUserOf(t.db, 'viewer');
    const browser = new BrowserAt(t.app, '192.0.2.200');
    const form = (fields: Array<[string, string]>) => async () => new URLSearchParams([['_csrf', await browser.formToken()], ...fields]).toString();
    const malformed = [
      form([
        ['email', user.email],
        ['email', 'other@example.com'],
        ['password', CONSOLE_PASSWORD],
      ]),
      form([
        ['email', `${'a'.repeat(5_000)}@example.com`],
        ['password', CONSOLE_PASSWORD],
      ]),
      form([
        ['email', user.email],
        ['password', 'p'.repeat(1_025)],
      ]),
      form([
        ['email', user.email],
        ['password', CONSOLE_PASSWORD],
        ['password', CONSOLE_PASSWORD],
      ]),
    ];
    for (const body of malformed) {
      const response = await browser.postSignIn(await body());
      expect(response.statusCode).toBe(400);
      expect(errorOf(response.body)).toMatch(/^The sign-in form was not sent as the console sends it/);
      expect(response.body).toContain('<form method="post" action="/console/sign-in"');
      expect(sessionCookieOf(response)).toBeUndefined();
    }
    const audited = await t.db.selectFrom('audit_log').select('action').where('resource_id', '=', user.id).where('action', '!=', 'console_user.created').execute();
    expect(audited).toEqual([]);
  });

  it('takes as long for an unknown, a disabled or an invalid email as for a real account (medians of 6)', { timeout: 120_000 }, async () => {
    const real = await createConsoleUserOf(t.db, 'viewer');
    const disabled = await createConsoleUserOf(t.db, 'viewer');
    await t.db.updateTable('console_users').set({ disabled_at: new Date() }).where('id', '=', disabled.id).execute();
    const kinds = {
      real: () => real.email,
      unknown: (i: number) => `nobody-${i}@example.com`,
      disabled: () => disabled.email,
      invalid: (i: number) => `not an email ${i}`,
    };
    const times: Record<keyof typeof kinds, number[]> = { real: [], unknown: [], disabled: [], invalid: [] };
    for (let i = 0; i < 6; i++) {
      // Interleaved, so drift in the machine's load falls on every kind alike; one address per try, so no try is held back.
      for (const [kind, email] of Object.entries(kinds) as Array<[keyof typeof kinds, (i: number) => string]>) {
        const browser = new BrowserAt(t.app, `192.0.2.${i + 1}`);
        const token = await browser.formToken();
        const { ms, result } = await timed(() => browser.postSignIn(new URLSearchParams({ _csrf: token, email: email(i), password: `wrong password ${i}` }).toString()));
        expect(result.statusCode, kind).toBe(401);
        times[kind].push(ms);
      }
    }
    const medians = Object.fromEntries(Object.entries(times).map(([kind, ms]) => [kind, Math.round(median(ms))]));
    console.log(`sign-in medians (ms): ${JSON.stringify(medians)}`);
    for (const kind of ['unknown', 'disabled', 'invalid'] as const) {
      expect(medians[kind]! / medians.real!, kind).toBeGreaterThan(0.5);
      expect(medians[kind]! / medians.real!, kind).toBeLessThan(2);
    }
  });

  it(
    'keeps an unrelated API call fast during a burst of 30 sign-ins (no connection held while hashing, hashing bounded, the excess refused)',
    { timeout: 120_000 },
    async () => {
      const biller = await createBiller(t.db);
      // Thirty real accounts with a password hashed at full cost (once, for the test's speed: the same hash will do).
      const passwordHash = await hashPassword(CONSOLE_PASSWORD);
      const victims = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const victim = await insertConsoleUser(t.db, {
            id: randomUUID(),
            email: `burst-${i}@example.com`,
            name: `Burst ${i}`,
            role: 'operator',
            passwordHash,
            createdBy: 'test',
          });
          return victim!;
        }),
      );
      const probes: Record<string, () => Promise<unknown>> = {
        token: () => fetchToken(t.app, biller),
        readiness: async () => {
          const response = await t.app.inject({ method: 'GET', url: '/readyz' });
          expect(response.statusCode).toBe(200);
        },
      };
      for (const [name, probe] of Object.entries(probes)) {
        const quiet = await timed(probe);
        // Thirty addresses, each guessing at its own account: what one attacker with a few addresses sends at once.
        const attackers = victims.map((victim, i) => ({ victim, browser: new BrowserAt(t.app, `198.18.${name === 'token' ? 1 : 2}.${i + 1}`) }));
        const forms = await Promise.all(attackers.map(async (attacker) => ({ ...attacker, token: await attacker.browser.formToken() })));
        const burst = Promise.all(
          forms.map(({ victim, browser, token }, i) => browser.postSignIn(new URLSearchParams({ _csrf: token, email: victim.email, password: `guess ${i}` }).toString())),
        );
        const loop = monitorEventLoopDelay({ resolution: 10 });
        loop.enable();
        await new Promise((resolve) => setTimeout(resolve, 50));
        const during = await timed(probe);
        const answers = await burst;
        loop.disable();
        const loopMs = (ns: number) => Math.round(ns / 1e6);
        console.log(
          `${name}: ${Math.round(quiet.ms)} ms quiet, ${Math.round(during.ms)} ms during a burst of 30 sign-ins; event loop delay p99 ${loopMs(loop.percentile(99))} ms, max ${loopMs(loop.max)} ms`,
        );
        expect(during.ms, `${name} during the burst`).toBeLessThan(500);
        // The burst was a burst: what the bounded hashing could not take at once was refused at once, to be retried.
        const statuses = answers.map((answer) => answer.statusCode);
        expect(new Set(statuses)).toEqual(new Set([401, 503]));
        for (const refused of answers.filter((answer) => answer.statusCode === 503)) {
          expect(refused.headers['retry-after']).toBe('1');
          expect(errorOf(refused.body)).toBe('The console is busy signing people in. Try again in a moment.');
        }
      }
    },
  );

  it("refuses a second guess at once while an address's sign-in is still being checked, but lets a person press Sign in twice", async () => {
    const user = await createConsoleUserOf(t.db, 'viewer');
    const browsers = Array.from({ length: 3 }, () => new BrowserAt(t.app, '198.18.3.1'));
    const tokens = await Promise.all(browsers.map((browser) => browser.formToken()));
    const answers = await Promise.all(
      browsers.map((browser, i) => browser.postSignIn(new URLSearchParams({ _csrf: tokens[i]!, email: user.email, password: CONSOLE_PASSWORD }).toString())),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([303, 303, 429]);
  });
});

describe('console sign-in with an account under attack from many addresses', () => {
  let small: TestApp;
  beforeAll(async () => {
    // Small limits, so that a few addresses use up the account's bucket.
    small = await startTestApp({ env: { CONSOLE_LOCKOUT_FAILURES: '2', CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT: '4' } });
  });
  afterAll(async () => small?.close());

  it('holds back the addresses that failed, gives each new one a single guess, and still lets the owner in from anywhere else', async () => {
    const user = await createConsoleUserOf(small.db, 'operator');
    for (const address of ['100.64.0.1', '100.64.0.2']) {
      for (let attempt = 1; attempt <= 2; attempt++) expect((await new BrowserAt(small.app, address).signIn(user.email, `guess ${attempt}`)).statusCode).toBe(401);
    }
    // The account's bucket is empty: an address that failed waits, with the right password too.
    expect((await new BrowserAt(small.app, '100.64.0.1').signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(429);
    // A fresh address gets one guess, then waits (its own bucket of 2 is not empty yet: the account's rule holds it).
    expect((await new BrowserAt(small.app, '100.64.0.3').signIn(user.email, 'guess 3')).statusCode).toBe(401);
    expect((await new BrowserAt(small.app, '100.64.0.3').signIn(user.email, 'guess 4')).statusCode).toBe(429);
    // The owner, from an address that has not failed, on a browser never used before: signed in.
    expect((await new BrowserAt(small.app, '100.64.0.9').signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(303);
  });

  it('counts a sign-in refused busy against its address, so an address that keeps the checks busy is soon held back with 429', async () => {
    // One password check at a time and no room to wait: while one runs (a full-cost check, some 300 ms), every other sign-in is busy.
    const passwords = new PasswordChecks(1, 0);
    const limiter = new FailureLimiter(small.redis, `${small.config.QUEUE_PREFIX}-busy`, 15 * 60);
    const guards: SignInGuards = {
      throttle: new SignInThrottle(limiter, { perAccountAndAddress: 5, perAddress: 3, perAccount: 100 }),
      passwords,
      deviceKeys: [randomBytes(32)],
    };
    const running = passwords.check('someone else', null);
    const outcomes: SignInOutcome[] = [];
    for (let i = 0; i < 4; i++) {
      const client = { address: '2001:db8:65:1::1', userAgent: null, deviceToken: undefined };
      outcomes.push(await signIn(small.db, guards, { email: `more-${i}@example.com`, password: 'guess' }, client, { idleMinutes: 30, maxHours: 12 }));
    }
    await running;
    // Three refusals spend the address's three failures: then it waits, refused before it reaches the checks, from any /64 of its /48.
    expect(outcomes.map((outcome) => (outcome.ok ? 'signed in' : outcome.refusal))).toEqual(['busy', 'busy', 'busy', 'throttled']);
    const held = await signIn(
      small.db,
      guards,
      { email: 'someone@example.com', password: 'guess' },
      { address: '2001:db8:65:2::1', userAgent: null, deviceToken: undefined },
      { idleMinutes: 30, maxHours: 12 },
    );
    expect(held).toMatchObject({ ok: false, refusal: 'throttled' });
    expect((held as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(60);
  });
});

describe('console sign-in through a flood of wrong sign-ins (issue 31, item 3: no 503 for everyone)', () => {
  it('keeps letting the owner in while 12 /64s of one /56 loop wrong sign-ins, and holds that network back with 429 (default limits)', { timeout: 60_000 }, async () => {
    const user = await createConsoleUserOf(t.db, 'operator');
    // The owner signed in on this browser before (it holds a device cookie), in the very network the flood comes from.
    const ownersBrowser = new BrowserAt(t.app, '2001:db8:77:ff0c::1');
    expect((await ownersBrowser.signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(303);
    ownersBrowser.forgetSession();

    const attackers = Array.from({ length: 12 }, (_, i) => `2001:db8:77:ff${i.toString(16).padStart(2, '0')}::1`);
    const attack = flood(t.app, attackers);
    await sleep(300);
    // The owner's own browser, three times over.
    const owner: Array<{ status: number; ms: number }> = [];
    for (let i = 0; i < 3; i++) {
      owner.push(...(await signInUntilIn(ownersBrowser, user.email, 1)));
      ownersBrowser.forgetSession();
    }
    // The owner on a browser never used before, from an address that has not failed.
    const fresh = await signInUntilIn(new BrowserAt(t.app, '192.0.2.177'), user.email, 3);
    // Every sign-in the flood sends now is refused unchecked, from its /64s and from the rest of its network.
    const heldBack = async () => {
      const probe = await new BrowserAt(t.app, '2001:db8:77:ff80::1').signIn('someone@example.com', 'guess');
      return probe.statusCode === 429 && Number(probe.headers['retry-after']) > 1;
    };
    for (const deadline = Date.now() + 20_000; !(await heldBack()) && Date.now() < deadline;) await sleep(200);
    // What had passed the throttle before it held the network back finishes (two in flight at most)...
    let before = attack.total();
    for (let settled = false, deadline = Date.now() + 10_000; !settled && Date.now() < deadline;) {
      await sleep(500);
      const now = attack.total();
      settled = now[401] === before[401] && now[503] === before[503];
      before = now;
    }
    // ...then nothing more gets through.
    await sleep(500);
    const totals = await attack.stop();
    console.log(
      `flood from one /56: owner with device cookie ${JSON.stringify(owner)}; owner from a new address ${JSON.stringify(fresh)}; attackers' answers ${JSON.stringify(totals)}`,
    );

    expect(owner.map((o) => o.status)).toEqual(Array(3).fill(303));
    expect(fresh.at(-1)!.status).toBe(303);
    expect(fresh.length).toBeLessThanOrEqual(2);
    expect(await heldBack()).toBe(true);
    // Once held back, nothing the flood sent was checked or queued: no 401, no 503.
    expect((totals[401] ?? 0) - (before[401] ?? 0)).toBe(0);
    expect((totals[503] ?? 0) - (before[503] ?? 0)).toBe(0);
    // The network's budget bounds what it had checked or refused busy (20 a window), give or take what was in flight.
    expect((totals[401] ?? 0) + (totals[503] ?? 0)).toBeLessThanOrEqual(20 + 2);
  });
});

describe('console sign-in through a flood from more networks than any budget holds back', () => {
  let roomy: TestApp;
  beforeAll(async () => {
    // Budgets that never run out: an attacker with enough networks (a few hundred) to keep every password check busy.
    roomy = await startTestApp({ env: { CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: '10000', CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT: '100000' } });
  });
  afterAll(async () => roomy?.close());

  it("checks the owner's password first: from a browser they signed in on every time, from a new address at once", { timeout: 60_000 }, async () => {
    const user = await createConsoleUserOf(roomy.db, 'operator');
    // The owner's browser shares its address with one of the flood's (a NAT): its device cookie is what sets it apart.
    const ownersBrowser = new BrowserAt(roomy.app, '203.0.113.1');
    expect((await ownersBrowser.signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(303);
    ownersBrowser.forgetSession();

    // Twelve networks: six IPv4 addresses and six IPv6 /48s, more sign-ins at once than the checks take.
    const attackers = [...Array.from({ length: 6 }, (_, i) => `203.0.113.${i + 1}`), ...Array.from({ length: 6 }, (_, i) => `2001:db8:${(0xa0 + i).toString(16)}::1`)];
    const attack = flood(roomy.app, attackers);
    await sleep(300);
    const owner: Array<{ status: number; ms: number }> = [];
    for (let i = 0; i < 4; i++) {
      owner.push(...(await signInUntilIn(ownersBrowser, user.email, 1)));
      ownersBrowser.forgetSession();
    }
    const fresh = await signInUntilIn(new BrowserAt(roomy.app, '192.0.2.178'), user.email, 3);
    const totals = await attack.stop();
    console.log(
      `flood from 12 networks: owner with device cookie ${JSON.stringify(owner)}; owner from a new address ${JSON.stringify(fresh)}; attackers' answers ${JSON.stringify(totals)}`,
    );

    // The flood did fill the checks: some of it was refused busy.
    expect(totals[503] ?? 0).toBeGreaterThan(0);
    expect(owner.map((o) => o.status)).toEqual(Array(4).fill(303));
    expect(fresh.map((o) => o.status)).toEqual([303]);
  });
});
