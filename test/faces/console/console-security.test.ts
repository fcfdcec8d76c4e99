import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import type { RouteModule } from '../../../src/faces/http/app.ts';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../../src/faces/console/console-plugin.ts';
import { ConsoleBrowser, CONSOLE_PASSWORD, createConsoleUserOf, csrfTokenIn, signedInAs } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { BrowserAt, errorOf, sessionCookieOf } from './sign-in-from.ts';

// Every console route, found by watching the app register them (not a hand-kept list, which a new
// page could miss): each is refused without a session, each state change without a CSRF token.

interface ConsoleRoute {
  method: string;
  url: string;
  public: boolean;
  /** A fetch API of the queues board: protected by the same-origin rule instead of a form token. */
  sameOriginApi: boolean;
}
const consoleRoutes: ConsoleRoute[] = [];
const recordConsoleRoutes: RouteModule = (app) => {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!route.url.startsWith('/console')) return;
    for (const method of methods) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      // Read the route's config once registration is over: a later onRoute hook (the queues board's) may still set it.
      consoleRoutes.push({
        method,
        url: route.url,
        get public() {
          return Boolean((route.config as { consolePublic?: boolean } | undefined)?.consolePublic);
        },
        get sameOriginApi() {
          return Boolean((route.config as { consoleSameOriginApi?: boolean } | undefined)?.consoleSameOriginApi);
        },
      });
    }
  });
};

/** A concrete URL for a route pattern: any value reaches the session check, which runs before the handler. */
function concrete(url: string): string {
  return url
    .replace(/:(\w*[iI]d)\b/g, '019a7b2c-0000-7000-8000-000000000001')
    .replace(/:(\w*[dD]ate)\b/g, '2026-11-27')
    .replace(/:kind\b/g, 'nightly')
    .replace(/:(\w+)/g, 'x')
    .replace(/\*$/, 'index.html');
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ routeModules: [recordConsoleRoutes, ...composition.routes] });
});
afterAll(async () => t?.close());

