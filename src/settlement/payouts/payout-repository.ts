import type { SelectQueryBuilder } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { DB } from '../../platform/db/tables.ts';
import { type PagingQuery } from '../../platform/shared/paging.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';

export interface PayoutFilters {
  status?: 'pending' | 'paid' | 'failed' | undefined;
  currency?: string | undefined;
  billerClientId?: string | undefined;
  payoutDate?: string | undefined;
}

/**
 * Whose payouts a caller sees: a biller its own; an operator every live biller's, since a sandbox
 * biller's payouts are simulated money and not part of running the service.
 */
export type PayoutAudience = { billerClientId: string } | { liveBillers: true };

function restrictTo<QB extends SelectQueryBuilder<DB, 'payouts', object>>(query: QB, audience: PayoutAudience): QB {
  if ('billerClientId' in audience) return query.where('payouts.biller_client_id', '=', audience.billerClientId) as QB;
  return query.where('payouts.biller_client_id', 'in', (eb) => eb.selectFrom('clients').select('id').where('sandbox', '=', false)) as QB;
}

export async function findPayout(db: Executor, audience: PayoutAudience, payoutId: string) {
  return restrictTo(db.selectFrom('payouts').selectAll().where('id', '=', payoutId), audience).executeTakeFirst();
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

export async function listPayouts(db: Executor, audience: PayoutAudience, filters: PayoutFilters, paging: PagingQuery) {
  let query = restrictTo(db.selectFrom('payouts').selectAll(), audience);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.currency) query = query.where('currency', '=', filters.currency);
  if (filters.billerClientId) query = query.where('biller_client_id', '=', filters.billerClientId);
  if (filters.payoutDate) query = query.where('payout_date', '=', filters.payoutDate);
  return applyPaging(query, 'payouts', paging).execute();
}
