import pg from 'pg';
import { ConfigError, type Config } from '../../platform/config/config.ts';
import { DomainError } from '../../platform/shared/domain-errors.ts';

/** sysexits(3): the codes service managers and scripts already know. */
export const exitCodes = { failure: 1, unavailable: 69, config: 78 } as const;

export interface Failure {
  /** One line, safe to show: never a password or a stack trace. */
  message: string;
  exitCode: number;
}

interface Endpoint {
  name: 'PostgreSQL' | 'Redis';
  host: string;
  port: number;
}

const networkFailures: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
};

interface ErrnoLike {
  code?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
}

/** Where the configuration says PostgreSQL and Redis are, from their URLs without the credentials. */
function endpointsOf(config: Pick<Config, 'DATABASE_URL' | 'REDIS_URL'>): Endpoint[] {
  const endpoint = (name: Endpoint['name'], url: string, defaultPort: number): Endpoint => {
    const parsed = new URL(url);
    return { name, host: parsed.hostname, port: parsed.port ? Number(parsed.port) : defaultPort };
  };
  return [endpoint('PostgreSQL', config.DATABASE_URL, 5432), endpoint('Redis', config.REDIS_URL, 6379)];
}

/** The error itself, its cause chain and the members of an AggregateError (one per address tried). */
function* errorsWithin(error: unknown, depth = 0): Generator<unknown> {
  if (error === null || error === undefined || depth > 5) return;
  yield error;
  if (error instanceof AggregateError) for (const inner of error.errors) yield* errorsWithin(inner, depth + 1);
  if (error instanceof Error && error.cause !== undefined) yield* errorsWithin(error.cause, depth + 1);
}

function networkErrorWithin(error: unknown): (ErrnoLike & { code: string }) | undefined {
  for (const candidate of errorsWithin(error)) {
    const code = (candidate as ErrnoLike).code;
    if (typeof code === 'string' && code in networkFailures) return candidate as ErrnoLike & { code: string };
  }
  return undefined;
}

/** Which dependency a failed connection was to: by port when the address is known, else by host name. */
function endpointOf(failure: ErrnoLike, endpoints: Endpoint[]): Endpoint[] {
  if (typeof failure.port === 'number') {
    const byPort = endpoints.filter((e) => e.port === failure.port);
    if (byPort.length > 0) return byPort;
  }
  if (typeof failure.hostname === 'string') return endpoints.filter((e) => e.host === failure.hostname);
  return [];
}

function isPostgresError(error: unknown): error is pg.DatabaseError & { code: string } {
  return error instanceof pg.DatabaseError && typeof error.code === 'string';
}

/** Class 08 (connection), 28 (authorisation) and 3D000 (no such database): the connection itself was refused. */
function isPostgresConnectionRefusal(code: string): boolean {
  return code.startsWith('08') || code.startsWith('28') || code === '3D000';
}

const builtInErrors = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError', 'EvalError', 'URIError', 'AggregateError']);

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * What a failed command tells the operator, in one line, and its exit code. Refusals of the
 * business rules are shown as they are; a dependency that cannot be reached is named with where the
 * configuration says it is; anything else is shown by its name and message (its stack only at
 * LOG_LEVEL debug or trace, see main.ts).
 */
export function describeFailure(error: unknown, config: Pick<Config, 'DATABASE_URL' | 'REDIS_URL' | 'HOST' | 'PORT'> | undefined): Failure {
  if (error instanceof ConfigError) return { message: oneLine(error.message), exitCode: exitCodes.config };
  if (error instanceof DomainError) return { message: oneLine(error.detail), exitCode: exitCodes.failure };

  const listen = [...errorsWithin(error)].find((e) => (e as ErrnoLike).code === 'EADDRINUSE') as ErrnoLike | undefined;
  if (listen) {
    const port = typeof listen.port === 'number' ? listen.port : config?.PORT;
    const host = typeof listen.address === 'string' ? listen.address : config?.HOST;
    return { message: `Port ${port} on ${host} is already in use`, exitCode: exitCodes.unavailable };
  }

  const network = networkErrorWithin(error);
  if (network) {
    const reason = networkFailures[network.code]!;
    const endpoints = config ? endpointOf(network, endpointsOf(config)) : [];
    if (endpoints.length > 0) {
      const where = endpoints.map((e) => `${e.name} at ${e.host}:${e.port}`).join(' or ');
      return { message: `Cannot reach ${where} (${reason})`, exitCode: exitCodes.unavailable };
    }
    const where = typeof network.address === 'string' ? `${network.address}:${network.port}` : String(network.hostname ?? 'a dependency');
    return { message: `Cannot reach ${where} (${reason})`, exitCode: exitCodes.unavailable };
  }

  if (isPostgresError(error)) {
    if (config && isPostgresConnectionRefusal(error.code)) {
      const [postgres] = endpointsOf(config);
      return { message: `PostgreSQL at ${postgres!.host}:${postgres!.port} refused the connection: ${oneLine(error.message)}`, exitCode: exitCodes.unavailable };
    }
    return { message: `PostgreSQL refused the statement: ${oneLine(error.message)} (SQLSTATE ${error.code})`, exitCode: exitCodes.failure };
  }

  if (error instanceof Error) {
    const message = oneLine(error.message) || '(no message)';
    // Domain errors carry their meaning in the message; a built-in error is a bug, so say which kind.
    return { message: builtInErrors.has(error.name) ? `${error.name}: ${message}` : message, exitCode: exitCodes.failure };
  }
  return { message: oneLine(String(error)), exitCode: exitCodes.failure };
}

/**
 * For commands that clean up after themselves (a runtime or connection closed in `finally`): a
 * business refusal (unknown client, payout not pending) is told on stderr with exit code 1, and
 * anything else is thrown on, for main.ts to describe.
 */
export function reportRefusal(error: unknown): void {
  if (!(error instanceof DomainError)) throw error;
  const failure = describeFailure(error, undefined);
  process.stderr.write(`${failure.message}\n`);
  process.exitCode = failure.exitCode;
}
