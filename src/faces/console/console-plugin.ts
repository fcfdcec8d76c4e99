import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import cookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RedisClient } from '../../platform/runtime/redis-connections.ts';
import type { TokenIssuer } from '../../directory/auth/token-issuer.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import { problemFor } from '../http/plugins/errors.ts';
import type { HttpProblem } from '../http/problem.ts';
import type { OutageReporter } from '../http/dependency-errors.ts';
import { projectPath } from '../../platform/shared/project-files.ts';
import { FailureLimiter } from '../../platform/shared/rate-limiter.ts';
import { consolePage, type ConsolePageView } from './console-layout.ts';
import type { FormRefusal, FormRefusalReason } from './console-form-refusal.ts';
import { consolePermits, type ConsoleAction } from './console-permissions.ts';
import { ConsoleQueues } from './console-queues.ts';
import { liveSession, type ConsoleSession, type SessionPolicy, type SignInGuards } from './console-user-service.ts';
import { html } from './html.ts';
import { passwordCost, PasswordChecks } from './password-hash.ts';
import { SignInThrottle } from './sign-in-throttle.ts';

export interface ConsoleDeps {
  config: Config;
  db: Database;
  /** The read replica's pool, for the read-only pages that choose it through readSource (see console-read-source.ts). */
  readDb?: Database;
  redis: RedisClient;
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
  /**
   * The fields of a form the route read itself (a multipart upload's): shown again if the form is
   * refused. An ordinary form's fields are its parsed body.
   */
  keepFormValues(request: FastifyRequest, values: Readonly<Record<string, string>>): void;
}

/**
 * A form's route: what its refusal is titled, and the page its form is on, to show again with the
 * refusal (the error handler renders it, for a 400, 409 or 422 the service refused).
 */
export interface ConsoleFormRoute {
  /** What did not happen: "The statement was not imported". */
  refused: string;
  /** The page the form is on, rendered again; the form posting to the refusal's action is filled with what was entered. */
  page?: (request: FastifyRequest, reply: FastifyReply, refusal: FormRefusal) => Promise<ConsolePageView>;
  /** The id of the element a form field is shown in, for the summary's links (default: the field's name). */
  fieldId?: (name: string, request: FastifyRequest) => string;
  /** The field a reason is about when the refusal names none (by its code first, then `defaultField`). */
  fieldOfCode?: Readonly<Record<string, string>>;
  defaultField?: string;
  /** A file upload: the browser cannot be handed the file back. */
  upload?: boolean;
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
    /** A form's route: its refusals are shown on the form's page again (see ConsoleFormRoute). */
    consoleForm?: ConsoleFormRoute;
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
 * What an error page is titled: the kind of refusal it is, for what the person asked; only a fault of
 * ours (5xx) says something went wrong.
 */
export function errorPageTitle(status: number, method: string, form?: ConsoleFormRoute): string {
  if (status === 401) return 'Signed out';
  if (status === 403) return 'Not allowed';
  if (status === 404) return 'Not found';
  if (status === 413) return 'Too large';
  if (status === 429) return 'Too many attempts';
  if (status >= 500) return 'Something went wrong';
  if (form) return form.refused;
  if (status === 409) return 'Not done';
  return method === 'GET' || method === 'HEAD' ? 'Check the address or filters' : 'Check the form';
}

/** The statuses of a form the service refused (malformed, conflicting, invalid): shown on the form's page again. */
const FORM_REFUSAL_STATUSES: ReadonlySet<number> = new Set([400, 409, 422]);

/** A field named by a JSON pointer's first token (/amount_2 -> amount_2). */
function fieldNameOf(pointer: string): string | undefined {
  const token = pointer.split('/')[1];
  return token === undefined || token === '' ? undefined : token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The refusal of a form's route: each reason with the field it is about, and what was entered. */
function formRefusalOf(problem: HttpProblem, request: FastifyRequest, form: ConsoleFormRoute, values: Readonly<Record<string, string>>): FormRefusal {
  const idOf = (name: string | undefined) => (name === undefined ? undefined : form.fieldId ? form.fieldId(name, request) : name);
  const fallback = form.fieldOfCode?.[problem.slug] ?? form.defaultField;
  const errors = problem.errors ?? [];
  // One field error reads best as the refusal's own sentence (an API's field detail is terse: "is required").
  const reasons: FormRefusalReason[] =
    errors.length > 1
      ? errors.map((error) => ({ detail: error.detail, fieldId: idOf(fieldNameOf(error.pointer) ?? fallback) }))
      : [{ detail: problem.detail ?? errors[0]?.detail ?? problem.title, fieldId: idOf((errors[0] && fieldNameOf(errors[0].pointer)) ?? fallback) }];
  return { heading: form.refused, reasons, action: request.url.split('?')[0]!, values, fileDropped: form.upload ?? false };
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
    const queues = new ConsoleQueues(config, config.QUEUE_PREFIX);
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

    // What a route read of its own form (a multipart upload's fields), to fill the form again if refused.
    const keptFormValues = new WeakMap<FastifyRequest, Readonly<Record<string, string>>>();
    const formValuesOf = (request: FastifyRequest): Readonly<Record<string, string>> => {
      const kept = keptFormValues.get(request);
      const fields = kept ?? (typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {});
      return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => entry[0] !== '_csrf' && typeof entry[1] === 'string'));
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
      keepFormValues(request, values) {
        keptFormValues.set(request, values);
      },
    };

    app.setErrorHandler(async (error, request, reply) => {
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
      // A form the service refused: its page again, the reasons at the top and the form as it was sent.
      const form = request.routeOptions.config.consoleForm;
      if (form?.page && problem && FORM_REFUSAL_STATUSES.has(status)) {
        const refused = formRefusalOf(problem, request, form, formValuesOf(request));
        try {
          const view = await form.page(request, reply, refused);
          return context.page(request, reply, { ...view, status, refusal: refused });
        } catch (pageError) {
          request.log.warn({ err: pageError }, 'the page of a refused form could not be shown again; the refusal is shown alone');
        }
      }
      const refusedForm = problem !== null && FORM_REFUSAL_STATUSES.has(status) && request.method === 'POST';
      return context.page(request, reply, {
        status,
        title: errorPageTitle(status, request.method, form),
        body: html`<p class="error" role="alert">${message}</p>${refusedForm ? html`<p>Nothing was changed. Go back to the form, correct it and send it again.</p>` : ''}${
          status === 401 ? html`<p><a href="/console/sign-in">Sign in</a></p>` : html`<p><a href="/console">Back to the overview</a></p>`
        }`,
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
