import { createHash } from 'node:crypto';
import anyAscii from 'any-ascii';
import { stringify } from 'csv-stringify/sync';
import { formatMinorUnits } from '../../platform/money/major-units.ts';
import { neutraliseFormula } from '../../platform/shared/csv-cells.ts';
import type { NewInstructionItem } from './instruction-repository.ts';

// One CSV table that a spreadsheet and a CSV reader both take as it is: one line of column names,
// then records that all have every column (RFC 4180, CRLF line ends), each naming its kind in
// record_type. A `header` record says whose file it is (employer, payroll, pay date, pay period,
// version), `item` records are what the payroll clerk keys, and a `trailer` record carries the item
// count and total, so a reader can tell a complete file from a cut-off one. Each kind fills only its
// own columns and leaves the rest empty; the item columns come first, where the clerk looks.

export const instructionFileColumns = [
  'record_type',
  'payroll_reference',
  'action',
  'amount',
  'previous_amount',
  'currency',
  'payment_reference',
  'pay_period',
  'pay_date',
  'employer_name',
  'employer_external_id',
  'payroll_name',
  'payroll_external_id',
  'file_version',
  'line_count',
  'total_amount',
] as const;

export type InstructionFileColumn = (typeof instructionFileColumns)[number];

/** Whose instruction file it is, for its header record. */
export interface InstructionFileHeading {
  employer_name: string;
  employer_external_id: string;
  payroll_name: string;
  payroll_external_id: string;
  pay_date: string;
  pay_period: string;
  currency: string;
  file_version: number;
}

function record(cells: Partial<Record<InstructionFileColumn, string>>): string[] {
  return instructionFileColumns.map((column) => cells[column] ?? '');
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The CSV an employer's payroll clerk works from: a header record, one item per employee in payroll
 * reference order (the order a clerk finds people in payroll), and a trailer with the count and
 * total of the items. Money is a decimal string in the file's currency; stop items carry 0.00 and the
 * payment reference of the deduction they stop.
 */
export function renderInstructionFile(heading: InstructionFileHeading, items: readonly NewInstructionItem[]): Buffer {
  const { currency } = heading;
  const ordered = [...items].sort((a, b) => byCodeUnits(a.payroll_reference, b.payroll_reference) || byCodeUnits(a.payment_reference, b.payment_reference));
  const total = ordered.reduce((sum, item) => sum + item.amount, 0);
  const rows = [
    record({
      record_type: 'header',
      currency,
      pay_period: neutraliseFormula(heading.pay_period),
      pay_date: heading.pay_date,
      // The provider's text: a payroll clerk opens this file in a spreadsheet.
      employer_name: neutraliseFormula(heading.employer_name),
      employer_external_id: neutraliseFormula(heading.employer_external_id),
      payroll_name: neutraliseFormula(heading.payroll_name),
      payroll_external_id: neutraliseFormula(heading.payroll_external_id),
      file_version: String(heading.file_version),
    }),
    ...ordered.map((item) =>
      record({
        record_type: 'item',
        payroll_reference: neutraliseFormula(item.payroll_reference),
        action: item.action,
        amount: formatMinorUnits(item.amount, currency),
        previous_amount: item.previous_amount === null ? '' : formatMinorUnits(item.previous_amount, currency),
        currency,
        payment_reference: item.payment_reference,
        pay_period: neutraliseFormula(item.pay_period),
        pay_date: heading.pay_date,
      }),
    ),
    record({ record_type: 'trailer', currency, line_count: String(ordered.length), total_amount: formatMinorUnits(total, currency) }),
  ];
  return Buffer.from(stringify(rows, { header: true, columns: [...instructionFileColumns], record_delimiter: 'windows' }), 'utf8');
}

export function sha256Hex(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

const SLUG_MAX_LENGTH = 40;

/** A name as a file name's part: ASCII letters and digits in lower case, words joined by hyphens, at most 40 characters. */
function fileNameSlug(name: string): string {
  return anyAscii(name)
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/-+$/, '');
}

/**
 * The name an instruction file is stored, downloaded and saved under, readable by the clerk who
 * files it: employer, payroll, pay date and version, `acme-widgets-ltd_monthly-payroll_2026-10-30_v1.csv`.
 * Safe on every file system and in a Content-Disposition header (letters, digits, `-`, `_`, `.`).
 * A payroll named after its employer ("Acme Widgets Ltd weekly payroll") is named once.
 */
export function instructionFileName(file: { employerName: string; payrollName: string; payDate: string; version: number }): string {
  const employer = fileNameSlug(file.employerName) || 'employer';
  const ownName = file.payrollName.toLowerCase().startsWith(file.employerName.toLowerCase()) ? file.payrollName.slice(file.employerName.length) : file.payrollName;
  const payroll = fileNameSlug(ownName) || fileNameSlug(file.payrollName) || 'payroll';
  return `${employer}_${payroll}_${file.payDate}_v${file.version}.csv`;
}
