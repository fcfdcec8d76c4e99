import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CONSOLE_FORM_LIMIT_BYTES, SESSION_COOKIE, type ConsoleContext, type ConsolePageModule } from '../console-plugin.ts';
import { signIn, signOut } from '../console-user-service.ts';
import { html } from '../html.ts';
import { safeNextPath } from '../sign-in-redirect.ts';

const signInForm = z.object({
  email: z.string().max(320).default(''),
  password: z.string().max(1_024).default(''),
  next: z.string().max(2_000).optional(),
});

function signInPage(context: ConsoleContext, request: FastifyRequest, reply: FastifyReply, options: { next: string; email?: string; failed?: boolean }) {
  const { failures, lockMinutes } = context.policy;
  return context.page(request, reply, {
    status: options.failed ? 401 : 200,
    title: 'Sign in',
    body: html`${options.failed
        ? html`<p class="error" role="alert" id="sign-in-error">Email or password not accepted. After ${failures} failures in a row an account is locked for ${lockMinutes} minutes; an administrator can reset a password with <code>deductions console-users set-password</code>.</p>`
        : ''}
<form method="post" action="/console/sign-in" class="sign-in">
  <input type="hidden" name="_csrf" value="${context.csrfToken(request, reply)}">
  <input type="hidden" name="next" value="${options.next}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}"${options.failed ? html` aria-describedby="sign-in-error"` : ''}>
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
    const form = signInForm.parse(request.body ?? {});
    const next = safeNextPath(form.next);
    const outcome = await signIn(db, form, { address: request.ip, userAgent: request.headers['user-agent'] ?? null }, context.policy);
    if (!outcome.ok) return signInPage(context, request, reply, { next, email: form.email, failed: true });
    reply.setCookie(SESSION_COOKIE, outcome.token, { path: '/', httpOnly: true, secure: true, sameSite: 'strict' });
    return reply.redirect(next, 303);
  });

  app.post('/sign-out', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    await signOut(db, context.session(request));
    reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, secure: true, sameSite: 'strict' });
    return reply.redirect('/console/sign-in', 303);
  });
};
