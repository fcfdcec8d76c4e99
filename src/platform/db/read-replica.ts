import { sql } from 'kysely';
import { answeredWithin } from '../shared/answered-within.ts';
import type { Database, Executor } from './connection.ts';

/**
 * Reads that may be a little behind (exports, reports, the console's read-only pages) go to a
 * streaming replica when one is configured (DATABASE_READ_URL), so a large export does not compete
 * with the nightly lock for the primary's cores and buffers. Each such read first asks the replica
 * how far behind it is, and reads the primary instead when it is further behind than the bound
 * (DATABASE_READ_MAX_LAG_SECONDS) or does not answer: a report is never staler than the bound, and
 * never fails because only the replica is down.
 */

/** Where a read-only page or report reads, and how far behind that is. */
export interface ReadSource {
  db: Database;
  /** `replica`: DATABASE_READ_URL; `primary`: none is configured, or it is behind the bound or down. */
  from: 'replica' | 'primary';
  /**
   * How far the replica was behind when asked, in seconds (0 when it had replayed all it had
   * received); null without a replica, or when it did not answer.
   */
  replicaLagSeconds: number | null;
  /** Why the primary was read although a replica is configured. */
  fallback?: 'lagging' | 'unreachable';
}

/** What the choice needs: the primary, the read pool (the primary's own when no replica is set) and the bound. */
export interface ReadDatabases {
  db: Database;
  readDb?: Database | undefined;
  config: { DATABASE_READ_MAX_LAG_SECONDS: number };
}

/**
 * How far behind the primary a replica's replay is, in seconds: 0 when it has replayed every byte of
 * WAL it has received (an idle primary sends nothing, and the replica is then current however old
 * its last replayed commit is), else the age of its last replayed commit. Null on a server that is
 * not in recovery (a primary, or a promoted replica): it is behind nothing. Infinity when it is
 * behind but has replayed no commit since it started, so its lag cannot be told.
 */
export async function replicaLag(db: Executor): Promise<number | null> {
  const { rows } = await sql<{ in_recovery: boolean; caught_up: boolean | null; lag: number | null }>`
    select pg_is_in_recovery() as in_recovery,
           pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() as caught_up,
           extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as lag
  `.execute(db);
  const row = rows[0]!;
  if (!row.in_recovery) return null;
  // A replica restored from archive only has no receive position: its replayed commit's age is all there is.
  if (row.caught_up === true) return 0;
  return row.lag === null ? Infinity : Math.max(0, row.lag);
}

/**
 * How long the replica has to say how far behind it is. One that accepts connections but never
 * answers (a hung host, a half-open network path) would otherwise hold every report and console
 * page up for as long as TCP takes to give up; the primary answers instead.
 */
export const REPLICA_ANSWER_TIMEOUT_MS = 2_000;

/**
 * The database a read that tolerates the configured lag should use: the replica while it is within
 * the bound, else the primary. Without a replica, the primary, asked nothing.
 */
export async function readSource(databases: ReadDatabases): Promise<ReadSource> {
  const { db, readDb } = databases;
  if (readDb === undefined || readDb === db) return { db, from: 'primary', replicaLagSeconds: null };
  let lag: number | null;
  try {
    lag = await answeredWithin(replicaLag(readDb), REPLICA_ANSWER_TIMEOUT_MS);
  } catch {
    return { db, from: 'primary', replicaLagSeconds: null, fallback: 'unreachable' };
  }
  // A server out of recovery is a promoted replica (or a primary named twice): current by definition.
  const lagSeconds = lag ?? 0;
  if (lagSeconds > databases.config.DATABASE_READ_MAX_LAG_SECONDS) return { db, from: 'primary', replicaLagSeconds: lagSeconds, fallback: 'lagging' };
  return { db: readDb, from: 'replica', replicaLagSeconds: lagSeconds };
}

/** One line for a page read through readSource: where its data came from and how old it may be. Empty without a replica. */
export function describeReadSource(source: ReadSource): string {
  const lag = source.replicaLagSeconds;
  const behind = lag === null ? '' : lag === Infinity ? 'an unknown time' : lag < 1 ? 'under a second' : `${Math.round(lag)} s`;
  if (source.from === 'replica') return `Data from the read replica, ${behind} behind the primary.`;
  if (source.fallback === 'lagging') return `Data from the primary: the read replica is ${behind} behind, more than allowed.`;
  if (source.fallback === 'unreachable') return 'Data from the primary: the read replica did not answer.';
  return '';
}
