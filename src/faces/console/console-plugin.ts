import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import cookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { TokenIssuer } from '../../directory/auth/token-issuer.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import { problemFor } from '../http/plugins/errors.ts';
import type { OutageReporter } from '../http/dependency-errors.ts';
import { projectPath } from '../../platform/shared/project-files.ts';
import { FailureLimiter } from '../../platform/shared/rate-limiter.ts';
import { consolePage, type ConsolePageView } from './console-layout.ts';
import { consolePermits, type ConsoleAction } from './console-permissions.ts';
import { ConsoleQueues } from './console-queues.ts';
import { liveSession, type ConsoleSession, type SessionPolicy, type SignInGuards } from './console-user-service.ts';
import { html } from './html.ts';
import { passwordCost, PasswordChecks } from './password-hash.ts';
import { SignInThrottle } from './sign-in-throttle.ts';

export interface ConsoleDeps {
  config: Config;
  db: Database;
  redis: Redis;
  tokens: TokenIssuer;
  /** Where a page refused for an outage is reported (the process's health monitor, when it has one). */
  outages?: OutageReporter;
}

/** What every page module gets: the dependencies and the helpers that keep pages thin. */
export interface ConsoleContext {
  deps: ConsoleDeps;
  queues: ConsoleQueues;
  policy: SessionPolicy;
  /** The throttle, bounded password checks and device keys sign-in goes through. */
  signInGuards: SignInGuards;
  /** Renders a page in the console layout (with a fresh CSRF token for its forms). */
  page(request: FastifyRequest, reply: FastifyReply, view: ConsolePageView & { status?: number }): FastifyReply;
  /** The CSRF token for a form on the page being rendered. */
  csrfToken(request: FastifyRequest, reply: FastifyReply): string;
  /** The signed-in person (every non-public route has one). */
  session(request: FastifyRequest): ConsoleSession;
  /** Refuses with 403 unless the signed-in person's role allows the action. */
  requirePermission(request: FastifyRequest, action: ConsoleAction): ConsoleSession;
  /** After a POST: back to a page, with a line saying what happened (Post/Redirect/Get). */
  redirectWithNotice(reply: FastifyReply, location: string, notice: string): FastifyReply;
}

export type ConsolePageModule = (app: FastifyInstance, context: ConsoleContext) => void;

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession: ConsoleSession | null;
  }
  interface FastifyContextConfig {
    /** A console route anyone may reach: sign-in and the stylesheet. */
    consolePublic?: boolean;
    /**
     * A JSON API called by fetch from a page the console serves but did not write (the queues board),
     * which cannot carry the form token: its state-changing calls must come from the console's own
     * origin instead.
     */
    consoleSameOriginApi?: boolean;
    /**
     * A multipart upload: its form token arrives as a field of a body not yet read when the preHandler
     * runs, so the route reads the token first and checks it with verifyConsoleCsrfToken before any file byte.
     */
    consoleCsrfInMultipart?: boolean;
  }
}

/** `__Host-`: the browser accepts it only with Secure, Path=/ and no Domain, so no subdomain can plant one. */
export const SESSION_COOKIE = '__Host-console_session';
export const CSRF_COOKIE = '__Host-console_csrf';
/** A browser an account signed in on (see sign-in-device.ts): failures elsewhere do not hold it back. */
export const DEVICE_COOKIE = '__Host-console_device';
/** What the last action did, shown once on the page it redirected to. */
const NOTICE_COOKIE = '__Host-console_notice';
/** Form posts are a few fields; nothing larger is read. */
export const CONSOLE_FORM_LIMIT_BYTES = 16 * 1024;

/**
 * Pages are ours and carry no script: styles and images from here (charts are inline SVG), forms post
 * only back here, no framing.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const assetsDirectory = projectPath('src', 'faces', 'console', 'assets');

export class ConsoleRefusal extends Error {
  constructor(
    readonly status: 401 | 403,
    message: string,
  ) {
    super(message);
  }
  /** For error handlers that read `statusCode` (the queues board's). */
  get statusCode(): number {
    return this.status;
  }
}

/**
 * The browser says the request came from a page of this origin: fetch metadata where the browser sends
 * it, else an Origin header naming this very origin. A request with neither (a cross-site form, a
 * script elsewhere, a bare client) is not same-origin.
 */
export function isSameOriginRequest(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const origin = request.headers.origin;
  return origin !== undefined && origin === `${request.protocol}://${request.host}`;
}

/**
 * Checks a form token read by the route itself (a multipart upload's `_csrf` field) exactly as the
 * console's preHandler checks a form's: the same plugin, cookie secret and session binding. Only the
 * token given counts (no header fallback); a missing or wrong one rejects with the plugin's 403 error.
 */
export function verifyConsoleCsrfToken(app: FastifyInstance, request: FastifyRequest, token: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const withToken = Object.create(request, { body: { value: { _csrf: token } }, headers: { value: {} } }) as FastifyRequest;
    app.csrfProtection(withToken, { send: reject } as unknown as FastifyReply, () => resolve());
  });
}

/**
 * The operations console under /console: server-rendered pages for people, signed in with a
 * session cookie (never an API token), every form protected by a CSRF token bound to the session.
 */
