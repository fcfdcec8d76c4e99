import type { Client } from '../../platform/db/tables.ts';

/**
 * How long an API process trusts what it last read about a client (its row, and which client an
 * API key belongs to). It bounds how soon a disable, a secret rotation or an API key rotation made
 * by any process (the API or the CLI) takes effect everywhere: within this, plus one database read.
 * Two seconds costs about one query per active client per credential per two seconds per process.
 */
export const CLIENT_CACHE_TTL_MS = 2_000;

/**
 * A token stands while its client is enabled and the token was issued against the client's current
 * secret or a newer one (a process may briefly hold the row from before a rotation). A token with no
 * secret version (an external issuer's, or one of ours issued before versions existed, which expires
 * within AUTH_TOKEN_TTL_SECONDS) is judged by the client's state alone.
 */
export function tokenStillHonoured(client: Pick<Client, 'disabled_at' | 'secret_version'>, secretVersion: number | undefined): boolean {
  if (client.disabled_at !== null) return false;
  return secretVersion === undefined || secretVersion >= client.secret_version;
}
