import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Dependency, DependencyHealth } from '../../platform/runtime/dependency-health.ts';
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

/** What the 503 path does besides answering: makes the outage known, without a line per request. */
export interface OutageReporter {
  refused(dependency: Dependency, cause: unknown, log: FastifyBaseLogger): void;
}

/** Without a health monitor, the most one process logs about refused requests, per dependency. */
export const UNMONITORED_OUTAGE_LOG_INTERVAL_MS = 10_000;

/**
 * Under load an outage fails hundreds of requests a second, each the same way: a warning per
 * request would bury everything else (thousands of lines for a few seconds). With the process's
 * health monitor (`serve`, `start`), each refusal goes to it: it probes at once, logs one line when
 * the dependency goes and one when it is back (counting the refused requests), and the requests
 * log nothing above debug. Without one (an app in a test, the sandbox provider), a warning per
 * dependency at most every `intervalMs`, counting the refusals since the last.
 */
export function outageReporter(health?: Pick<DependencyHealth, 'noteRefusal'>, options: { intervalMs?: number; now?: () => number } = {}): OutageReporter {
  const intervalMs = options.intervalMs ?? UNMONITORED_OUTAGE_LOG_INTERVAL_MS;
  const now = options.now ?? Date.now;
  const unlogged = new Map<Dependency, { loggedAt: number; refused: number }>();
  return {
    refused(dependency, cause, log) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      if (health) {
        health.noteRefusal(dependency, cause);
        log.debug({ dependency, reason }, `${dependency} unavailable; answered 503`);
        return;
      }
      const state = unlogged.get(dependency) ?? { loggedAt: Number.NEGATIVE_INFINITY, refused: 0 };
      unlogged.set(dependency, state);
      state.refused += 1;
      if (now() - state.loggedAt < intervalMs) {
        log.debug({ dependency, reason }, `${dependency} unavailable; answered 503`);
        return;
      }
      // No stack: an outage fails every request the same way, and says all it has in one line.
      log.warn({ dependency, reason, refusedRequests: state.refused }, `${dependency} unavailable; answered 503`);
      state.loggedAt = now();
      state.refused = 0;
    },
  };
}

/** Socket failures: the server is down, restarting, or unreachable. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

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