const auditCount = async () =>
  Number(
    (
      await t.db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const privateRoutes = () => consoleRoutes.filter((route) => !route.public);
const actions = () => privateRoutes().filter((route) => route.method !== 'GET');

describe('console security', () => {
  it('registers the pages and actions this test walks', () => {
    expect(privateRoutes().filter((route) => route.method === 'GET').length).toBeGreaterThanOrEqual(15);
    expect(actions().filter((route) => route.sameOriginApi).length).toBeGreaterThanOrEqual(10);
    expect(actions().map((route) => route.url)).toContain('/console/sign-out');
    expect(
      consoleRoutes
        .filter((route) => route.public)
        .map((route) => `${route.method} ${route.url}`)
        .sort(),
    ).toEqual(['GET /console/assets/console.css', 'GET /console/sign-in', 'POST /console/sign-in']);
  });

  it('sends every page to sign-in without a session, or with a session token that is not one', async () => {
    for (const route of privateRoutes().filter((r) => r.method === 'GET')) {
      const url = concrete(route.url);
      for (const cookies of [{} as Record<string, string>, { '__Host-console_session': 'forged-token' }]) {
        const response = await t.app.inject({ method: 'GET', url, cookies });
        expect(response.statusCode, `GET ${url}`).toBe(303);
        expect(response.headers.location, `GET ${url}`).toBe(`/console/sign-in?next=${encodeURIComponent(url)}`);
      }
    }
  });

  it('refuses every action without a session, and changes nothing', async () => {
    const before = await auditCount();
    for (const route of actions()) {
      const url = concrete(route.url);
      const response = await t.app.inject({ method: route.method as 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'reason=x' });
      expect(response.statusCode, `${route.method} ${url}`).toBe(401);
    }
    expect(await auditCount()).toBe(before);
  });

  it('refuses every action of a signed-in operator whose CSRF token is missing, wrong, or from another session', async () => {
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const { browser: other } = await signedInAs(t.app, t.db, 'operator');
    const othersToken = csrfTokenIn(other.lastPage);
    const before = await auditCount();
    for (const route of actions()) {
      const url = concrete(route.url);
      for (const token of [undefined, 'wrong-token', othersToken]) {
        const payload = new URLSearchParams({ reason: 'test', ...(token ? { _csrf: token } : {}) }).toString();
        const response = await t.app.inject({
          method: route.method as 'POST',
          url,
          cookies: browser.cookies,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload,
        });
        expect(response.statusCode, `${route.method} ${url} with token ${token}`).toBe(403);
        // The read-only board refuses every change before asking where it came from.
        const refusal = route.sameOriginApi
          ? route.url.startsWith('/console/queues-read-only/')
            ? 'The read-only queues board changes nothing'
            : 'This request did not come from a console page'
          : 'This form has expired or did not come from the console';
        expect(response.body).toContain(refusal);
      }
    }
    expect(await auditCount()).toBe(before);
    // Still signed in: the refused sign-out did not sign anyone out.
    expect((await browser.get('/console')).statusCode).toBe(200);
  });

  it("refuses a sign-in post without the form's CSRF token (no signing a victim in to an attacker's account)", async () => {
    const user = await createConsoleUserOf(t.db, 'viewer');
    const response = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: user.email, password: CONSOLE_PASSWORD }).toString(),
    });
    expect(response.statusCode).toBe(403);
    expect(response.cookies.find((cookie) => cookie.name === '__Host-console_session')).toBeUndefined();
  });

  it('lets a viewer change nothing: every action but sign-out is 403 with a valid token', async () => {
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const before = await auditCount();
    for (const route of actions().filter((r) => r.url !== '/console/sign-out')) {
      const url = concrete(route.url);
      await browser.get('/console');
      const response = await browser.post(url, { reason: 'viewer tries' }, route.method as 'POST' | 'PUT' | 'DELETE', { 'sec-fetch-site': 'same-origin' });
      expect(response.statusCode, `${route.method} ${url}`).toBe(403);
    }
    expect(await auditCount()).toBe(before);
  });

  it('sets the session cookie HttpOnly, Secure, SameSite=Strict, host-only on path /, and the pages no-store under a strict policy', async () => {
    const user = await createConsoleUserOf(t.db, 'viewer');
    const browser = new ConsoleBrowser(t.app);
    const form = await browser.get('/console/sign-in');
    const signIn = await browser.post('/console/sign-in', { email: user.email, password: CONSOLE_PASSWORD });
    const setCookies = ([] as string[]).concat(form.headers['set-cookie'] ?? [], signIn.headers['set-cookie'] ?? []);
    const session = setCookies.find((cookie) => cookie.startsWith('__Host-console_session='));
    const csrf = setCookies.find((cookie) => cookie.startsWith('__Host-console_csrf='));
    for (const cookie of [session, csrf]) {
      expect(cookie).toBeDefined();
      const attributes = cookie!.split(';').map((part) => part.trim().toLowerCase());
      expect(attributes).toEqual(expect.arrayContaining(['httponly', 'secure', 'samesite=strict', 'path=/']));
      expect(attributes.some((attribute) => attribute.startsWith('domain='))).toBe(false);
    }
    const page = await browser.get('/console');
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['x-frame-options']).toBeDefined();
  });

  it('throttles wrong passwords where they come from, never the account: its owner signs in from elsewhere, from their own browser, and after the back-off', async () => {
    const user = await createConsoleUserOf(t.db, 'operator');
    const shared = '203.0.113.5';
    // The owner signed in on this browser before (it holds a device cookie), behind the address the attacker shares.
    const ownersBrowser = new BrowserAt(t.app, shared);
    expect((await ownersBrowser.signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(303);
    ownersBrowser.forgetSession();

    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await new BrowserAt(t.app, shared).signIn(user.email, `wrong password ${attempt}`)).statusCode).toBe(401);
    }
    // The attacker's address is held back for this account: even the right password is not checked.
    const held = await new BrowserAt(t.app, shared).signIn(user.email, CONSOLE_PASSWORD);
    expect(held.statusCode).toBe(429);
    expect(Number(held.headers['retry-after'])).toBeGreaterThan(0);
    expect(sessionCookieOf(held)).toBeUndefined();
    // An email nobody holds is held back alike, with the same words: being held back tells nothing.
    for (let attempt = 1; attempt <= 5; attempt++) expect((await new BrowserAt(t.app, shared).signIn('nobody@example.com', 'whatever password')).statusCode).toBe(401);
    const heldUnknown = await new BrowserAt(t.app, shared).signIn('nobody@example.com', 'whatever password');
    expect(heldUnknown.statusCode).toBe(429);
    expect(errorOf(heldUnknown.body)).toBe(errorOf(held.body));
    expect(errorOf(held.body)).toMatch(/^Too many failed sign-ins for this email from here/);

    // The owner is not locked out: from another address, and from their own browser behind the same address.
    expect((await new BrowserAt(t.app, '198.51.100.20').signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(303);
    expect((await ownersBrowser.signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(303);
    // Nor is the attacker's address once the back-off has passed.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 15 * 60_000);
      expect((await new BrowserAt(t.app, shared).signIn(user.email, CONSOLE_PASSWORD)).statusCode).toBe(303);
    } finally {
      vi.useRealTimers();
    }

    // Failures are audited with their cause; the refused-unchecked ones write nothing.
    const causes = await t.db
      .selectFrom('audit_log')
      .select(['after'])
      .where('resource_id', '=', user.id)
      .where('action', '=', 'console.sign_in_failed')
      .orderBy('at')
      .orderBy('id')
      .execute();
    expect(causes.map((entry) => (entry.after as { cause: string }).cause)).toEqual(Array(5).fill('wrong_password'));
  });

  it("sets a device cookie at sign-in that marks the owner's browser, HttpOnly, Secure, SameSite=Strict, host-only", async () => {
    const user = await createConsoleUserOf(t.db, 'viewer');
    const response = await new BrowserAt(t.app, '198.51.100.30').signIn(user.email, CONSOLE_PASSWORD);
    const device = ([] as string[]).concat(response.headers['set-cookie'] ?? []).find((cookie) => cookie.startsWith('__Host-console_device='));
    expect(device).toBeDefined();
    const attributes = device!.split(';').map((part) => part.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['httponly', 'secure', 'samesite=strict', 'path=/']));
    expect(attributes.some((attribute) => attribute.startsWith('domain='))).toBe(false);
    expect(attributes.some((attribute) => attribute.startsWith('max-age='))).toBe(true);
  });

  it('ends a session after its idle limit and at its absolute end', async () => {
    const { browser, user } = await signedInAs(t.app, t.db, 'viewer');
    await t.db
      .updateTable('console_sessions')
      .set({ last_seen_at: new Date(Date.now() - 31 * 60_000) })
      .where('user_id', '=', user.id)
      .execute();
    expect((await browser.get('/console')).statusCode).toBe(303);

    const { browser: second, user: secondUser } = await signedInAs(t.app, t.db, 'viewer');
    await t.db
      .updateTable('console_sessions')
      .set({ expires_at: new Date(Date.now() - 1_000) })
      .where('user_id', '=', secondUser.id)
      .execute();
    expect((await second.get('/console')).statusCode).toBe(303);
  });

  it('keeps the session token out of the database: only its SHA-256 is stored', async () => {
    const { browser, user } = await signedInAs(t.app, t.db, 'viewer');
    const token = browser.cookies['__Host-console_session']!;
    const stored = await t.db.selectFrom('console_sessions').select('token_hash').where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(stored.token_hash.toString('base64url')).not.toBe(token);
    expect(stored.token_hash.length).toBe(32);
  });

  it('sends a person back where they were going after sign-in, never off the console', async () => {
    const user = await createConsoleUserOf(t.db, 'viewer');
    const browser = new ConsoleBrowser(t.app);
    await browser.get('/console/sign-in?next=%2Fconsole%2Fruns');
    expect((await browser.post('/console/sign-in', { email: user.email, password: CONSOLE_PASSWORD, next: '/console/runs' })).headers.location).toBe('/console/runs');
    const elsewhere = new ConsoleBrowser(t.app);
    await elsewhere.get('/console/sign-in');
    expect((await elsewhere.post('/console/sign-in', { email: user.email, password: CONSOLE_PASSWORD, next: '//evil.example/console' })).headers.location).toBe('/console');
    // Dot segments are resolved as the browser would resolve them: out of the console is to the overview.
    for (const [next, location] of [
      ['/console/../../evil', '/console'],
      ['/console/%2e%2e/%2e%2e/evil', '/console'],
      ['/console/runs/../payouts', '/console/payouts'],
    ]) {
      const browser = new ConsoleBrowser(t.app);
      await browser.get(`/console/sign-in?next=${encodeURIComponent(next!)}`);
      expect(browser.lastPage).toContain(`name="next" value="${location}"`);
      expect((await browser.post('/console/sign-in', { email: user.email, password: CONSOLE_PASSWORD, next: next! })).headers.location, next).toBe(location);
    }
  });
});
