import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { formatMinorUnits } from '../../platform/money/major-units.ts';
import { neutraliseFormula } from '../../platform/shared/csv-cells.ts';
import {
  findReconciliationSummary,
  streamReconciliationRows,
  type ReportLabels,
  type ReconciliationFilter,
  type ReconciliationRow,
  type ReconciliationSummaryRow,
} from './reconciliation-report-repository.ts';

/**
 * The reconciliation report's columns (docs/finance.md, *Deductions in, reconciliation, ledger and payouts*), in order: finance's
 * spreadsheets address columns by position, so a new column goes last (payroll, employee_name and payroll_reference came after payout_id).
 */
export const reconciliationColumns = [
  'payroll_id',
  'employer',
  'pay_date',
  'pay_period',
  'employee_id',
  'mandate_id',
  'payment_id',
  'biller',
  'currency',
  'requested',
  'deducted',
  'collected',
  'shortfall',
  'carried_to',
  'status',
  'push_version',
  'payout_id',
  'payroll',
  'employee_name',
  'payroll_reference',
] as const;

export const reconciliationSummaryColumns = [
  'payroll_id',
  'employer',
  'pay_date',
  'currency',
  'requested',
  'deducted',
  'collected',
  'shortfall',
  'exceptions',
  'reported',
  'held_over_deductions',
  'held_unexpected_employees',
  'unaccounted',
  'payroll',
] as const;

/**
 * What payroll reported it deducted and the summary cannot place: neither collected for a payment request
 * nor held as an exception. Zero once every record is reconciled; otherwise records await reconciliation.
 */
export function unaccountedAmount(row: Pick<ReconciliationSummaryRow, 'reported' | 'collected' | 'held_over_deductions' | 'held_unexpected_employees'>): bigint {
  return row.reported - row.collected - row.held_over_deductions - row.held_unexpected_employees;
}

/** An attempt reconciliation has not decided yet (no deduction data in) has no outcome. */
export const UNRECONCILED_STATUS = 'unreconciled';

/** Rows per FETCH: large enough to amortise the round trip, small enough to keep memory flat. */
export const RECONCILIATION_BATCH_SIZE = 5_000;

/** The payout_id cell: each payout of the attempt's ledger entries once, in id order, space separated. */
export function payoutIdsCell(payoutIds: string | null): string {
  if (payoutIds === null) return '';
  if (!payoutIds.includes(' ')) return payoutIds;
  return [...new Set(payoutIds.split(' '))].sort().join(' ');
}

/** One CSV record: money as decimal strings in the row's currency, absent values as empty cells. */
export function toReconciliationRecord(row: ReconciliationRow, labels: ReportLabels): string[] {
  const money = (minor: number | null) => (minor === null ? '' : formatMinorUnits(minor, row.currency));
  // pay_dates is a foreign key of every attempt, and clients of every payment request: both are found.
  const payroll = labels.payrolls.get(row.payroll_id)!;
  return [
    row.payroll_id,
    neutraliseFormula(payroll.employer),
    row.pay_date,
    neutraliseFormula(payroll.payPeriod),
    row.employee_id,
    row.mandate_id,
    row.payment_id,
    neutraliseFormula(labels.billers.get(row.biller_client_id)!),
    row.currency,
    money(row.requested_amount),
    money(row.deducted_amount),
    money(row.collected_amount),
    money(row.shortfall_amount),
    row.carried_to_pay_date ?? '',
    row.outcome ?? UNRECONCILED_STATUS,
    row.push_version === null ? '' : String(row.push_version),
    payoutIdsCell(row.payout_ids),
    neutraliseFormula(payroll.payroll),
    neutraliseFormula(row.employee_name ?? ''),
    neutraliseFormula(row.payroll_reference ?? ''),
  ];
}

export function toReconciliationSummaryRecord(row: ReconciliationSummaryRow): string[] {
  return [
    row.payroll_id,
    neutraliseFormula(row.employer),
    row.pay_date,
    row.currency,
    formatMinorUnits(row.requested, row.currency),
    formatMinorUnits(row.deducted, row.currency),
    formatMinorUnits(row.collected, row.currency),
    formatMinorUnits(row.shortfall, row.currency),
    String(row.exceptions),
    formatMinorUnits(row.reported, row.currency),
    formatMinorUnits(row.held_over_deductions, row.currency),
    formatMinorUnits(row.held_unexpected_employees, row.currency),
    formatMinorUnits(unaccountedAmount(row), row.currency),
    neutraliseFormula(row.payroll),
  ];
}

/** The report's records, fetched a batch at a time as the consumer asks for them (never all at once). */
export async function* reconciliationRecords(db: Database, filter: ReconciliationFilter, batchSize = RECONCILIATION_BATCH_SIZE) {
  for await (const { rows, labels } of streamReconciliationRows(db, filter, batchSize)) {
    for (const row of rows) yield toReconciliationRecord(row, labels);
  }
}

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One RFC 4180 line, quoting exactly as csv-stringify does by default (a field holding a comma, a quote
 * or a line break is quoted, its quotes doubled), so the detail report reads like every other CSV of the
 * service. Written by hand because it is the report's hot loop: csv-stringify costs about five times as
 * much per record, seconds over a million rows.
 */
export function csvLine(fields: readonly string[]): string {
  let line = '';
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (i > 0) line += ',';
    line += NEEDS_QUOTES.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
  }
  return `${line}\n`;
}