export function registerConsole(pages: readonly ConsolePageModule[]) {
  return async function consolePlugin(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
    const { config } = deps;
    const policy: SessionPolicy = {
      idleMinutes: config.CONSOLE_SESSION_IDLE_MINUTES,
      maxHours: config.CONSOLE_SESSION_MAX_HOURS,
    };
    const signInGuards: SignInGuards = {
      throttle: new SignInThrottle(new FailureLimiter(deps.redis, config.QUEUE_PREFIX, config.CONSOLE_LOCKOUT_MINUTES * 60), {
        perAccountAndAddress: config.CONSOLE_LOCKOUT_FAILURES,
        perAddress: config.CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS,
        perAccount: config.CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT,
      }),
      // As many may wait as run four times over (a second or so at the default cost), the owner's browsers first and addresses in turn; then 503.
      passwords: new PasswordChecks(
        config.CONSOLE_PASSWORD_HASH_CONCURRENCY,
        4 * config.CONSOLE_PASSWORD_HASH_CONCURRENCY,
        passwordCost(config.CONSOLE_PASSWORD_SCRYPT_LOG_N),
      ),
      deviceKeys: deps.tokens.derivedSecrets('console device'),
    };
    const queues = new ConsoleQueues(config.REDIS_URL, config.QUEUE_PREFIX);
    app.addHook('onClose', async () => queues.close());

    await app.register(cookie);
    await app.register(csrfProtection, {
      cookieKey: CSRF_COOKIE,
      cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, secure: true },
      // A token is bound to the session it was issued in (the sign-in form's to none): a token lifted
      // from one session is refused in another.
      getUserInfo: (request: FastifyRequest) => request.consoleSession?.sessionId ?? 'signed-out',
      csrfOpts: { hmacKey: deps.tokens.derivedSecrets('console csrf')[0]! },
    });

    app.decorateRequest('consoleSession', null);

    app.addHook('onRequest', async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const token = request.cookies[SESSION_COOKIE];
      request.consoleSession = token ? await liveSession(deps.db, token, policy) : null;
      if (request.routeOptions.config.consolePublic || request.consoleSession) return;
      if (request.method === 'GET' || request.method === 'HEAD') {
        const next = request.url.startsWith('/console') ? request.url : '/console';
        return reply.redirect(`/console/sign-in?next=${encodeURIComponent(next)}`, 303);
      }
      throw new ConsoleRefusal(401, 'Your session has ended. Sign in again.');
    });

    // Every state-changing request carries the form's token; a missing or wrong one changes nothing.
    app.addHook('preHandler', (request, reply, done) => {
      if (request.method === 'GET' || request.method === 'HEAD') return done();
      if (request.routeOptions.config.consoleCsrfInMultipart) return done();
      if (request.routeOptions.config.consoleSameOriginApi) {
        return done(isSameOriginRequest(request) ? undefined : new ConsoleRefusal(403, 'This request did not come from a console page.'));
      }
      app.csrfProtection(request, reply, done);
    });

    app.addHook('onSend', async (request, reply, payload) => {
      if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
        reply.header('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY);
      }
      return payload;
    });

    // One token per response: a second generateCsrf on a first visit would set a second secret and
    // orphan the first token.
    const tokensIssued = new WeakMap<FastifyRequest, string>();
    const csrfToken = (request: FastifyRequest, reply: FastifyReply) => {
      let token = tokensIssued.get(request);
      if (token === undefined) {
        token = reply.generateCsrf({ userInfo: request.consoleSession?.sessionId ?? 'signed-out' });
        tokensIssued.set(request, token);
      }
      return token;
    };

    const context: ConsoleContext = {
      deps,
      queues,
      policy,
      signInGuards,
      csrfToken,
      page(request, reply, view) {
        const notice = view.notice ?? request.cookies[NOTICE_COOKIE];
        if (request.cookies[NOTICE_COOKIE] !== undefined) reply.clearCookie(NOTICE_COOKIE, { path: '/', httpOnly: true, secure: true, sameSite: 'strict' });
        const body = consolePage({ ...view, notice }, request.consoleSession, csrfToken(request, reply));
        return reply
          .code(view.status ?? 200)
          .type('text/html; charset=utf-8')
          .send(body.value);
      },
      session(request) {
        if (!request.consoleSession) throw new ConsoleRefusal(401, 'Your session has ended. Sign in again.');
        return request.consoleSession;
      },
      requirePermission(request, action) {
        const session = context.session(request);
        if (!consolePermits(session.role, action)) {
          throw new ConsoleRefusal(403, `Your role (${session.role}) cannot do this. Ask someone with the right role.`);
        }
        return session;
      },
      redirectWithNotice(reply, location, notice) {
        // A cookie, not the query string: a link someone sends cannot put words on a console page.
        reply.setCookie(NOTICE_COOKIE, notice.slice(0, 300), { path: '/', httpOnly: true, secure: true, sameSite: 'strict', maxAge: 60 });
        return reply.redirect(location, 303);
      },
    };

    app.setErrorHandler((error, request, reply) => {
      if (reply.sent || reply.raw.headersSent) {
        request.log.warn({ err: error }, 'console response failed after its headers were sent');
        return;
      }
      const refusal = error instanceof ConsoleRefusal ? error : null;
      const csrf = (error as { code?: string }).code?.startsWith('FST_CSRF_') ?? false;
      const problem = refusal || csrf ? null : problemFor(error as Error, request.log, deps.outages);
      const status = refusal?.status ?? (csrf ? 403 : problem!.status);
      const message = refusal
        ? refusal.message
        : csrf
          ? 'This form has expired or did not come from the console. Go back, reload the page and try again.'
          : (problem!.detail ?? problem!.title);
      return context.page(request, reply, {
        status,
        title: status === 401 ? 'Signed out' : status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status === 413 ? 'Too large' : 'Something went wrong',
        body: html`<p class="error" role="alert">${message}</p>${status === 401 ? html`<p><a href="/console/sign-in">Sign in</a></p>` : html`<p><a href="/console">Back to the overview</a></p>`}`,
      });
    });

    app.get('/assets/console.css', { config: { consolePublic: true } }, async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=3600')
        .type('text/css; charset=utf-8')
        .send(createReadStream(join(assetsDirectory, 'console.css'))),
    );

    for (const register of pages) register(app, context);
  };
}
