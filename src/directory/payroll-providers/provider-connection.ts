/**
 * How we reach a payroll provider: its HTTP reference interface, with the OAuth client credentials
 * we present to it, or instruction files only. The client secret is opaque here: sealed when read
 * from the database, plain when an operator has just given it.
 */
export type ProviderConnectionSetting = { kind: 'files' } | { kind: 'reference_api'; base_url: string; token_url: string; client_id: string; client_secret: string };

/** A connection as stored: rows written before this rule may lack the credentials (the adapter then calls without a token). */
export type StoredProviderConnection =
  { kind: 'files' } | { kind: 'reference_api'; base_url: string; token_url: string | null; client_id: string | null; client_secret: string | null };

/** What an operator changes of a connection: a switch to files, or some of the reference interface's fields. */
export type ProviderConnectionChange =
  | { kind: 'files' }
  | { kind: 'reference_api'; base_url?: string | undefined; token_url?: string | undefined; client_id?: string | undefined; client_secret?: string | undefined };

type ReferenceApiField = 'base_url' | 'token_url' | 'client_id' | 'client_secret';
const referenceApiFields: readonly ReferenceApiField[] = ['base_url', 'token_url', 'client_id', 'client_secret'];

export type ConnectionChangeOutcome = { connection: ProviderConnectionSetting; secretReplaced: boolean } | { missing: ReferenceApiField[] };

/**
 * The connection after a change. A field of the reference interface left out keeps its current
 * value, so a secret is rotated without repeating the URLs and the URLs change without the secret;
 * a provider served by files that moves to the interface must be given every field. secretReplaced
 * says whether the secret is a new one (to be sealed before it is stored).
 */
export function connectionAfterChange(current: StoredProviderConnection, change: ProviderConnectionChange): ConnectionChangeOutcome {
  if (change.kind === 'files') return { connection: { kind: 'files' }, secretReplaced: false };
  const kept = current.kind === 'reference_api' ? current : undefined;
  const value = (field: ReferenceApiField) => change[field] ?? kept?.[field] ?? undefined;
  const missing = referenceApiFields.filter((field) => value(field) === undefined);
  if (missing.length > 0) return { missing };
  return {
    connection: {
      kind: 'reference_api',
      base_url: value('base_url')!,
      token_url: value('token_url')!,
      client_id: value('client_id')!,
      client_secret: value('client_secret')!,
    },
    secretReplaced: change.client_secret !== undefined,
  };
}

/** The stored columns' reading: a base URL means the reference interface (see http-adapter.ts). */
export function connectionOfColumns(row: {
  api_base_url: string | null;
  api_token_url: string | null;
  api_client_id: string | null;
  api_client_secret: string | null;
}): StoredProviderConnection {
  if (row.api_base_url === null) return { kind: 'files' };
  return { kind: 'reference_api', base_url: row.api_base_url, token_url: row.api_token_url, client_id: row.api_client_id, client_secret: row.api_client_secret };
}
