import type { Executor } from '../db/connection.ts';
import type { NewClient } from '../db/tables.ts';

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

export async function listClients(db: Executor) {
  return db.selectFrom('clients').select(['id', 'name', 'role', 'scopes', 'created_at', 'disabled_at']).orderBy('created_at').execute();
}
