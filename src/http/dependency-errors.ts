import pg from 'pg';
import type { Dependency } from '../runtime/dependency-health.ts';
import { HttpProblem } from './problem.ts';

/** Long enough for a restart or failover to finish, short enough that clients do not give up. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

const names: Record<Dependency, string> = { postgres: 'The database (PostgreSQL)', redis: 'Redis' };

/**
 * 503 with Retry-After: the request was not carried out, or its outcome was not committed, so a
 * retry with the same Idempotency-Key is safe (it replays whatever did commit). Names the
 * dependency, never its address or the driver's message.
 */
export function serviceUnavailable(dependency: Dependency): HttpProblem {
  return new HttpProblem(503, 'service-unavailable', `${names[dependency]} is unreachable; retry later (with the same Idempotency-Key a retry is safe)`, {
    headers: { 'retry-after': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
    extensions: { dependency },
  });
}

/** Socket failures: the server is down, restarting, or unreachable. */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server going away or refusing connections: class 08 (connection exception),
 * 57P01-57P03 (shutdown, crash, not yet accepting connections) and 53300 (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** node-postgres' own messages for a connection lost or never made (it gives them no code). */
const PG_CONNECTION_MESSAGE = /^Connection terminated|timeout exceeded when trying to connect|is not queryable/;

/**
 * Whether an error escaping a request means PostgreSQL is unreachable rather than that the request
 * or the code is wrong. Only node-postgres and the sockets it opens raise these shapes on the
 * request path: outbound HTTP (fetch) wraps its socket errors in a TypeError('fetch failed').
 */
export function isPostgresUnavailable(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return typeof error.code === 'string' && isUnavailableSqlState(error.code);
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  // Node's happy-eyeballs connect reports every address it tried at once.
  if (error instanceof AggregateError) return error.errors.some((inner) => isPostgresUnavailable(inner));
  return PG_CONNECTION_MESSAGE.test(error.message);
}

/**
 * A deadlock (40P01) or a serialization failure (40001): two requests took the same rows or keys in
 * opposite orders, and PostgreSQL rolled one back. Nothing of it was kept, so a retry is safe.
 */
export function isPostgresConcurrencyFailure(error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError && (error.code === '40P01' || error.code === '40001');
}

/**
 * SQLSTATE class 22 (data exception: 22001 too long, 22003 out of range, 22007/22008 bad date or
 * time, 22021/22P05 NUL, 22P02 bad text representation...): a value from the request that the
 * edge validation should have refused. The client's input, so 4xx, but also a gap to close.
 */
export function isPostgresDataException(error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError && typeof error.code === 'string' && error.code.startsWith('22');
}
