import type { Executor } from '../db/connection.ts';
import type { ClientRole } from '../db/tables.ts';
import { findProviderConnection } from '../payroll-providers/directory-repository.ts';
import { insertApiKey, insertClient } from './clients-repository.ts';
import { defaultScopesByRole, type Scope } from './scopes.ts';
import { generateSecret, hashSecret, keyPrefix } from './secrets.ts';

export interface NewClientRequest {
  name: string;
  role: ClientRole;
  scopes?: readonly Scope[];
  payrollProviderId?: string | null;
}

export interface IssuedCredentials {
  clientId: string;
  clientSecret: string;
  apiKey: string;
  role: ClientRole;
  scopes: string[];
}

export class UnknownPayrollProviderError extends Error {
  override readonly name = 'UnknownPayrollProviderError';

  constructor(readonly providerId: string) {
    super(`Payroll provider ${providerId} does not exist`);
  }
}

/** Creates a client with one API key. The plain secret and key exist only in the return value. */
export async function createClient(db: Executor, request: NewClientRequest): Promise<IssuedCredentials> {
  if (request.payrollProviderId && !(await findProviderConnection(db, request.payrollProviderId))) {
    throw new UnknownPayrollProviderError(request.payrollProviderId);
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
  });
  await insertApiKey(db, client.id, hashSecret(apiKey), keyPrefix(apiKey));
  return { clientId: client.id, clientSecret, apiKey, role: client.role, scopes };
}
