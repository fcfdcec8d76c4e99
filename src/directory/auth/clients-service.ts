import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { Client, ClientRole } from '../../platform/db/tables.ts';
import { findProviderConnection } from '../payrolls/directory-repository.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { pageOf, type PagingQuery } from '../../platform/shared/paging.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { toClientResource, type ClientResource } from './client-resource.ts';
import {
  findClientById,
  findClientForUpdate,
  insertApiKey,
  insertClient,
  listActiveApiKeys,
  listClients,
  replaceClientSecret,
  revokeApiKeys,
  setClientDisabled,
} from './clients-repository.ts';
import { defaultScopesByRole, type Scope } from './scopes.ts';
import { generateSecret, hashSecret, keyPrefix } from './secrets.ts';

export interface NewClientRequest {
  name: string;
  role: ClientRole;
  scopes?: readonly Scope[];
  payrollProviderId?: string | null;
  /** A sandbox client sees only sandbox data (see Caller.sandbox); false unless given. */
  sandbox?: boolean;
}

export interface IssuedCredentials {
  clientId: string;
  clientSecret: string;
  apiKey: string;
  role: ClientRole;
  scopes: string[];
}

/**
 * Creates a client with one API key. The plain secret and key exist only in the return value. With
 * an actor, the creation is audited (run it in a transaction with the insert, as the CLI does).
 */
export async function createClient(db: Executor, request: NewClientRequest, actor?: Actor): Promise<IssuedCredentials> {
  if (request.payrollProviderId && !(isUuid(request.payrollProviderId) && (await findProviderConnection(db, request.payrollProviderId)))) {
    throw new InvalidError('unknown-payroll-provider', `payroll_provider_id ${request.payrollProviderId} is not a known payroll provider`, {
      errors: [{ pointer: '/payroll_provider_id', detail: 'is not a known payroll provider' }],
    });
  }
  const clientSecret = generateSecret('cs');
  const apiKey = generateSecret('ak');
  const scopes = [...(request.scopes ?? defaultScopesByRole[request.role])];
  const client = await insertClient(db, {
    name: request.name,
    role: request.role,
    secret_hash: hashSecret(clientSecret),
    scopes,
    payroll_provider_id: request.payrollProviderId ?? null,
    sandbox: request.sandbox ?? false,
  });
  const key = await insertApiKey(db, client.id, hashSecret(apiKey), keyPrefix(apiKey));
  if (actor) {
    await recordAction(db, {
      actor,
      action: 'client.created',
      resourceType: 'client',
      resourceId: client.id,
      reason: null,
      after: { ...clientSummary(client, [key.key_prefix]), scopes, payroll_provider_id: client.payroll_provider_id },
    });
  }
  return { clientId: client.id, clientSecret, apiKey, role: client.role, scopes };
}

/** One client as operators see it: never its secret or keys, only their prefixes. */
export async function getClientResource(db: Executor, clientId: string): Promise<ClientResource> {
  const client = isUuid(clientId) ? await findClientById(db, clientId) : undefined;
  if (!client) throw new NotFoundError(`Client ${clientId}`);
  return resourceOf(db, client);
}

// Managing clients: list, disable and enable, rotate the secret or the API key ---------------------
//
// Each change is audited in its own transaction and reaches every API process within the
// authentication cache's lifetime (CLIENT_CACHE_TTL_MS, see ./revocation.ts).

export interface ClientChange {
  actor: Actor;
  reason: string;
}

export async function listClientResources(db: Executor, paging: PagingQuery) {
  const { items, paging: page } = pageOf(await listClients(db, paging), paging);
  const keys = await listActiveApiKeys(
    db,
    items.map((client) => client.id),
  );
  return {
    clients: items.map((client) =>
      toClientResource(
        client,
        keys.filter((key) => key.client_id === client.id),
      ),
    ),
    paging: page,
  };
}

