import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { UkBankAccount } from './bank-account-details.ts';

/** The active account of the currency, row-locked so two replacements queue up. */
export async function rowLockActiveCollectionAccount(db: Executor, currency: string) {
  return db.selectFrom('collection_accounts').selectAll().where('currency', '=', currency).where('active', '=', true).forUpdate().executeTakeFirst();
}

/** The only change a collection account row ever takes (the table's trigger refuses any other). */
export async function deactivateCollectionAccount(db: Executor, accountId: string) {
  return db
    .updateTable('collection_accounts')
    .set({ active: false, deactivated_at: sql<Date>`now()` })
    .where('id', '=', accountId)
    .where('active', '=', true)
    .returningAll()
    .executeTakeFirst();
}

export async function addCollectionAccount(db: Executor, currency: string, account: UkBankAccount) {
  return db
    .insertInto('collection_accounts')
    .values({ currency, ...account })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every collection account, active and replaced, per currency newest first: the history changes leave. */
export async function listCollectionAccounts(db: Executor, filters: { currency?: string | undefined }) {
  let query = db.selectFrom('collection_accounts').selectAll();
  if (filters.currency) query = query.where('currency', '=', filters.currency);
  return query.orderBy('currency').orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}
