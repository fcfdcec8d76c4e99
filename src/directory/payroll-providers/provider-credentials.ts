import type { Executor } from '../../platform/db/connection.ts';
import type { BankHolidayRegion } from '../../platform/db/tables.ts';
import { isSealed, SecretsKeyError, type SecretBox } from '../../platform/shared/secret-box.ts';
import { insertPayrollProvider, rowLockProviderClientSecrets, updateProviderClientSecret } from './provider-repository.ts';

// A provider's api_client_secret is ours to present to it, so it is stored sealed (see
// src/platform/shared/secret-box.ts) and opened only by the adapter that calls the provider.

const PURPOSE = 'payroll-provider-client-secret';

export function sealProviderClientSecret(secrets: SecretBox, clientSecret: string): string {
  return secrets.seal(clientSecret, PURPOSE);
}

/** The plain client secret; a sealed one needs the secret box. */
export function openProviderClientSecret(stored: string | null, secrets: SecretBox | undefined, providerId: string): string | null {
  if (stored === null || !isSealed(stored)) return stored;
  if (!secrets) throw new SecretsKeyError(`Payroll provider ${providerId}'s client secret is sealed, and this adapter was given no secrets key`);
  return secrets.open(stored, PURPOSE);
}

export interface NewPayrollProvider {
  name: string;
  apiBaseUrl: string | null;
  apiTokenUrl: string | null;
  apiClientId: string | null;
  apiClientSecret: string | null;
  leadTimeWorkingDays: number;
  /** Default england-and-wales. */
  region?: BankHolidayRegion;
  /** A sandbox provider: its data is seen only by sandbox clients. False unless given. */
  sandbox?: boolean;
}

/** A payroll provider with its API credentials; the client secret is stored sealed. */
export async function registerPayrollProvider(db: Executor, secrets: SecretBox, provider: NewPayrollProvider) {
  return insertPayrollProvider(db, {
    name: provider.name,
    api_base_url: provider.apiBaseUrl,
    api_token_url: provider.apiTokenUrl,
    api_client_id: provider.apiClientId,
    api_client_secret: provider.apiClientSecret === null ? null : sealProviderClientSecret(secrets, provider.apiClientSecret),
    lead_time_working_days: provider.leadTimeWorkingDays,
    ...(provider.region ? { region: provider.region } : {}),
    sandbox: provider.sandbox ?? false,
  });
}

/** Seals plain-text client secrets and re-wraps those under an earlier master key; returns how many changed. */
export async function resealProviderClientSecrets(trx: Executor, secrets: SecretBox): Promise<number> {
  let changed = 0;
  for (const row of await rowLockProviderClientSecrets(trx)) {
    if (row.api_client_secret === null || !secrets.needsResealing(row.api_client_secret)) continue;
    await updateProviderClientSecret(trx, row.id, secrets.reseal(row.api_client_secret, PURPOSE));
    changed += 1;
  }
  return changed;
}
