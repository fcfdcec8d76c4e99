import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { consoleActor, recordAction, type Actor } from '../audit/audit-service.ts';
import type { Database } from '../db/connection.ts';
import { ConflictError, InvalidError, NotFoundError } from '../shared/domain-errors.ts';
import { consoleRoles, type ConsoleRole } from './console-permissions.ts';
import {
  endSession,
  endSessionsOf,
  insertConsoleSession,
  insertConsoleUser,
  listConsoleUsers as selectConsoleUsers,
  lockConsoleUserForSignIn,
  recordSignInFailure,
  recordSignInSuccess,
  setConsoleUserDisabled,
  setConsoleUserPassword as updateConsoleUserPassword,
  touchLiveSession,
} from './console-user-repository.ts';
import { hashPassword, passwordMatches, passwordProblem } from './password-hash.ts';
import { afterFailedSignIn, isLockedOut, type LockoutPolicy } from './sign-in-lockout.ts';

export const consoleEmailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: 'is not an email address' }));

export interface NewConsoleUser {
  email: string;
  name: string;
  role: ConsoleRole;
  password: string;
}

function parseEmail(email: string): string {
  const parsed = consoleEmailSchema.safeParse(email);
  if (!parsed.success) throw new InvalidError('console-user-invalid', `${JSON.stringify(email)} is not an email address`);
  return parsed.data;
}

function requireGoodPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new InvalidError('console-password-too-weak', problem);
}

export async function createConsoleUser(db: Database, actor: Actor, input: NewConsoleUser) {
  const email = parseEmail(input.email);
  const name = input.name.trim();
  if (name.length === 0) throw new InvalidError('console-user-invalid', 'a console user needs a name');
  if (!(consoleRoles as readonly string[]).includes(input.role)) {
    throw new InvalidError('console-user-invalid', `role must be one of ${consoleRoles.join(', ')}`);
  }
  requireGoodPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    const user = await insertConsoleUser(trx, { id: randomUUID(), email, name, role: input.role, passwordHash, createdBy: describeCreator(actor) });
    if (!user) throw new ConflictError('console-user-exists', `a console user ${email} already exists`);
    await recordAction(trx, { actor, action: 'console_user.created', resourceType: 'console_user', resourceId: user.id, reason: null, after: { email, name, role: input.role } });
    return user;
  });
}

function describeCreator(actor: Actor): string {
  return actor.kind === 'client' ? `client ${actor.clientId}` : actor.user;
}

export async function setConsoleUserEnabled(db: Database, actor: Actor, email: string, enabled: boolean, reason: string | null) {
  const address = parseEmail(email);
  return db.transaction().execute(async (trx) => {
    const user = await setConsoleUserDisabled(trx, address, !enabled);
    if (!user) throw new NotFoundError(`Console user ${address}`);
    const sessionsEnded = enabled ? 0 : await endSessionsOf(trx, user.id);
    await recordAction(trx, {
      actor,
      action: enabled ? 'console_user.enabled' : 'console_user.disabled',
      resourceType: 'console_user',
      resourceId: user.id,
      reason,
      after: { email: address, sessions_ended: sessionsEnded },
    });
    return { user, sessionsEnded };
  });
}

/** A new password ends every session of the account (whoever knew the old one is signed out). */
export async function setConsoleUserPassword(db: Database, actor: Actor, email: string, password: string) {
  const address = parseEmail(email);
  requireGoodPassword(password);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const user = await updateConsoleUserPassword(trx, address, passwordHash);
    if (!user) throw new NotFoundError(`Console user ${address}`);
    const sessionsEnded = await endSessionsOf(trx, user.id);
    await recordAction(trx, { actor, action: 'console_user.password_set', resourceType: 'console_user', resourceId: user.id, reason: null, after: { email: address, sessions_ended: sessionsEnded } });
    return user;
  });
}

export function listConsoleUsers(db: Database) {
  return selectConsoleUsers(db);
}

// ---- Sessions ----

export interface SessionPolicy extends LockoutPolicy {
  idleMinutes: number;
  maxHours: number;
}

export interface ConsoleSession {
  sessionId: string;
  userId: string;
  email: string;
  name: string;
  role: ConsoleRole;
}

export type SignInOutcome =
  | { ok: true; token: string; session: ConsoleSession }
  /** One answer for an unknown email, a wrong password, a disabled or a locked account: nothing to enumerate. */
  | { ok: false };

export const hashSessionToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * Checks the password and opens a session. The user row is locked for the check, so concurrent
 * guesses each count toward the lockout; a locked account refuses even the right password until the
 * lock ends. Every outcome for a known account is audited.
 */
export async function signIn(
  db: Database,
  credentials: { email: string; password: string },
  client: { address: string | null; userAgent: string | null },
  policy: SessionPolicy,
): Promise<SignInOutcome> {
  const parsed = consoleEmailSchema.safeParse(credentials.email);
  if (!parsed.success) return { ok: false };
  const email = parsed.data;
  return db.transaction().execute(async (trx): Promise<SignInOutcome> => {
    const user = await lockConsoleUserForSignIn(trx, email);
    if (!user) return { ok: false };
    const now = new Date();
    const state = { failedSignIns: user.failed_sign_ins, lockedUntil: user.locked_until };
    const audit = (action: 'console.signed_in' | 'console.sign_in_failed', after: Record<string, unknown>) =>
      recordAction(trx, { actor: consoleActor(email), action, resourceType: 'console_user', resourceId: user.id, reason: null, after: { ...after, address: client.address } });

    const refusal = user.disabled_at ? 'disabled' : isLockedOut(state, now) ? 'locked' : null;
    if (refusal) {
      await audit('console.sign_in_failed', { cause: refusal });
      return { ok: false };
    }
    if (!(await passwordMatches(credentials.password, user.password_hash))) {
      const next = afterFailedSignIn(state, now, policy);
      await recordSignInFailure(trx, user.id, next);
      await audit('console.sign_in_failed', { cause: 'wrong_password', failed_sign_ins: next.failedSignIns, locked_until: next.lockedUntil?.toISOString() ?? null });
      return { ok: false };
    }
    await recordSignInSuccess(trx, user.id);
    const token = randomBytes(32).toString('base64url');
    const sessionId = randomUUID();
    await insertConsoleSession(trx, {
      id: sessionId,
      tokenHash: hashSessionToken(token),
      userId: user.id,
      expiresAt: new Date(now.getTime() + policy.maxHours * 3_600_000),
      address: client.address,
      userAgent: client.userAgent?.slice(0, 500) ?? null,
    });
    await audit('console.signed_in', { session_id: sessionId });
    return { ok: true, token, session: { sessionId, userId: user.id, email: user.email, name: user.name, role: user.role } };
  });
}

/** The session a cookie's token names, if it is still live; every request that finds one extends its idle limit. */
export async function liveSession(db: Database, token: string, policy: Pick<SessionPolicy, 'idleMinutes'>): Promise<ConsoleSession | null> {
  if (token.length === 0 || token.length > 200) return null;
  const row = await touchLiveSession(db, hashSessionToken(token), policy.idleMinutes);
  return row ? { sessionId: row.session_id, userId: row.user_id, email: row.email, name: row.name, role: row.role } : null;
}

export async function signOut(db: Database, session: ConsoleSession): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await endSession(trx, session.sessionId);
    await recordAction(trx, { actor: consoleActor(session.email), action: 'console.signed_out', resourceType: 'console_user', resourceId: session.userId, reason: null, after: { session_id: session.sessionId } });
  });
}
