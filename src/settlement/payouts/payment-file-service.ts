import { createHash, randomUUID } from 'node:crypto';
import { describeActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import { assertCalendarDate } from '../../directory/calendars/working-days.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { ConflictError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { listCollectionAccounts } from './collection-account-repository.ts';
import { renderPain001File } from './pain001-file.ts';
import {
  findPaymentFile,
  findPaymentFileContent,
  findPaymentFileOfDate,
  insertPaymentFile,
  listPaymentFilesOfDate,
  listPayoutsToInstruct,
  advisoryLockPaymentFilesOfDate,
  nextPaymentFileSequence,
  type PaymentFileSummaryRow,
} from './payment-file-repository.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import { payoutExecutionDate } from './payout-calendar.ts';
import { loadClearingHolidays } from './payout-service.ts';
import { paymentFileBatches, paymentFileMessageId, paymentFileName, renderPayoutFile, type PaymentFileFormat } from './payout-file.ts';

// Payment files: how payouts are instructed to the bank, each exactly once.
//
// A file is written once, from the payouts of a payout date that no file holds yet (pending payouts of
// live billers), numbered within the date, and stored: its MsgId, its CreDtTm, the payouts it holds
// (payment_file_payouts, whose key is the payout: no payout can be in two files) and the exact bytes of
// both renderings, the pain.001 and the CSV, with their SHA-256. Downloading it again gives those bytes.
// Payouts made after a file was written go into the date's next file, under a new MsgId, holding only
// them. A payout marked failed is never instructed again: its money is paid by a new payout, with its
// own reference (the EndToEndId), which goes into a file of its own date.

/** The media types of a file's renderings. */
export const PAYMENT_FILE_CONTENT_TYPES: Record<PaymentFileFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  'pain.001': 'application/xml',
};

/** UK clearing's day is London's, wherever the service runs: the day a file is written is read there. */
const CLEARING_TIME_ZONE = 'Europe/London';

