import { z } from 'zod';
import type { Client } from '../../platform/db/tables.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';

export const clientApiKeySchema = z.object({ id: z.uuid(), key_prefix: z.string(), created_at: z.iso.datetime() }).meta({
  id: 'ClientApiKey',
  description: 'An API key in use, known by its first characters only; the key itself is shown once, when issued.',
  example: { id: exampleIds.apiKey, key_prefix: 'ak_72d58bc', created_at: exampleInstants.created },
});

/** The example every client view of /openapi.json shows. */
const clientExample = {
  id: exampleIds.biller,
  name: 'Northwind Lending',
  role: 'biller',
  scopes: ['availability:check', 'mandates:write', 'mandates:read', 'payments:write', 'payments:read'],
  payroll_provider_id: null,
  created_at: exampleInstants.created,
  disabled_at: null,
  secret_version: 1,
  api_keys: [{ id: exampleIds.apiKey, key_prefix: 'ak_72d58bc', created_at: exampleInstants.created }],
};

/** What operators see of a client: never its secret or keys, which are stored hashed anyway. */
export const clientResponseSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(['biller', 'payroll_provider', 'operator']),
    scopes: z.array(z.string()),
    payroll_provider_id: z.uuid().nullable(),
    created_at: z.iso.datetime(),
    disabled_at: z.iso.datetime().nullable(),
    /** Raised by each secret rotation; tokens issued against an older secret are refused. */
    secret_version: z.number().int(),
    /** Its API keys in use, by prefix. */
    api_keys: z.array(clientApiKeySchema),
  })
  .meta({
    id: 'Client',
    description: 'An API client: a biller, a payroll provider or an operator, with the scopes it may be granted. Never its secret or keys.',
    example: clientExample,
  });

export type ClientResource = z.infer<typeof clientResponseSchema>;

export const clientEnvelopeSchema = z.object({ client: clientResponseSchema }).meta({ id: 'ClientEnvelope', description: 'One client.', example: { client: clientExample } });
export const clientsPageSchema = z.object({ clients: z.array(clientResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'ListClientsResponse',
  description: 'A page of clients, newest first.',
  example: { clients: [clientExample], paging: pagingExample },
});
/** Only the answer to the rotation carries the new secret; a replay of it shows it masked. */
export const clientSecretRotationSchema = z.object({ client: clientResponseSchema, client_secret: z.string() }).meta({
  id: 'ClientSecretRotation',
  description: 'The client and its new secret, shown this once (a replay of the same request shows it masked).',
  example: { client: { ...clientExample, secret_version: 2 }, client_secret: 'cs_97t9SUsUr1YmEJbJH70wen69AjIAAKwfABhEd02D00Q' },
});
export const clientApiKeyRotationSchema = z.object({ client: clientResponseSchema, api_key: z.string() }).meta({
  id: 'ClientApiKeyRotation',
  description: 'The client and its new API key, shown this once (a replay of the same request shows it masked).',
  example: { client: clientExample, api_key: 'ak_72d58bcOCEd1pgihvP7ZWmM2_ovLddWflfi-UZGqEGc' },
});

export type ClientRow = Pick<Client, 'id' | 'name' | 'role' | 'scopes' | 'payroll_provider_id' | 'created_at' | 'disabled_at' | 'secret_version'>;

export function toClientResource(row: ClientRow, apiKeys: ReadonlyArray<{ id: string; key_prefix: string; created_at: Date }>): ClientResource {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    scopes: row.scopes,
    payroll_provider_id: row.payroll_provider_id,
    created_at: isoInstant(row.created_at),
    disabled_at: row.disabled_at === null ? null : isoInstant(row.disabled_at),
    secret_version: row.secret_version,
    api_keys: apiKeys.map((key) => ({ id: key.id, key_prefix: key.key_prefix, created_at: isoInstant(key.created_at) })),
  };
}
