import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { WriteAlongside } from '../db/write-alongside.ts';

export interface KeyRef {
  clientId: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A committed key row: what a later request with the same key is judged against. */
export interface StoredKey {
  fingerprint: string;
  status: 'in_flight' | 'completed';
  response_status: number | null;
  response_headers: unknown;
  response_body: Buffer | null;
}

export interface Claim {
  /** This transaction holds the key's advisory lock: no other request with the key is running. */
  locked: boolean;
  /** This transaction inserted the key's row (uncommitted, so invisible to everyone else). */
  claimed: boolean;
  /** The row committed before this statement began, if any. */
  existing: StoredKey | undefined;
}

/**
 * Advisory locks in the two-int4 form, so they never collide with the single-bigint locks other
 * parts of the service may take; the first int names the use, the second hashes (client, key).
 */
const IDEMPOTENCY_LOCK_CLASS = 0x1de7;

/**
 * Claims a key inside the caller's transaction, in one round trip:
 * - pg_try_advisory_xact_lock never waits: a duplicate of a running request is told so at once
 *   (409) instead of holding a pooled connection until the first commits;
 * - with the lock, the row is inserted uncommitted: it becomes visible only together with the
 *   effect and its stored response, and vanishes with them on rollback or a crash;
 * - ON CONFLICT sees rows committed after this statement's snapshot too, so a request that
 *   committed a moment ago is never run again (the primary key is the last guard either way).
 * The existing row comes from the statement's snapshot, so a replay needs no second statement.
 * Prepared once per connection, like completeKey: every idempotent POST runs both.
 */
export async function claimKey(trx: Executor, ref: KeyRef, fingerprint: string, expiresAt: Date): Promise<Claim> {
  const { rows } = await sql<{ locked: boolean; claimed: boolean } & { [K in keyof StoredKey]: StoredKey[K] | null }>`
    /* prepared: idempotency_claim */
    with lock as materialized (
      select pg_try_advisory_xact_lock(${sql.lit(IDEMPOTENCY_LOCK_CLASS)}, hashtext(${`${ref.clientId}:${ref.key}`}::text)) as locked
    ), claim as (
      insert into idempotency_keys (client_id, idempotency_key, fingerprint, expires_at)
      select ${ref.clientId}::uuid, ${ref.key}::uuid, ${fingerprint}::text, ${expiresAt}::timestamptz from lock where locked
      on conflict (client_id, idempotency_key) do nothing
      returning 1
    )
    select lock.locked, exists (select from claim) as claimed,
           k.fingerprint, k.status, k.response_status, k.response_headers, k.response_body
    from lock
    left join idempotency_keys k on k.client_id = ${ref.clientId}::uuid and k.idempotency_key = ${ref.key}::uuid
  `.execute(trx);
  const row = rows[0]!;
  return {
    locked: row.locked,
    claimed: row.claimed,
    existing: row.fingerprint === null ? undefined : (row as StoredKey),
  };
}

export async function findKey(db: Executor, ref: KeyRef): Promise<StoredKey | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status', 'response_status', 'response_headers', 'response_body'])
    .where('client_id', '=', ref.clientId)
    .where('idempotency_key', '=', ref.key)
    .executeTakeFirst();
}

/** Turns this transaction's claim into the stored response, committed with the effect. */
export async function completeKey(db: Executor, ref: KeyRef, response: StoredResponse): Promise<void> {
  const result = await sql`
    /* prepared: idempotency_complete */
    update idempotency_keys
    set status = 'completed', response_status = ${response.status}::integer,
        response_headers = ${JSON.stringify(response.headers)}::jsonb, response_body = ${response.body}::bytea
    where client_id = ${ref.clientId}::uuid and idempotency_key = ${ref.key}::uuid
  `.execute(db);
  if (result.numAffectedRows !== 1n) throw new Error(`idempotency claim ${ref.clientId}/${ref.key} vanished before completion`);
}

/**
 * Stores an outcome reached without a claim (a 4xx whose transaction was rolled back). Returns
 * false when another request with the key stored its own first; that one then stands.
 */
export async function insertCompletedKey(db: Executor, ref: KeyRef, fingerprint: string, expiresAt: Date, response: StoredResponse): Promise<boolean> {
  const row = await db
    .insertInto('idempotency_keys')
    .values({
      client_id: ref.clientId,
      idempotency_key: ref.key,
      fingerprint,
      status: 'completed',
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: response.body,
      expires_at: expiresAt,
    })
    .onConflict((oc) => oc.columns(['client_id', 'idempotency_key']).doNothing())
    .returning('client_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The key's row with its outcome, written by the effect's own write statement (see ResponseInWrite):
 * a plain insert, no ON CONFLICT, so a duplicate fails that statement on the primary key (isKeyTaken)
 * and the effect rolls back with it. A duplicate still running holds its uncommitted row, so the
 * insert waits for it to end rather than taking the key from under it.
 */
export function storeResponseAlongside(ref: KeyRef, fingerprint: string, expiresAt: Date, response: StoredResponse): WriteAlongside {
  return sql`
    insert into idempotency_keys (client_id, idempotency_key, fingerprint, status, response_status, response_headers, response_body, expires_at)
    values (${ref.clientId}::uuid, ${ref.key}::uuid, ${fingerprint}::text, 'completed', ${response.status}::integer,
            ${JSON.stringify(response.headers)}::jsonb, ${response.body}::bytea, ${expiresAt}::timestamptz)
  `;
}

/** The failure of storeResponseAlongside's insert when the key was stored first by another request. */
export function isKeyTaken(error: unknown): boolean {
  const failure = error as { code?: unknown; constraint?: unknown } | null;
  return failure?.code === '23505' && failure.constraint === 'idempotency_keys_pkey';
}

/** Drops this transaction's claim (an effect that answered 5xx: the client may retry). */
export async function deleteClaim(db: Executor, ref: KeyRef): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('client_id', '=', ref.clientId).where('idempotency_key', '=', ref.key).where('status', '=', 'in_flight').execute();
}

/** Deletes expired keys in batches so a large backlog never holds its row locks for long. */
export async function deleteExpiredKeys(db: Executor, now: Date, batchSize = 10_000): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await sql<{ deleted: number }>`
      with doomed as (
        select client_id, idempotency_key from idempotency_keys
        where expires_at < ${now} limit ${batchSize}
      )
      delete from idempotency_keys k using doomed d
      where k.client_id = d.client_id and k.idempotency_key = d.idempotency_key
    `.execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
