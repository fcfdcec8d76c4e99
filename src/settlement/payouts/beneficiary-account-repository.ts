import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

export interface BeneficiaryAccountDetails {
  account_number: string;
  sort_code: string;
  account_holder_name: string;
}

/** The biller's active account in the currency, row-locked so two replacements queue up. */
export async function rowLockActiveBeneficiaryAccount(db: Executor, billerClientId: string, currency: string) {
  return db
    .selectFrom('beneficiary_accounts')
    .selectAll()
    .where('biller_client_id', '=', billerClientId)
    .where('currency', '=', currency)
    .where('active', '=', true)
    .forUpdate()
    .executeTakeFirst();
}

/** The only change a beneficiary account row ever takes (the table's trigger refuses any other). */
export async function deactivateBeneficiaryAccount(db: Executor, accountId: string) {
  return db
    .updateTable('beneficiary_accounts')
    .set({ active: false, deactivated_at: sql<Date>`now()` })
    .where('id', '=', accountId)
    .where('active', '=', true)
    .returningAll()
    .executeTakeFirst();
}

export async function insertBeneficiaryAccount(db: Executor, billerClientId: string, currency: string, details: BeneficiaryAccountDetails) {
  return db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: billerClientId, currency, ...details })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every account the biller has had, newest first: the history a replacement leaves. */
export async function listBeneficiaryAccounts(db: Executor, billerClientId: string) {
  return db
    .selectFrom('beneficiary_accounts')
    .selectAll()
    .where('biller_client_id', '=', billerClientId)
    .orderBy('currency')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findBillerClient(db: Executor, clientId: string) {
  return db.selectFrom('clients').select(['id', 'role']).where('id', '=', clientId).executeTakeFirst();
}
