import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { DB } from './tables.ts';

export type Database = Kysely<DB>;
/** What repository functions take: the pool or a transaction, so a use case can compose them atomically. */
export type Executor = Kysely<DB> | Transaction<DB>;

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const DATE_OID = 1082;

/** bigint columns hold minor units and counts; refuse silently losing precision rather than round. */
export function parseSafeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`integer ${text} is outside the safe range`);
  return value;
}

/**
 * numeric is what PostgreSQL's sum() of bigint gives: read exactly, as a BigInt, so a total that has
 * passed 2^53 reaches the code that decides what to do about it instead of failing the whole
 * statement in the driver. The service stores no fractional numeric; one would be a bug, said loudly.
 */
export function parseExactInteger(text: string): bigint {
  if (!/^-?\d+$/.test(text)) throw new RangeError(`numeric ${text} is not a whole number: cast it in SQL to what the caller reads`);
  return BigInt(text);
}

let typeParsersSet = false;

/** Explicit, process-wide: int8 -> safe integer, numeric -> BigInt, date -> 'YYYY-MM-DD' string (never a local-midnight Date). */
export function setTypeParsers(): void {
  if (typeParsersSet) return;
  pg.types.setTypeParser(INT8_OID, parseSafeInteger);
  pg.types.setTypeParser(DATE_OID, (text: string) => text);
  pg.types.setTypeParser(NUMERIC_OID, parseExactInteger);
  typeParsersSet = true;
}

const preparedMarker = /^\s*\/\* prepared: ([a-z_]+) \*\//;

/**
 * Runs a statement whose text starts with `/* prepared: <name> *\/` as a named prepared statement,
 * so each connection parses and plans it once rather than on every call. Kept for the few
 * statements the nightly run executes ten thousand times, whose planning costs as much as a
 * quarter of their execution. The text must be the same on every call: values go in parameters.
 */
class PreparingClient extends pg.Client {
  // pg's overloads cannot be restated on a subclass; every call shape passes through unchanged.
  override query(...args: any[]): any {
    const [text, values, callback] = args;
    const name = typeof text === 'string' ? preparedMarker.exec(text)?.[1] : undefined;
    if (name !== undefined) return super.query({ name, text, values }, callback);
    return (super.query as (...rest: any[]) => any)(...args);
  }
}

/**
 * Every session runs in UTC and without JIT compilation. The service's statements are key lookups
 * and set-based writes whose estimates can pass jit_above_cost (a night's remittances, a large
 * payroll, tables not analyzed yet); compiling one took 0.1–0.5 s, more than it ever saved.
 */
const SESSION_OPTIONS = '-c timezone=UTC -c jit=off';

/**
 * The connection string without its own `options` parameter, and the session options with that
 * parameter's after ours: pg lets the string's parameters replace the pool's settings, so a URL with
 * `options` would otherwise drop UTC and `jit=off` without a word.
 */
export function sessionConnection(connectionString: string): { connectionString: string; options: string } {
  const url = new URL(connectionString);
  const own = url.searchParams.get('options');
  if (own === null) return { connectionString, options: SESSION_OPTIONS };
  url.searchParams.delete('options');
  return { connectionString: url.toString(), options: own.trim() === '' ? SESSION_OPTIONS : `${SESSION_OPTIONS} ${own}` };
}

export function createPool(connectionString: string, max = 10): pg.Pool {
  setTypeParsers();
  const pool = new pg.Pool({ ...sessionConnection(connectionString), max, Client: PreparingClient });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor may a checked-out one's: pg emits 'error' on a lost connection even when the running query
  // already failed with it, and the pool listens only while the client is idle. The query's caller
  // sees the failure; the pool drops the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export function createDatabase(connectionString: string, max = 10): Database {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool: createPool(connectionString, max) }) });
}
