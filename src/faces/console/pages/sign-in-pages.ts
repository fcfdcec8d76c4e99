import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CONSOLE_FORM_LIMIT_BYTES, DEVICE_COOKIE, SESSION_COOKIE, type ConsoleContext, type ConsolePageModule } from '../console-plugin.ts';
import { signIn, signOut } from '../console-user-service.ts';
import { html, type Html } from '../html.ts';
import { MAX_PASSWORD_LENGTH } from '../password-hash.ts';
import { safeNextPath } from '../sign-in-redirect.ts';

// One value of each field (a repeated one arrives as an array), within the lengths an account can have.
const signInForm = z.object({
  email: z.string().max(320).default(''),
  password: z.string().max(MAX_PASSWORD_LENGTH).default(''),
  next: z.string().max(2_000).optional(),
});

/** A device cookie outlives sessions: it marks a browser the account signed in on (see sign-in-device.ts). */
const DEVICE_COOKIE_MAX_AGE_SECONDS = 180 * 24 * 3_600;

type SignInPageState = 'form' | 'not_accepted' | 'throttled' | 'busy' | 'malformed';

/** A wait in words, rounded up to whole minutes past a minute and a half. */
const waitOf = (seconds: number) => (seconds <= 1 ? 'a second' : seconds < 90 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`);

const messages: Record<Exclude<SignInPageState, 'form'>, (retryAfterSeconds: number) => Html> = {
  not_accepted: () => html`Email or password not accepted. An administrator can reset a password with <code>deductions console-users set-password</code>.`,
  // The same for every email, an account's or not: it names where the failures came from, not an account.
  throttled: (seconds) => html`Too many failed sign-ins for this email from here. Try again in ${waitOf(seconds)}, or from a browser you have signed in on before.`,
  busy: () => html`The console is busy signing people in. Try again in a moment.`,
  malformed: () => html`The sign-in form was not sent as the console sends it: one email (at most 320 characters) and one password.`,
};

const statusOf: Record<SignInPageState, number> = { form: 200, not_accepted: 401, throttled: 429, busy: 503, malformed: 400 };

function signInPage(
  context: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
  options: { next: string; email?: string; state?: SignInPageState; retryAfterSeconds?: number },
) {
  const state = options.state ?? 'form';
  if (options.retryAfterSeconds !== undefined) reply.header('retry-after', String(options.retryAfterSeconds));
  return context.page(request, reply, {
    status: statusOf[state],
    title: 'Sign in',
    body: html`${state !== 'form' ? html`<p class="error" role="alert" id="sign-in-error">${messages[state](options.retryAfterSeconds ?? 0)}</p>` : ''}
<form method="post" action="/console/sign-in" class="sign-in">
  <input type="hidden" name="_csrf" value="${context.csrfToken(request, reply)}">
  <input type="hidden" name="next" value="${options.next}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}"${state !== 'form' ? html` aria-describedby="sign-in-error"` : ''}>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>`,
  });
}

/** Sign-in and sign-out: the only console routes reachable without a session are the sign-in form and its post. */
export const registerSignInPages: ConsolePageModule = (app, context) => {
  const { db } = context.deps;

  app.get('/sign-in', { config: { consolePublic: true } }, async (request, reply) => {
    const next = safeNextPath((request.query as { next?: string }).next);
    if (request.consoleSession) return reply.redirect(next, 303);
    return signInPage(context, request, reply, { next });
  });

  app.post('/sign-in', { config: { consolePublic: true }, bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const form = signInForm.safeParse(request.body ?? {});
    // Refused before anything is looked up or counted: no account's password is checked.
    if (!form.success) return signInPage(context, request, reply, { next: '/console', state: 'malformed' });
    const next = safeNextPath(form.data.next);
    const outcome = await signIn(
      db,
      context.signInGuards,
      form.data,
      { address: request.ip, userAgent: request.headers['user-agent'] ?? null, deviceToken: request.cookies[DEVICE_COOKIE] },
      context.policy,
    );
    if (!outcome.ok) {
      const retryAfterSeconds = outcome.refusal === 'not_accepted' ? undefined : outcome.retryAfterSeconds;
      return signInPage(context, request, reply, { next, email: form.data.email, state: outcome.refusal, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) });
    }
    reply.setCookie(SESSION_COOKIE, outcome.token, { path: '/', httpOnly: true, secure: true, sameSite: 'strict' });
    reply.setCookie(DEVICE_COOKIE, outcome.deviceToken, { path: '/', httpOnly: true, secure: true, sameSite: 'strict', maxAge: DEVICE_COOKIE_MAX_AGE_SECONDS });
    return reply.redirect(next, 303);
  });

  app.post('/sign-out', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    await signOut(db, context.session(request));
    reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, secure: true, sameSite: 'strict' });
    return reply.redirect('/console/sign-in', 303);
  });
};