async function clientToChange(trx: Executor, clientId: string, change: ClientChange): Promise<{ client: Client; reason: string }> {
  const reason = change.reason.trim();
  if (reason === '') throw new InvalidError('reason-required', 'A change to a client needs a reason', { errors: [{ pointer: '/reason', detail: 'is required' }] });
  const client = isUuid(clientId) ? await findClientForUpdate(trx, clientId) : undefined;
  if (!client) throw new NotFoundError(`Client ${clientId}`);
  return { client, reason };
}

async function resourceOf(trx: Executor, client: Client): Promise<ClientResource> {
  return toClientResource(client, await listActiveApiKeys(trx, [client.id]));
}

/** What the audit log keeps of a client: its state, never a credential or a hash of one. */
function clientSummary(client: Client, apiKeyPrefixes?: readonly string[]) {
  return {
    name: client.name,
    role: client.role,
    disabled_at: client.disabled_at,
    secret_version: client.secret_version,
    ...(apiKeyPrefixes ? { api_keys: apiKeyPrefixes } : {}),
  };
}

/** Its tokens and API keys stop working and it gets no new token; nothing is deleted. */
export async function disableClient(trx: Executor, clientId: string, change: ClientChange): Promise<ClientResource> {
  const { client, reason } = await clientToChange(trx, clientId, change);
  if (client.disabled_at) throw new ConflictError('client-already-disabled', `Client ${clientId} is already disabled`);
  const disabled = await setClientDisabled(trx, client.id, true);
  await recordAction(trx, {
    actor: change.actor,
    action: 'client.disabled',
    resourceType: 'client',
    resourceId: client.id,
    reason,
    before: clientSummary(client),
    after: clientSummary(disabled),
  });
  return resourceOf(trx, disabled);
}

/** Undoes a disable: its current secret, unrevoked keys and tokens of the current secret work again. */
export async function enableClient(trx: Executor, clientId: string, change: ClientChange): Promise<ClientResource> {
  const { client, reason } = await clientToChange(trx, clientId, change);
  if (!client.disabled_at) throw new ConflictError('client-not-disabled', `Client ${clientId} is not disabled`);
  const enabled = await setClientDisabled(trx, client.id, false);
  await recordAction(trx, {
    actor: change.actor,
    action: 'client.enabled',
    resourceType: 'client',
    resourceId: client.id,
    reason,
    before: clientSummary(client),
    after: clientSummary(enabled),
  });
  return resourceOf(trx, enabled);
}

/**
 * A new client secret, shown this once. The old secret gets no token from now on, and tokens issued
 * against it are refused (they carry the secret version they were issued for).
 */
export async function rotateClientSecret(trx: Executor, clientId: string, change: ClientChange): Promise<{ client: ClientResource; clientSecret: string }> {
  const { client, reason } = await clientToChange(trx, clientId, change);
  const clientSecret = generateSecret('cs');
  const rotated = await replaceClientSecret(trx, client.id, hashSecret(clientSecret));
  await recordAction(trx, {
    actor: change.actor,
    action: 'client.secret_rotated',
    resourceType: 'client',
    resourceId: client.id,
    reason,
    before: clientSummary(client),
    after: clientSummary(rotated),
  });
  return { client: await resourceOf(trx, rotated), clientSecret };
}

/** A new API key, shown this once; every key the client had is revoked. */
export async function rotateClientApiKey(trx: Executor, clientId: string, change: ClientChange): Promise<{ client: ClientResource; apiKey: string }> {
  const { client, reason } = await clientToChange(trx, clientId, change);
  const apiKey = generateSecret('ak');
  const revoked = await revokeApiKeys(trx, client.id);
  const issued = await insertApiKey(trx, client.id, hashSecret(apiKey), keyPrefix(apiKey));
  await recordAction(trx, {
    actor: change.actor,
    action: 'client.api_key_rotated',
    resourceType: 'client',
    resourceId: client.id,
    reason,
    before: clientSummary(client, revoked),
    after: clientSummary(client, [issued.key_prefix]),
  });
  return { client: await resourceOf(trx, client), apiKey };
}
