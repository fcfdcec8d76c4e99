import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { NewClient } from '../../platform/db/tables.ts';
import { type PagingQuery } from '../../platform/shared/paging.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';

export async function insertClient(db: Executor, client: NewClient) {
  return db.insertInto('clients').values(client).returningAll().executeTakeFirstOrThrow();
}

export async function insertApiKey(db: Executor, clientId: string, keyHash: string, keyPrefix: string) {
  return db
    .insertInto('api_keys')
    .values({ client_id: clientId, key_hash: keyHash, key_prefix: keyPrefix })
    .returning(['id', 'key_prefix', 'created_at'])
    .executeTakeFirstOrThrow();
}

export async function findClientById(db: Executor, clientId: string) {
  return db.selectFrom('clients').selectAll().where('id', '=', clientId).executeTakeFirst();
}

/** Row-locked: one credential change of a client at a time. */
export async function findClientForUpdate(db: Executor, clientId: string) {
  return db.selectFrom('clients').selectAll().where('id', '=', clientId).forUpdate().executeTakeFirst();
}

/** The client an unrevoked API key belongs to. */
export async function findClientByApiKeyHash(db: Executor, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('clients', 'clients.id', 'api_keys.client_id')
    .selectAll('clients')
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

const clientListing = ['id', 'name', 'role', 'scopes', 'payroll_provider_id', 'created_at', 'disabled_at', 'secret_version'] as const;

export async function listClients(db: Executor, paging: PagingQuery) {
  return applyPaging(db.selectFrom('clients').select(clientListing), 'clients', paging).execute();
}

/** The unrevoked keys of these clients (by prefix only: keys are stored hashed). */
export async function listActiveApiKeys(db: Executor, clientIds: readonly string[]) {
  if (clientIds.length === 0) return [];
  return db
    .selectFrom('api_keys')
    .select(['id', 'client_id', 'key_prefix', 'created_at'])
    .where('client_id', 'in', clientIds)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .execute();
}

export async function setClientDisabled(db: Executor, clientId: string, disabled: boolean) {
  return db
    .updateTable('clients')
    .set({ disabled_at: disabled ? sql<Date>`now()` : null })
    .where('id', '=', clientId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The new secret's hash, and a new secret version: tokens of the old one stop working. */
export async function replaceClientSecret(db: Executor, clientId: string, secretHash: string) {
  return db
    .updateTable('clients')
    .set((eb) => ({ secret_hash: secretHash, secret_version: eb('secret_version', '+', 1) }))
    .where('id', '=', clientId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function revokeApiKeys(db: Executor, clientId: string): Promise<string[]> {
  const rows = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`now()` })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .returning('key_prefix')
    .execute();
  return rows.map((row) => row.key_prefix);
}