export interface WritePaymentFilesOptions {
  /** Who writes the files: kept on each and in the audit log. */
  actor: Actor;
  /** When: the files' CreDtTm, to the second (default now). */
  now?: Date;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The whole second of an instant: the CreDtTm the pain.001 carries is the instant stored. */
function wholeSecond(instant: Date): Date {
  return new Date(Math.floor(instant.getTime() / 1000) * 1000);
}

/**
 * Writes the payment files of the payouts made on `payoutDate` that no file holds yet, in the caller's
 * transaction (which must be one: the date's files are written under a lock that lasts until it ends).
 * Returns the files written: none when every pending live payout of the date is already in a file (so
 * it is safe to run twice, or at once: a second writer waits for the first, then finds nothing left),
 * usually one, several only when one pain.001 message cannot carry their totals (paymentFileBatches).
 * Refused, writing nothing, when a currency of the payouts has no active collection account to pay from.
 */
export async function writePaymentFiles(trx: Executor, payoutDate: string, options: WritePaymentFilesOptions): Promise<PaymentFileSummaryRow[]> {
  assertCalendarDate(payoutDate);
  if (!trx.isTransaction) throw new Error('writePaymentFiles needs a transaction: the date is locked until it ends');
  await advisoryLockPaymentFilesOfDate(trx, payoutDate);
  const payouts = await listPayoutsToInstruct(trx, payoutDate);
  if (payouts.length === 0) return [];

  const active = (await listCollectionAccounts(trx, {})).filter((account) => account.active);
  const currencies = [...new Set(payouts.map((payout) => payout.currency))].sort();
  const missing = currencies.filter((currency) => !active.some((account) => account.currency === currency));
  if (missing.length > 0) {
    throw new ConflictError(
      'no-collection-account',
      `No active collection account in ${missing.join(', ')} to pay the payouts made on ${payoutDate} from: add one (collection-accounts) first`,
      { members: { currencies: missing } },
    );
  }

  const createdAt = wholeSecond(options.now ?? new Date());
  const requestedExecutionDate = payoutExecutionDate(payoutDate, serviceToday(createdAt, CLEARING_TIME_ZONE), await loadClearingHolidays(trx));
  const createdBy = describeActor(options.actor);
  let sequence = await nextPaymentFileSequence(trx, payoutDate);
  const written: string[] = [];
  for (const batch of paymentFileBatches(payouts)) {
    const id = randomUUID();
    const messageId = paymentFileMessageId(payoutDate, sequence, id);
    const pain001 = Buffer.from(renderPain001File({ messageId, createdAt, requestedExecutionDate, payouts: batch, debtorAccounts: active }), 'utf8');
    const csv = Buffer.from(renderPayoutFile({ messageId, requestedExecutionDate }, batch), 'utf8');
    const file = {
      id,
      payoutDate,
      sequence,
      messageId,
      requestedExecutionDate,
      createdAt,
      createdBy,
      pain001,
      pain001Sha256: sha256(pain001),
      csv,
      csvSha256: sha256(csv),
      payoutIds: batch.map((payout) => payout.id),
    };
    await insertPaymentFile(trx, file);
    const totals: Record<string, { transfers: number; amount: number }> = {};
    for (const payout of batch) {
      const total = (totals[payout.currency] ??= { transfers: 0, amount: 0 });
      total.transfers += 1;
      total.amount += payout.amount;
    }
    await recordAction(trx, {
      actor: options.actor,
      action: 'payment_file.written',
      resourceType: 'payment_file',
      resourceId: id,
      reason: null,
      after: {
        payout_date: payoutDate,
        number: sequence,
        message_id: messageId,
        requested_execution_date: requestedExecutionDate,
        payouts: file.payoutIds,
        totals,
        pain001_sha256: file.pain001Sha256,
        csv_sha256: file.csvSha256,
      },
    });
    written.push(id);
    sequence += 1;
  }
  const files = await Promise.all(written.map((id) => findPaymentFile(trx, id)));
  return files.map((file) => file!);
}

/** writePaymentFiles in a transaction of its own. */
export async function createPaymentFiles(db: Database, payoutDate: string, options: WritePaymentFilesOptions): Promise<PaymentFileSummaryRow[]> {
  return db.transaction().execute((trx) => writePaymentFiles(trx, payoutDate, options));
}

/** A file's rendering as the API, the console and the CLI hand it over: the stored bytes. */
export interface PaymentFileDownload {
  file: PaymentFileSummaryRow;
  fileName: string;
  contentType: string;
  content: Buffer;
  sha256: string;
}

/**
 * The stored bytes of a file in one format. Not found: an unknown id. A conflict: the legacy file,
 * whose bytes were not kept.
 */
export async function paymentFileDownload(db: Executor, fileId: string, format: PaymentFileFormat): Promise<PaymentFileDownload> {
  const file = isUuid(fileId) ? await findPaymentFile(db, fileId) : undefined;
  const content = file ? await findPaymentFileContent(db, file.id) : undefined;
  if (!file || !content) throw new NotFoundError(`Payment file ${fileId}`);
  const bytes = format === 'csv' ? content.csv : content.pain001;
  const digest = format === 'csv' ? content.csv_sha256 : content.pain001_sha256;
  if (file.legacy || bytes === null || digest === null) {
    throw new ConflictError(
      'payment-file-not-kept',
      `Payment file ${file.id} records the payouts of ${file.payout_date} that existed before payment files were stored: its bytes were not kept`,
    );
  }
  if (sha256(bytes) !== digest) throw new Error(`Payment file ${file.id}: the stored ${format} no longer matches its SHA-256`);
  return { file, fileName: paymentFileName(file.payout_date, file.sequence, format), contentType: PAYMENT_FILE_CONTENT_TYPES[format], content: bytes, sha256: digest };
}

/** A date's file by its number, in one format. */
export async function paymentFileOfDateDownload(db: Executor, payoutDate: string, sequence: number, format: PaymentFileFormat): Promise<PaymentFileDownload> {
  const file = await findPaymentFileOfDate(db, payoutDate, sequence);
  if (!file) throw new NotFoundError(`Payment file ${sequence} of ${payoutDate}`);
  return paymentFileDownload(db, file.id, format);
}

/** What `GET /payouts/bank-file` and `export payouts --date` answer: the latest file, and the files this call wrote. */
export interface LatestPaymentFile extends PaymentFileDownload {
  written: PaymentFileSummaryRow[];
}

/**
 * The date's bank file as the original download asked for it: writes a file of the payouts of the date
 * that no file holds yet, if there are any, then answers the date's latest file (the one just written,
 * or, when nothing was new, the last one written before, the same bytes as then). Not found when the
 * date has no file and no payout to put in one.
 */
export async function latestPaymentFileOf(db: Database, payoutDate: string, format: PaymentFileFormat, options: WritePaymentFilesOptions): Promise<LatestPaymentFile> {
  const written = await createPaymentFiles(db, payoutDate, options);
  const latest = (await listPaymentFilesOfDate(db, payoutDate)).filter((file) => !file.legacy).at(-1);
  if (!latest) {
    throw new NotFoundError(`A payment file of the payouts made on ${payoutDate}`);
  }
  return { ...(await paymentFileDownload(db, latest.id, format)), written };
}