/** A name as csvLine writes it, once neutralised: quoted when it holds a comma, a quote or a line break. */
function csvField(text: string): string {
  const cell = neutraliseFormula(text);
  return NEEDS_QUOTES.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/** The report's labels as CSV fields, quoted once per payroll and biller rather than once per row. */
export interface CsvLabels {
  payrolls: Map<string, { employer: string; payroll: string; payPeriod: string }>;
  billers: Map<string, string>;
}

export function toCsvLabels(labels: ReportLabels): CsvLabels {
  return {
    payrolls: new Map(
      [...labels.payrolls].map(([id, { employer, payroll, payPeriod }]) => [id, { employer: csvField(employer), payroll: csvField(payroll), payPeriod: csvField(payPeriod) }]),
    ),
    billers: new Map([...labels.billers].map(([id, name]) => [id, csvField(name)])),
  };
}

/**
 * csvLine(toReconciliationRecord(row, labels)) without the array in between: the report's hot loop, a
 * million times for a large pay date. Only the names and the works number can hold a comma, a quote, a
 * line break or a formula (ids, dates, amounts, statuses and payout ids cannot): the payroll's, the
 * employer's and the biller's come neutralised and quoted in `labels`, the employee's and the works
 * number, which differ per row, are neutralised and quoted here. A test holds the two to each other.
 */
export function reconciliationCsvLine(row: ReconciliationRow, labels: CsvLabels): string {
  const payroll = labels.payrolls.get(row.payroll_id)!;
  const currency = row.currency;
  return (
    `${row.payroll_id},${payroll.employer},${row.pay_date},${payroll.payPeriod},${row.employee_id},${row.mandate_id},` +
    `${row.payment_id},${labels.billers.get(row.biller_client_id)!},${currency},${formatMinorUnits(row.requested_amount, currency)},` +
    `${row.deducted_amount === null ? '' : formatMinorUnits(row.deducted_amount, currency)},${formatMinorUnits(row.collected_amount, currency)},` +
    `${formatMinorUnits(row.shortfall_amount, currency)},${row.carried_to_pay_date ?? ''},${row.outcome ?? UNRECONCILED_STATUS},` +
    `${row.push_version === null ? '' : row.push_version},${payoutIdsCell(row.payout_ids)},${payroll.payroll},` +
    `${row.employee_name === null ? '' : csvField(row.employee_name)},${row.payroll_reference === null ? '' : csvField(row.payroll_reference)}\n`
  );
}

/** The CSV text, one chunk per fetched batch, header first. */
async function* reconciliationCsvChunks(db: Database, filter: ReconciliationFilter, batchSize: number) {
  yield csvLine(reconciliationColumns);
  let csvLabels: CsvLabels | undefined;
  for await (const { rows, labels } of streamReconciliationRows(db, filter, batchSize)) {
    csvLabels ??= toCsvLabels(labels);
    let chunk = '';
    for (const row of rows) chunk += reconciliationCsvLine(row, csvLabels);
    yield chunk;
  }
}

/**
 * The reconciliation CSV as a byte stream. The next batch is fetched only when the reader has taken the
 * previous one (byte-mode stream, so at most one batch waits in memory): a slow client slows the
 * database reads instead of filling memory. An error mid-way destroys the stream (the download is cut
 * short rather than ending in a truncated file that looks complete), and a reader that goes away
 * (client disconnect) closes the cursor.
 */
export function reconciliationCsvStream(db: Database, filter: ReconciliationFilter, batchSize = RECONCILIATION_BATCH_SIZE): Readable {
  return Readable.from(reconciliationCsvChunks(db, filter, batchSize), { objectMode: false });
}

/**
 * reconciliationCsvStream for an HTTP response: resolves once the first batch is read, so a database
 * that cannot be reached fails the request (503) before any byte of a 200 has been sent.
 */
export async function openReconciliationCsvStream(db: Database, filter: ReconciliationFilter, batchSize = RECONCILIATION_BATCH_SIZE): Promise<Readable> {
  const chunks = reconciliationCsvChunks(db, filter, batchSize);
  const header = await chunks.next();
  const first = await chunks.next();
  async function* fromFirstBatch() {
    try {
      yield header.value as string;
      if (first.done) return;
      yield first.value;
      yield* chunks;
    } finally {
      // A reader gone before the remaining batches were asked for still closes the cursor.
      await chunks.return(undefined);
    }
  }
  return Readable.from(fromFirstBatch(), { objectMode: false });
}

/**
 * Streams the reconciliation CSV into a file or stdout; resolves once every byte is handed over. `end:
 * false` leaves the destination open (stdout must not be ended).
 */
export async function writeReconciliationCsv(db: Database, filter: ReconciliationFilter, destination: Writable, options: { end?: boolean } = {}): Promise<void> {
  await pipeline(reconciliationCsvStream(db, filter), destination, { end: options.end ?? true });
}

export async function reconciliationSummary(db: Executor, filter: Omit<ReconciliationFilter, 'billerClientId'>) {
  return findReconciliationSummary(db, filter);
}

export async function writeReconciliationSummaryCsv(
  db: Executor,
  filter: Omit<ReconciliationFilter, 'billerClientId'>,
  destination: Writable,
  options: { end?: boolean } = {},
): Promise<void> {
  const rows = await findReconciliationSummary(db, filter);
  const csv = stringify({ header: true, columns: [...reconciliationSummaryColumns] });
  await pipeline(Readable.from(rows.map(toReconciliationSummaryRecord)), csv, destination, { end: options.end ?? true });
}

export function reconciliationFileName(payDate: string): string {
  return `reconciliation-${payDate}.csv`;
}

export function reconciliationSummaryFileName(payDate: string): string {
  return `reconciliation-summary-${payDate}.csv`;
}
