import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { consoleActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { consoleRoles, type ConsoleRole } from './console-permissions.ts';
import {
  endSession,
  endSessionsOf,
  insertConsoleSession,
  insertConsoleUser,
  findConsoleUserForSignIn,
  listConsoleUsers as selectConsoleUsers,
  rowLockConsoleUserForSession,
  recordSignInSuccess,
  setConsoleUserDisabled,
  setConsoleUserPassword as updateConsoleUserPassword,
  touchLiveSession,
} from './console-user-repository.ts';
import { hashPassword, PASSWORD_COST, PasswordChecksBusy, passwordProblem, type PasswordChecks, type ScryptCost } from './password-hash.ts';
import { deviceTokenFor, trustedDeviceOf } from './sign-in-device.ts';
import type { SignInAttempt, SignInThrottle } from './sign-in-throttle.ts';

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

export async function createConsoleUser(db: Database, actor: Actor, input: NewConsoleUser, cost: ScryptCost = PASSWORD_COST) {
  const email = parseEmail(input.email);
  const name = input.name.trim();
  if (name.length === 0) throw new InvalidError('console-user-invalid', 'a console user needs a name');
  if (!(consoleRoles as readonly string[]).includes(input.role)) {
    throw new InvalidError('console-user-invalid', `role must be one of ${consoleRoles.join(', ')}`);
  }
  requireGoodPassword(input.password);
  const passwordHash = await hashPassword(input.password, cost);
  return db.transaction().execute(async (trx) => {
    const user = await insertConsoleUser(trx, { id: randomUUID(), email, name, role: input.role, passwordHash, createdBy: describeCreator(actor) });
    if (!user) throw new ConflictError('console-user-exists', `a console user ${email} already exists`);
    await recordAction(trx, {
      actor,
      action: 'console_user.created',
      resourceType: 'console_user',
      resourceId: user.id,
      reason: null,
      after: { email, name, role: input.role },
    });
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
export async function setConsoleUserPassword(db: Database, actor: Actor, email: string, password: string, cost: ScryptCost = PASSWORD_COST) {
  const address = parseEmail(email);
  requireGoodPassword(password);
  const passwordHash = await hashPassword(password, cost);
  return db.transaction().execute(async (trx) => {
    const user = await updateConsoleUserPassword(trx, address, passwordHash);
    if (!user) throw new NotFoundError(`Console user ${address}`);
    const sessionsEnded = await endSessionsOf(trx, user.id);
    await recordAction(trx, {
      actor,
      action: 'console_user.password_set',
      resourceType: 'console_user',
      resourceId: user.id,
      reason: null,
      after: { email: address, sessions_ended: sessionsEnded },
    });
    return user;
  });
}

export function listConsoleUsers(db: Database) {
  return selectConsoleUsers(db);
}

// ---- Sessions ----

export interface SessionPolicy {
  idleMinutes: number;
  maxHours: number;
}

/** What stands between a sign-in and a password check: the failure throttle, the bounded hashing, the device tokens' keys. */
export interface SignInGuards {
  throttle: SignInThrottle;
  passwords: PasswordChecks;
  /** HMAC keys of device tokens, newest first. */
  deviceKeys: readonly Buffer[];
}

export interface ConsoleSession {
  sessionId: string;
  userId: string;
  email: string;
  name: string;
  role: ConsoleRole;
}

export type SignInOutcome =
  /** `deviceToken`: for the browser's device cookie (see sign-in-device.ts). */
  | { ok: true; token: string; session: ConsoleSession; deviceToken: string }
  /** One answer for an unknown email, a wrong password and a disabled account: nothing to enumerate. */
  | { ok: false; refusal: 'not_accepted' }
  /**
   * Too many failures from where this came from (this address or browser, for this email), or
   * another sign-in of this address still running: nothing was checked. Decided before the account
   * is looked up, alike for every email.
   */
  | { ok: false; refusal: 'throttled'; retryAfterSeconds: number }
  /**
   * Every place waiting for a password check is taken by sign-ins that come first (see
   * signInCheckPlace): nothing was checked, and the refusal is counted against the address.
   */
  | { ok: false; refusal: 'busy'; retryAfterSeconds: number };

export const hashSessionToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * Checks the password and opens a session. Failures are throttled where they come from (see
 * sign-in-throttle.ts), never by locking the account: the owner's right password, from a browser of
 * theirs or another address, still signs in, and its check is taken before a flood's (see
 * signInCheckPlace). Every sign-in whose password is checked takes one password hash, an unknown
 * or disabled account's too, so the time taken tells nothing. No database connection is held while
 * hashing. Every outcome checked for a known account is audited.
 */
export async function signIn(
  db: Database,
  guards: SignInGuards,
  credentials: { email: string; password: string },
  client: { address: string; userAgent: string | null; deviceToken: string | undefined },
  policy: SessionPolicy,
): Promise<SignInOutcome> {
  const parsed = consoleEmailSchema.safeParse(credentials.email);
  // Not an email, so no account: it is checked and counted all the same, as any unknown one.
  const email = parsed.success ? parsed.data : credentials.email.trim().toLowerCase();
  const attempt: SignInAttempt = { email, address: client.address, device: trustedDeviceOf(guards.deviceKeys, client.deviceToken, email) };

  const leave = guards.throttle.enter(attempt);
  if (!leave) return { ok: false, refusal: 'throttled', retryAfterSeconds: 1 };
  try {
    const { retryAfterSeconds, place } = await guards.throttle.assess(attempt);
    if (retryAfterSeconds > 0) return { ok: false, refusal: 'throttled', retryAfterSeconds };

    const user = parsed.success ? await findConsoleUserForSignIn(db, email) : undefined;
    let matches: boolean;
    try {
      matches = await guards.passwords.check(credentials.password, user && !user.disabled_at ? user.password_hash : null, place);
    } catch (error) {
      if (!(error instanceof PasswordChecksBusy)) throw error;
      // The address pays for it: a flood that keeps the checks busy spends its own budget, then waits with 429.
      await guards.throttle.recordBusy(attempt);
      return { ok: false, refusal: 'busy', retryAfterSeconds: 1 };
    }
    const audit = (trx: Executor, userId: string, action: 'console.signed_in' | 'console.sign_in_failed', after: Record<string, unknown>) =>
      recordAction(trx, { actor: consoleActor(email), action, resourceType: 'console_user', resourceId: userId, reason: null, after: { ...after, address: client.address } });

    if (!user || !matches) {
      await guards.throttle.recordFailure(attempt);
      if (user) await audit(db, user.id, 'console.sign_in_failed', { cause: user.disabled_at ? 'disabled' : 'wrong_password', trusted_device: attempt.device !== null });
      return { ok: false, refusal: 'not_accepted' };
    }

    const now = new Date();
    const token = randomBytes(32).toString('base64url');
    const sessionId = randomUUID();
    const opened = await db.transaction().execute(async (trx) => {
      // Disabled, or given a new password, while the password was being checked: not this session.
      const current = await rowLockConsoleUserForSession(trx, user.id);
      if (!current || current.disabled_at || current.password_hash !== user.password_hash) return false;
      await recordSignInSuccess(trx, user.id);
      await insertConsoleSession(trx, {
        id: sessionId,
        tokenHash: hashSessionToken(token),
        userId: user.id,
        expiresAt: new Date(now.getTime() + policy.maxHours * 3_600_000),
        address: client.address,
        userAgent: client.userAgent?.slice(0, 500) ?? null,
      });
      await audit(trx, user.id, 'console.signed_in', { session_id: sessionId });
      return true;
    });
    if (!opened) return { ok: false, refusal: 'not_accepted' };
    return {
      ok: true,
      token,
      session: { sessionId, userId: user.id, email: user.email, name: user.name, role: user.role },
      // The device keeps its id (its failure bucket with it); a new browser gets one.
      deviceToken: deviceTokenFor(guards.deviceKeys, email, attempt.device ?? undefined),
    };
  } finally {
    leave();
  }
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
    await recordAction(trx, {
      actor: consoleActor(session.email),
      action: 'console.signed_out',
      resourceType: 'console_user',
      resourceId: session.userId,
      reason: null,
      after: { session_id: session.sessionId },
    });
  });
}
