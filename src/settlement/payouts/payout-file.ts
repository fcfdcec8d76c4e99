import { stringify } from 'csv-stringify/sync';
import { formatMinorUnits } from '../../platform/money/major-units.ts';
import { neutraliseFormula } from '../../platform/shared/csv-cells.ts';
import { pain001TotalsFit } from './pain001-file.ts';
import type { PayoutFileRow } from './payment-file-repository.ts';

export type { PayoutFileRow };

// A payment file instructs the bank to make payouts. It is written once, numbered within its payout date,
// and kept (src/settlement/payouts/payment-file-service.ts); these are its pure parts: its MsgId, its names, how
// payouts are spread over files, and its CSV rendering.

/** The CSV rendering's columns: the payout's transfer, then the file it is instructed in. */
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
  'message_id',
  'requested_execution_date',
] as const;

/** What makes a payment file itself, the same in both its renderings. */
export interface PaymentFileIdentity {
  /** The pain.001 MsgId (paymentFileMessageId). */
  messageId: string;
  /** The pain.001 ReqdExctnDt (payoutExecutionDate). */
  requestedExecutionDate: string;
}

/**
 * The CSV rendering of a payment file: one row per payout it instructs, the same payouts as its
 * pain.001, money as a decimal string, each row naming the file's MsgId and requested execution date.
 * `status` is the payout's as the file was written (pending): the file is a record, not a live report.
 */
export function renderPayoutFile(identity: PaymentFileIdentity, rows: readonly PayoutFileRow[]): string {
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
      identity.messageId,
      identity.requestedExecutionDate,
    ]),
    { header: true, columns: [...payoutFileColumns] },
  );
}

/** A file's number within its payout date as names and ids write it: at least two digits. */
function sequenceText(sequence: number): string {
  if (!Number.isSafeInteger(sequence) || sequence < 1) throw new RangeError(`A payment file's number is a positive integer, got ${sequence}`);
  return String(sequence).padStart(2, '0');
}

/**
 * A payment file's MsgId: 'SDPO', the payout date as YYMMDD, the file's number within the date and
 * eight hex digits of the file's random id (`SDPO261103-02-7C1E09A2`). Each file has its own: a bank
 * refuses a MsgId it has seen as a duplicate upload, so uploading one file twice is caught, and no two
 * files share one (the random part keeps a restored database or another installation from reusing one).
 */
export function paymentFileMessageId(payoutDate: string, sequence: number, fileId: string): string {
  const yymmdd = payoutDate.slice(2).replaceAll('-', '');
  return `SDPO${yymmdd}-${sequenceText(sequence)}-${fileId.replaceAll('-', '').slice(0, 8).toUpperCase()}`;
}

export const PAYMENT_FILE_FORMATS = ['csv', 'pain.001'] as const;
export type PaymentFileFormat = (typeof PAYMENT_FILE_FORMATS)[number];

/** `payouts-2026-11-03-01.csv`, `payouts-2026-11-03-01.pain.001.xml`: the date and the file's number. */
export function paymentFileName(payoutDate: string, sequence: number, format: PaymentFileFormat): string {
  return `payouts-${payoutDate}-${sequenceText(sequence)}.${format === 'csv' ? 'csv' : 'pain.001.xml'}`;
}

/**
 * The payouts of one writing, spread over as few files as their totals allow, in their order: almost
 * always one file; a new one is started only when the next payout would take a control sum past the
 * 18 digits a pain.001 message allows (pain001TotalsFit). Every payout is in exactly one batch.
 */
export function paymentFileBatches<P extends { amount: number; currency: string }>(payouts: readonly P[]): P[][] {
  const batches: P[][] = [];
  let batch: P[] = [];
  let totals = new Map<string, bigint>();
  for (const payout of payouts) {
    if (!Number.isSafeInteger(payout.amount) || payout.amount <= 0) throw new RangeError(`A transfer needs a positive amount in minor units, got ${payout.amount}`);
    const next = new Map(totals).set(payout.currency, (totals.get(payout.currency) ?? 0n) + BigInt(payout.amount));
    if (batch.length > 0 && !pain001TotalsFit(next)) {
      batches.push(batch);
      batch = [];
      totals = new Map([[payout.currency, BigInt(payout.amount)]]);
    } else {
      totals = next;
    }
    batch.push(payout);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
