import { CsvError, parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { instructionFileColumns, type InstructionFileColumn } from '../instructions/instruction-file.ts';

// The deduction return file: how a payroll without an API says what it deducted. It is the
// instruction file's own table turned round: the same header (whose file it answers), one item per
// instruction item with what was asked (amount_requested) and what payroll deducted
// (amount_deducted, handed out pre-filled with what was asked) and whether the employee left, and a
// trailer with the count and both totals. Same style as the instruction file: one line of column
// names, records that all have every column, record_type first, RFC 4180 with CRLF line ends, text
// from outside neutralised against spreadsheet formulas (it comes from the instruction file, where it
// already is).

export const deductionReturnColumns = [
  'record_type',
  'payroll_reference',
  'payment_reference',
  'action',
  'amount_requested',
  'amount_deducted',
  'leaver',
  'currency',
  'pay_period',
  'pay_date',
  'employer_name',
  'employer_external_id',
  'payroll_name',
  'payroll_external_id',
  'file_version',
  'line_count',
  'total_requested',
  'total_deducted',
] as const;

export type DeductionReturnColumn = (typeof deductionReturnColumns)[number];

/** The largest return file taken, wherever it comes from: a whole pay date of 100,000 items at about 120 bytes each, with room to spare. */
export const MAX_RETURN_FILE_BYTES = 32 * 1024 * 1024;

/** What the import reads; the others (action, pay_period, the names) are there for the clerk, and may be left out. */
export const REQUIRED_RETURN_COLUMNS: readonly DeductionReturnColumn[] = [
  'record_type',
  'payroll_reference',
  'payment_reference',
  'amount_requested',
  'amount_deducted',
  'leaver',
  'currency',
  'pay_date',
  'payroll_external_id',
  'file_version',
  'line_count',
  'total_requested',
  'total_deducted',
];

type InstructionRecord = Record<InstructionFileColumn, string>;

function returnRecord(cells: Partial<Record<DeductionReturnColumn, string>>): string[] {
  return deductionReturnColumns.map((column) => cells[column] ?? '');
}

/** The records of an instruction file this service wrote (header, items, trailer), by column name. */
function instructionRecords(instructionFile: Buffer | string): { header: InstructionRecord; items: InstructionRecord[]; trailer: InstructionRecord } {
  const records = parse(instructionFile, { columns: true }) as InstructionRecord[];
  const header = records[0];
  const trailer = records.at(-1);
  if (header?.record_type !== 'header' || trailer?.record_type !== 'trailer' || records.length < 2) {
    throw new Error('an instruction file starts with a header record and ends with a trailer record');
  }
  return { header, items: records.slice(1, -1), trailer };
}

/**
 * The return file handed out beside an instruction file, pre-filled: every item of the instruction
 * file, in its order, with amount_deducted equal to the amount asked and leaver `no`, and a trailer
 * whose totals are the instruction file's total. Made from the stored instruction file alone, so the
 * same file gives the same bytes every time, and it names people exactly as the instruction did.
 */
export function renderDeductionReturnFile(instructionFile: Buffer | string): Buffer {
  const { header, items, trailer } = instructionRecords(instructionFile);
  const rows = [
    returnRecord({
      record_type: 'header',
      currency: header.currency,
      pay_period: header.pay_period,
      pay_date: header.pay_date,
      employer_name: header.employer_name,
      employer_external_id: header.employer_external_id,
      payroll_name: header.payroll_name,
      payroll_external_id: header.payroll_external_id,
      file_version: header.file_version,
    }),
    ...items.map((item) =>
      returnRecord({
        record_type: 'item',
        payroll_reference: item.payroll_reference,
        payment_reference: item.payment_reference,
        action: item.action,
        amount_requested: item.amount,
        amount_deducted: item.amount,
        leaver: 'no',
        currency: item.currency,
        pay_period: item.pay_period,
        pay_date: item.pay_date,
      }),
    ),
    returnRecord({
      record_type: 'trailer',
      currency: trailer.currency,
      line_count: trailer.line_count,
      total_requested: trailer.total_amount,
      total_deducted: trailer.total_amount,
    }),
  ];
  return Buffer.from(stringify(rows, { header: true, columns: [...deductionReturnColumns], record_delimiter: 'windows' }), 'utf8');
}

/**
 * The return file is named after the instruction file it answers, so the two sort side by side:
 * acme-widgets-ltd_monthly_2026-11-27_v2.csv is answered by acme-widgets-ltd_monthly_2026-11-27_v2_deduction-return.csv
 * (and a file stored under the older names, instructions-ACME-2026-11-27-v2.csv, by deduction-return-ACME-2026-11-27-v2.csv).
 */
export function deductionReturnFileName(instructionFileName: string): string {
  if (instructionFileName.startsWith('instructions-')) return instructionFileName.replace(/^instructions-/, 'deduction-return-');
  return `${instructionFileName.replace(/\.csv$/i, '')}_deduction-return.csv`;
}

/** What is wrong at one place of a return file: its line (the column line is 1), the column at fault (null: the whole record or file), why. */
export interface ReturnFileError {
  line: number;
  column: string | null;
  reason: string;
}

/** One CSV record of a return file with the line of the file it starts on (the column line is line 1). */
export interface ReturnFileRecord {
  line: number;
  fields: string[];
}

/**
 * The CSV records of an uploaded file, each with the line it starts on: a byte order mark is dropped,
 * CRLF and LF are both line ends, empty lines are skipped (and counted). A file that is not CSV (an
 * unclosed quote...) is one error at the line where reading stopped.
 */
export function readReturnFileRecords(content: Buffer | string): { records: ReturnFileRecord[] } | { error: ReturnFileError } {
  const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  // Lines are counted here, from where each record ends (info.bytes, after its line end): csv-parse's
  // own count takes a CRLF inside a quoted field for two lines.
  let offset = 0;
  let line = 1;
  const advanceTo = (end: number) => {
    for (; offset < end; offset += 1) {
      const byte = bytes[offset];
      if (byte === 0x0a || (byte === 0x0d && bytes[offset + 1] !== 0x0a)) line += 1;
    }
  };
  const lineAt = (end: number) => {
    advanceTo(end);
    return line;
  };
  let rows: Array<{ record: string[]; info: { bytes: number } }>;
  try {
    rows = parse(bytes, { bom: true, info: true, relax_column_count: true, skip_empty_lines: true }) as unknown as typeof rows;
  } catch (error) {
    if (error instanceof CsvError) {
      const at = (error as CsvError & { lines?: number }).lines;
      return { error: { line: at ?? 1, column: null, reason: `is not valid CSV: ${error.message}` } };
    }
    throw error;
  }
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) offset = 3;
  return {
    records: rows.map(({ record, info }) => {
      // Empty lines before the record are skipped: it starts at its first byte that is not a line end.
      while (offset < bytes.length && (bytes[offset] === 0x0a || bytes[offset] === 0x0d)) advanceTo(offset + 1);
      const start = line;
      lineAt(info.bytes);
      return { line: start, fields: record };
    }),
  };
}

/** The instruction file's column names, for a message that tells the two files apart. */
export const INSTRUCTION_ONLY_COLUMNS: readonly string[] = instructionFileColumns.filter((column) => !(deductionReturnColumns as readonly string[]).includes(column));
