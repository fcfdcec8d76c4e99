import type { Executor } from '../db/connection.ts';
import { type PagingQuery } from '../shared/paging.ts';
import { applyPaging } from '../db/keyset-paging.ts';

export interface PayoutFilters {
  status?: 'pending' | 'paid' | 'failed' | undefined;
  currency?: string | undefined;
}

export async function findPayout(db: Executor, billerClientId: string, payoutId: string) {
  return db
    .selectFrom('payouts')
    .selectAll()
    .where('id', '=', payoutId)
    .where('biller_client_id', '=', billerClientId)
    .executeTakeFirst();
}

/** A payout's signed items, grouped by payment request so a reversal sits next to its collection. */
export async function listPayoutItems(db: Executor, payoutId: string) {
  return db
    .selectFrom('payout_items')
    .select(['payment_request_id', 'kind', 'amount'])
    .where('payout_id', '=', payoutId)
    .orderBy('payment_request_id')
    .orderBy('kind', 'desc')
    .orderBy('id')
    .execute();
}

export async function listPayouts(db: Executor, billerClientId: string, filters: PayoutFilters, paging: PagingQuery) {
  let query = db.selectFrom('payouts').selectAll().where('biller_client_id', '=', billerClientId);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.currency) query = query.where('currency', '=', filters.currency);
  return applyPaging(query, 'payouts', paging).execute();
}
