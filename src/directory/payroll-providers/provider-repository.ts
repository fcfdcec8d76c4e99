import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { PayrollProvidersTable } from '../../platform/db/tables.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';

// The payroll providers' own rows: how we reach them, with their client secrets sealed at rest.

/** The caller seals api_client_secret first (see provider-credentials.ts). */
export async function insertPayrollProvider(db: Executor, provider: Insertable<PayrollProvidersTable>) {
  return db.insertInto('payroll_providers').values(provider).returningAll().executeTakeFirstOrThrow();
}

/** Providers' stored client secrets, row-locked: for re-sealing them under the current master key. */
export async function rowLockProviderClientSecrets(db: Executor) {
  return db.selectFrom('payroll_providers').select(['id', 'api_client_secret']).where('api_client_secret', 'is not', null).orderBy('id').forUpdate().execute();
}

export async function updateProviderClientSecret(db: Executor, providerId: string, apiClientSecret: string) {
  await db.updateTable('payroll_providers').set({ api_client_secret: apiClientSecret }).where('id', '=', providerId).execute();
}

export async function findPayrollProvider(db: Executor, providerId: string, options: { rowLock?: boolean } = {}) {
  let query = db.selectFrom('payroll_providers').selectAll().where('id', '=', providerId);
  if (options.rowLock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function listPayrollProviders(db: Executor, paging: PagingQuery) {
  return applyPaging(db.selectFrom('payroll_providers').selectAll(), 'payroll_providers', paging).execute();
}

/** The caller seals a new api_client_secret first (see provider-credentials.ts). */
export async function updatePayrollProvider(db: Executor, providerId: string, fields: Updateable<PayrollProvidersTable>) {
  return db
    .updateTable('payroll_providers')
    .set((eb) => ({ ...fields, updated_at: eb.fn<Date>('now') }))
    .where('id', '=', providerId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
