import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { cliActor } from '../../src/platform/audit/audit-service.ts';
import type { Database } from '../../src/platform/db/connection.ts';
import type { ConsoleRole } from '../../src/faces/console/console-permissions.ts';
import { createConsoleUser } from '../../src/faces/console/console-user-service.ts';
import { passwordCost } from '../../src/faces/console/password-hash.ts';

export const CONSOLE_PASSWORD = 'correct horse battery staple';
/** The tests' scrypt cost: CONSOLE_PASSWORD_SCRYPT_LOG_N as test/vitest.config.ts and test-app set it. */
export const TEST_PASSWORD_COST = passwordCost(14);

/** A console user of the role, with CONSOLE_PASSWORD; the email is unique per call. */
export async function createConsoleUserOf(db: Database, role: ConsoleRole, email = `${role}-${Math.random().toString(36).slice(2, 10)}@example.com`) {
  return createConsoleUser(db, cliActor('test'), { email, name: `${role[0]!.toUpperCase()}${role.slice(1)} Person`, role, password: CONSOLE_PASSWORD }, TEST_PASSWORD_COST);
}

/** The `_csrf` value of the first form on a page. */
export function csrfTokenIn(page: string): string {
  const token = page.match(/name="_csrf" value="([^"]+)"/)?.[1];
  if (!token) throw new Error('no CSRF token on the page');
  return token;
}

/** Cookies a response set, as name -> value (a cleared cookie maps to ''). */
export function cookiesSetBy(response: LightMyRequestResponse): Record<string, string> {
  return Object.fromEntries(response.cookies.map((cookie) => [cookie.name, cookie.value]));
}

/**
 * A browser stand-in over app.inject: keeps cookies, posts forms with the CSRF token of the page it
 * last loaded (or the overview's), and never follows redirects (tests read them).
 */
export class ConsoleBrowser {
  readonly cookies: Record<string, string> = {};
  lastPage = '';

  constructor(private readonly app: FastifyInstance) {}

  private remember(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) delete this.cookies[cookie.name];
      else this.cookies[cookie.name] = cookie.value;
    }
    if (String(response.headers['content-type'] ?? '').startsWith('text/html')) this.lastPage = response.body;
    return response;
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.remember(await this.app.inject({ method: 'GET', url, cookies: this.cookies }));
  }

  /** A form post; `_csrf` defaults to the token of the last page loaded (loading the overview first if none). */
  async post(
    url: string,
    fields: Record<string, string> = {},
    method: 'POST' | 'PUT' | 'DELETE' = 'POST',
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    if (!('_csrf' in fields) && !/name="_csrf"/.test(this.lastPage)) await this.get('/console');
    const body = new URLSearchParams({ _csrf: csrfTokenIn(this.lastPage), ...fields }).toString();
    return this.remember(
      await this.app.inject({ method, url, cookies: this.cookies, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: body }),
    );
  }

  async signIn(email: string, password = CONSOLE_PASSWORD): Promise<LightMyRequestResponse> {
    await this.get('/console/sign-in');
    return this.post('/console/sign-in', { email, password });
  }
}

/** A browser already signed in as a new user of the role. */
export async function signedInAs(app: FastifyInstance, db: Database, role: ConsoleRole) {
  const user = await createConsoleUserOf(db, role);
  const browser = new ConsoleBrowser(app);
  const response = await browser.signIn(user.email);
  if (response.statusCode !== 303) throw new Error(`sign-in as ${role} answered ${response.statusCode}`);
  await browser.get('/console');
  return { browser, user };
}

/** A page's error summary (a refused form shown again): its heading, and each reason with the field it links to. */
export function refusalIn(page: string): { heading: string; reasons: Array<{ text: string; field: string | null }> } | undefined {
  const summary = page.match(/<div class="error-summary"[^>]*>(.*?)<\/div>/s)?.[1];
  if (summary === undefined) return undefined;
  const decode = (text: string) => text.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
  const reasons = [...summary.matchAll(/<li>(?:<a href="#([^"]+)">(.*?)<\/a>|(.*?))<\/li>/gs)].map((item) => ({
    text: decode(item[2] ?? item[3] ?? ''),
    field: item[1] ?? null,
  }));
  return { heading: decode(summary.match(/<h2[^>]*>(.*?)<\/h2>/s)?.[1] ?? ''), reasons };
}
