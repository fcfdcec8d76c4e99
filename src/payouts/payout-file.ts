import { stringify } from 'csv-stringify/sync';
import { formatMinorUnits } from '../money/major-units.ts';
import { neutraliseFormula } from '../shared/csv-cells.ts';

export const payoutFileColumns = [
  'payout_id',
  'reference',
  'biller',
  'currency',
  'amount',
  'account_holder_name',
  'sort_code',
  'account_number',
  'payout_date',
  'status',
] as const;

export interface PayoutFileRow {
  id: string;
  reference: string;
  biller: string;
  currency: string;
  amount: number;
  account_holder_name: string;
  sort_code: string;
  account_number: string;
  payout_date: string;
  status: string;
}

/**
 * The bank payment file finance uploads: one transfer per payout, money as a decimal string. One row per
 * biller and currency, so it is small enough to build in memory.
 */
export function renderPayoutFile(rows: readonly PayoutFileRow[]): string {
  return stringify(
    rows.map((row) => [
      row.id,
      row.reference,
      neutraliseFormula(row.biller),
      row.currency,
      formatMinorUnits(row.amount, row.currency),
      neutraliseFormula(row.account_holder_name),
      row.sort_code,
      row.account_number,
      row.payout_date,
      row.status,
    ]),
    { header: true, columns: [...payoutFileColumns] },
  );
}

export function payoutFileName(payoutDate: string): string {
  return `payouts-${payoutDate}.csv`;
}
