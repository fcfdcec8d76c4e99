import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { ConsoleRole } from '../../platform/db/tables.ts';

const userColumns = ['id', 'email', 'name', 'role', 'created_at', 'created_by', 'password_changed_at', 'disabled_at', 'last_signed_in_at'] as const;

export async function insertConsoleUser(db: Executor, user: { id: string; email: string; name: string; role: ConsoleRole; passwordHash: string; createdBy: string }) {
  return db
    .insertInto('console_users')
    .values({ id: user.id, email: user.email, name: user.name, role: user.role, password_hash: user.passwordHash, created_by: user.createdBy })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning(userColumns)
    .executeTakeFirst();
}

export async function findConsoleUserByEmail(db: Executor, email: string) {
  return db.selectFrom('console_users').select(userColumns).where('email', '=', email).executeTakeFirst();
}

/**
 * The row a sign-in checks the password against. Read without a lock and outside any transaction:
 * no connection is held while the password is hashed (a burst of sign-ins once held the whole pool).
 */
export async function findConsoleUserForSignIn(db: Executor, email: string) {
  return db.selectFrom('console_users').select(['id', 'email', 'name', 'role', 'disabled_at', 'password_hash']).where('email', '=', email).executeTakeFirst();
}

/** The row again, locked, when the session is opened: its password and state must be those just checked. */
export async function rowLockConsoleUserForSession(db: Executor, id: string) {
  return db.selectFrom('console_users').select(['password_hash', 'disabled_at']).where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function listConsoleUsers(db: Executor) {
  return db.selectFrom('console_users').select(userColumns).orderBy('email').execute();
}

export async function recordSignInSuccess(db: Executor, userId: string) {
  await db
    .updateTable('console_users')
    .set({ last_signed_in_at: sql<Date>`now()` })
    .where('id', '=', userId)
    .execute();
}

export async function setConsoleUserDisabled(db: Executor, email: string, disabled: boolean) {
  return db
    .updateTable('console_users')
    .set({ disabled_at: disabled ? sql<Date>`coalesce(disabled_at, now())` : null })
    .where('email', '=', email)
    .returning(userColumns)
    .executeTakeFirst();
}

export async function setConsoleUserPassword(db: Executor, email: string, passwordHash: string) {
  return db
    .updateTable('console_users')
    .set({ password_hash: passwordHash, password_changed_at: sql<Date>`now()` })
    .where('email', '=', email)
    .returning(userColumns)
    .executeTakeFirst();
}

export async function insertConsoleSession(
  db: Executor,
  session: { id: string; tokenHash: Buffer; userId: string; expiresAt: Date; address: string | null; userAgent: string | null },
) {
  await db
    .insertInto('console_sessions')
    .values({
      id: session.id,
      token_hash: session.tokenHash,
      user_id: session.userId,
      expires_at: session.expiresAt,
      address: session.address,
      user_agent: session.userAgent,
    })
    .execute();
}

/**
 * The live session holding this token, touched (last_seen_at) in the same statement: a session
 * signed out, past its absolute end, idle too long or whose user is disabled is not found.
 */
export async function touchLiveSession(db: Executor, tokenHash: Buffer, idleMinutes: number) {
  return db
    .updateTable('console_sessions as s')
    .from('console_users as u')
    .set({ last_seen_at: sql<Date>`now()` })
    .whereRef('u.id', '=', 's.user_id')
    .where('s.token_hash', '=', tokenHash)
    .where('s.signed_out_at', 'is', null)
    .where('s.expires_at', '>', sql<Date>`now()`)
    .where('s.last_seen_at', '>', sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
    .where('u.disabled_at', 'is', null)
    .returning(['s.id as session_id', 'u.id as user_id', 'u.email', 'u.name', 'u.role'])
    .executeTakeFirst();
}

export async function endSession(db: Executor, sessionId: string) {
  await db
    .updateTable('console_sessions')
    .set({ signed_out_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where('signed_out_at', 'is', null)
    .execute();
}

/** A disabled user's sessions end with the account, not at their idle limit. */
export async function endSessionsOf(db: Executor, userId: string): Promise<number> {
  const result = await db
    .updateTable('console_sessions')
    .set({ signed_out_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('signed_out_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
