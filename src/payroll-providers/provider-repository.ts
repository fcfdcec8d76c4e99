import type { Insertable } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { PayrollProvidersTable } from '../db/tables.ts';

// The payroll providers' own rows: how we reach them, with their client secrets sealed at rest.

/** The caller seals api_client_secret first (see provider-credentials.ts). */
export async function insertPayrollProvider(db: Executor, provider: Insertable<PayrollProvidersTable>) {
  return db.insertInto('payroll_providers').values(provider).returningAll().executeTakeFirstOrThrow();
}

/** Providers' stored client secrets, row-locked: for re-sealing them under the current master key. */
export async function lockProviderClientSecrets(db: Executor) {
  return db
    .selectFrom('payroll_providers')
    .select(['id', 'api_client_secret'])
    .where('api_client_secret', 'is not', null)
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function updateProviderClientSecret(db: Executor, providerId: string, apiClientSecret: string) {
  await db.updateTable('payroll_providers').set({ api_client_secret: apiClientSecret }).where('id', '=', providerId).execute();
}
