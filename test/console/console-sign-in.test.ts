import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertConsoleUser } from '../../src/console/console-user-repository.ts';
import { hashPassword } from '../../src/console/password-hash.ts';
import { CONSOLE_PASSWORD, createConsoleUserOf, signedInAs } from '../support/console.ts';
import { createBiller } from '../support/factories.ts';
import { fetchToken, startTestApp, type TestApp } from '../support/test-app.ts';
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
      form([['email', user.email], ['email', 'other@example.com'], ['password', CONSOLE_PASSWORD]]),
      form([['email', `${'a'.repeat(5_000)}@example.com`], ['password', CONSOLE_PASSWORD]]),
      form([['email', user.email], ['password', 'p'.repeat(1_025)]]),
      form([['email', user.email], ['password', CONSOLE_PASSWORD], ['password', CONSOLE_PASSWORD]]),
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

  it('keeps an unrelated API call fast during a burst of 30 sign-ins (no connection held while hashing, hashing bounded, the excess refused)', { timeout: 120_000 }, async () => {
    const biller = await createBiller(t.db);
    // Thirty real accounts with a password hashed at full cost (once, for the test's speed: the same hash will do).
    const passwordHash = await hashPassword(CONSOLE_PASSWORD);
    const victims = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const victim = await insertConsoleUser(t.db, { id: randomUUID(), email: `burst-${i}@example.com`, name: `Burst ${i}`, role: 'operator', passwordHash, createdBy: 'test' });
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
  });

  it("refuses a second guess at once while an address's sign-in is still being checked, but lets a person press Sign in twice", async () => {
    const user = await createConsoleUserOf(t.db, 'viewer');
    const browsers = Array.from({ length: 3 }, () => new BrowserAt(t.app, '198.18.3.1'));
    const tokens = await Promise.all(browsers.map((browser) => browser.formToken()));
    const answers = await Promise.all(browsers.map((browser, i) => browser.postSignIn(new URLSearchParams({ _csrf: tokens[i]!, email: user.email, password: CONSOLE_PASSWORD }).toString())));
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
});
