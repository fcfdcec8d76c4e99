import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';

export interface KeyRef {
  clientId: string;
  key: string;
}

/** Inserts an in-flight claim; returns false when the key already exists for this client. */
export async function insertClaim(db: Executor, ref: KeyRef, fingerprint: string, expiresAt: Date): Promise<boolean> {
  const row = await db
    .insertInto('idempotency_keys')
    .values({ client_id: ref.clientId, idempotency_key: ref.key, fingerprint, expires_at: expiresAt })
    .onConflict((oc) => oc.columns(['client_id', 'idempotency_key']).doNothing())
    .returning('client_id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function findKey(db: Executor, ref: KeyRef) {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('idempotency_key', '=', ref.key)
    .executeTakeFirst();
}

/** Takes over a claim whose request died mid-flight (process crash), if nobody else did first. */
export async function reclaimAbandoned(db: Executor, ref: KeyRef, staleBefore: Date, expiresAt: Date): Promise<boolean> {
  const row = await db
    .updateTable('idempotency_keys')
    .set({ created_at: sql`now()` as any, expires_at: expiresAt })
    .where('client_id', '=', ref.clientId)
    .where('idempotency_key', '=', ref.key)
    .where('status', '=', 'in_flight')
    .where('created_at', '<', staleBefore)
    .returning('client_id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function completeKey(
  db: Executor,
  ref: KeyRef,
  response: { status: number; headers: Record<string, string>; body: Buffer },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      status: 'completed',
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: response.body,
    })
    .where('client_id', '=', ref.clientId)
    .where('idempotency_key', '=', ref.key)
    .executeTakeFirstOrThrow();
}

export async function deleteClaim(db: Executor, ref: KeyRef): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('client_id', '=', ref.clientId)
    .where('idempotency_key', '=', ref.key)
    .where('status', '=', 'in_flight')
    .execute();
}

/** Deletes expired keys in batches so a large backlog never holds one long lock. */
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
