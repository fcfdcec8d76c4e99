import { currencyExponent } from '../../platform/money/currency.ts';
import { MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { PAY_DATE_LIMIT_NAME, reportedAmountOverLimit, type ReportedLimits } from '../deduction-records/reported-limits.ts';
import {
  deductionReturnColumns,
  INSTRUCTION_ONLY_COLUMNS,
  REQUIRED_RETURN_COLUMNS,
  type DeductionReturnColumn,
  type ReturnFileError,
  type ReturnFileRecord,
} from './return-file.ts';

// The rules a deduction return file is read by, each a pure function: what an amount may look like,
// what a leaver flag may say, when a payroll reference is the one the instruction gave, and the whole
// file's check against the instruction file it answers (every fault of every record in one pass).

const money = formatMoney;

/** A spreadsheet's thousands separators: digits grouped in threes, with a decimal point or none. */
const GROUPED = /^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/;
const DECIMAL = /^(\d*)(?:\.(\d*))?$/;

/**
 * A return file's amount in major units ("25.50") as integer minor units of the currency. What a
 * spreadsheet does to a number it saves is taken: surrounding spaces, trailing zeros it dropped ("25.5",
 * "25"), thousands separators grouped in threes ("1,234.50"). Refused, with the reason: a sign (an
 * amount deducted is never negative), a comma that is not a thousands separator ("25,50" could be a
 * decimal comma: say it with a point), a currency symbol, an exponent, more decimal places than the
 * currency has, more digits than the service carries exactly.
 */
export function returnAmountInMinorUnits(text: string, currency: string): { minor: number } | { reason: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { reason: 'is empty' };
  if (/^-|^\(.*\)$/.test(trimmed)) return { reason: `must not be negative, got ${trimmed}` };
  let plain = trimmed;
  if (GROUPED.test(trimmed)) plain = trimmed.replaceAll(',', '');
  else if (trimmed.includes(',')) {
    return { reason: `has a comma that does not separate thousands (${trimmed}): write the decimal point as a point, 25.50` };
  }
  const match = DECIMAL.exec(plain);
  if (!match || !/\d/.test(plain)) {
    return { reason: `must be an amount in ${currency} such as 25.50, without a currency symbol or sign, got ${trimmed}` };
  }
  const exponent = currencyExponent(currency);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) {
    return { reason: exponent === 0 ? `must be a whole number of ${currency}, got ${trimmed}` : `has more than ${exponent} decimal places for ${currency}, got ${trimmed}` };
  }
  const digits = `${match[1] ?? ''}${fraction.padEnd(exponent, '0')}`.replace(/^0+/, '');
  if (digits.length > String(MAX_EXACT_MINOR_UNITS).length) return { reason: `is too large, got ${trimmed}` };
  return { minor: digits === '' ? 0 : Number(digits) };
}

const LEAVER_YES = new Set(['yes', 'y', 'true']);
const LEAVER_NO = new Set(['no', 'n', 'false', '']);

/** Whether the employee left: yes, no, y, n, true or false, in any case; an empty cell is no. Null for anything else. */
export function leaverFlag(text: string): boolean | null {
  const value = text.trim().toLowerCase();
  if (LEAVER_YES.has(value)) return true;
  if (LEAVER_NO.has(value)) return false;
  return null;
}

/** A text cell as this service wrote it: with the apostrophe that stops a spreadsheet running it as a formula, or without. */
function sameText(cell: string, stored: string): boolean {
  const value = cell.trim();
  return value === stored || (value.startsWith("'") && value.slice(1) === stored);
}

/**
 * Whether a row's payroll reference is the one the instruction gave for its deduction: as written, with
 * or without the formula apostrophe, or (since a spreadsheet drops the leading zeros of a number, and the
 * payment reference already names the row) the same works number without its leading zeros.
 */
export function samePayrollReference(cell: string, stored: string): boolean {
  if (sameText(cell, stored)) return true;
  const value = cell.trim();
  return /^\d+$/.test(value) && /^\d+$/.test(stored) && value.replace(/^0+/, '') === stored.replace(/^0+/, '');
}

/** What samePayrollReference compares a stored reference by, so that a file's references are looked up, not searched for. */
const referenceKey = (reference: string) => (/^\d+$/.test(reference) ? reference.replace(/^0+/, '') : reference);

/** The keys a cell may match a stored reference by: as written, and without a formula apostrophe. */
function cellKeys(cell: string): string[] {
  const value = cell.trim();
  return value.startsWith("'") ? [referenceKey(value), referenceKey(value.slice(1))] : [referenceKey(value)];
}

/** One item of the instruction file the return file answers, as stored. */
export interface ExpectedItem {
  employeeId: string;
  payrollReference: string;
  /** Null only for items written before payment references existed: such an item is found by its payroll reference. */
  paymentReference: string | null;
  /** Minor units asked for. */
  amount: number;
  action: 'new' | 'amend' | 'stop' | 'continue';
}

/** What a return file is checked against: the instruction file it answers and the payroll's limits. */
export interface ReturnFileExpectation {
  payDate: string;
  payrollId: string;
  payrollExternalId: string;
  currency: string;
  /** The current instruction file's version: an older one was replaced by a re-run. */
  fileVersion: number;
  items: readonly ExpectedItem[];
  limits: ReportedLimits;
}

/** A good item: what payroll says it deducted for one employee. */
export interface ReturnLine {
  line: number;
  employeeId: string;
  action: ExpectedItem['action'];
  /** Minor units. */
  requested: number;
  deducted: number;
  leaver: boolean;
}

export interface ReturnFileCheck {
  /** Item records in the file. */
  rows: number;
  /** The good items, in file order. */
  lines: ReturnLine[];
  /** Item records with at least one error: not taken. */
  rejectedRows: number;
  /** Errors about the file as a whole (columns, header, trailer, records out of place): the file is refused whole, even partially. */
  fileErrors: number;
  /** Every error, in line order (a record's own errors in column order). */
  errors: ReturnFileError[];
  /** What is taken but worth a look: more deducted than asked. */
  warnings: ReturnFileError[];
}

type Header = ReadonlyMap<DeductionReturnColumn, number>;

const isReturnColumn = (name: string): name is DeductionReturnColumn => (deductionReturnColumns as readonly string[]).includes(name);

function readColumnLine(record: ReturnFileRecord): { header: Header; errors: ReturnFileError[] } {
  const header = new Map<DeductionReturnColumn, number>();
  const errors: ReturnFileError[] = [];
  const names = record.fields.map((raw) => raw.trim().toLowerCase());
  if (names.length === 1 && names[0]!.includes(';')) {
    return { header, errors: [{ line: record.line, column: null, reason: 'is separated by semicolons: save the file as CSV with commas (CSV UTF-8, comma delimited)' }] };
  }
  if (!names.includes('amount_deducted') && names.includes('amount') && INSTRUCTION_ONLY_COLUMNS.every((column) => names.includes(column))) {
    return {
      header,
      errors: [
        { line: record.line, column: null, reason: 'names the columns of an instruction file: import its deduction return file, which has amount_deducted beside each item' },
      ],
    };
  }
  names.forEach((name, position) => {
    if (!isReturnColumn(name))
      errors.push({ line: record.line, column: record.fields[position]!, reason: `is not a column of a deduction return file (${deductionReturnColumns.join(', ')})` });
    else if (header.has(name)) errors.push({ line: record.line, column: name, reason: 'appears more than once in the column line' });
    else header.set(name, position);
  });
  for (const column of REQUIRED_RETURN_COLUMNS) {
    if (!header.has(column)) errors.push({ line: record.line, column, reason: 'is missing from the column line' });
  }
  return { header, errors };
}

interface Checker {
  errors: ReturnFileError[];
  warnings: ReturnFileError[];
  fileErrors: number;
}

/**
 * Checks an uploaded return file against the instruction file it answers and turns its good items into
 * what payroll deducted. Every fault is found in one pass, each with its line and column:
 * - the column line: every column the import reads, none twice, no other;
 * - one header first, naming the pay date, the payroll (its external id), the currency and the
 *   current instruction file version; one trailer last, whose line_count, total_requested and
 *   total_deducted agree with the items (a file without one may have been cut off);
 * - each item: a payment reference of the instruction file, not repeated, with its payroll reference;
 *   amount_requested as the instruction asked; amount_deducted an amount of the currency, not negative,
 *   within MAX_REPORTED_DEDUCTION_MINOR; a leaver flag; the file's currency and pay date;
 * - every item of the instruction file answered.
 * More deducted than asked is taken (payroll reports what it did; reconciliation holds the excess) with
 * a warning. Column-line, header and trailer errors count as file errors: the file is refused whole.
 */
export function checkDeductionReturn(records: readonly ReturnFileRecord[], expected: ReturnFileExpectation): ReturnFileCheck {
  const check: Checker = { errors: [], warnings: [], fileErrors: 0 };
  const fileError = (error: ReturnFileError) => {
    check.errors.push(error);
    check.fileErrors += 1;
  };
  const result = (lines: ReturnLine[], rows: number, rejectedRows: number): ReturnFileCheck => ({
    rows,
    lines,
    rejectedRows,
    fileErrors: check.fileErrors,
    errors: [...check.errors].sort((a, b) => a.line - b.line),
    warnings: check.warnings,
  });

  const columnLine = records[0];
  if (!columnLine) {
    fileError({ line: 1, column: null, reason: 'the file is empty: it needs the column line, a header, the items and a trailer' });
    return result([], 0, 0);
  }
  const { header: columns, errors: columnErrors } = readColumnLine(columnLine);
  columnErrors.forEach(fileError);
  if (columnErrors.length > 0) return result([], 0, 0);

  const width = columnLine.fields.length;
  const cell = (record: ReturnFileRecord, column: DeductionReturnColumn) => {
    const position = columns.get(column);
    return position === undefined ? '' : (record.fields[position] ?? '').trim();
  };
  const { currency } = expected;
  const amountOf = (record: ReturnFileRecord, column: DeductionReturnColumn) => returnAmountInMinorUnits(cell(record, column), currency);

  // Spreadsheets save rows they once touched as empty records (",,,,"): they say nothing.
  const body = records.slice(1).filter((record) => record.fields.some((field) => field.trim() !== ''));
  const kinds = body.map((record) => cell(record, 'record_type').toLowerCase());
  const headerIndex = kinds.indexOf('header');
  const trailerIndex = kinds.lastIndexOf('trailer');
  const lastLine = (records.at(-1)?.line ?? 1) + 1;

  // Where each record stands.
  body.forEach((record, index) => {
    const kind = kinds[index]!;
    if (record.fields.length !== width) {
      // An item's own fault (an unquoted 25,50 splits a field); a header or trailer that cannot be read is the file's.
      if (kind !== 'item') fileError({ line: record.line, column: null, reason: `has ${record.fields.length} fields where the column line has ${width}` });
    } else if (kind !== 'header' && kind !== 'item' && kind !== 'trailer') {
      fileError({ line: record.line, column: 'record_type', reason: `must be header, item or trailer, got ${cell(record, 'record_type') || 'nothing'}` });
    } else if (kind === 'header' && index !== headerIndex) {
      fileError({ line: record.line, column: 'record_type', reason: `is a second header (the first is on line ${body[headerIndex]!.line})` });
    } else if (kind === 'trailer' && index !== trailerIndex) {
      fileError({ line: record.line, column: 'record_type', reason: `is a trailer before the last record (the trailer is on line ${body[trailerIndex]!.line})` });
    } else if (kind !== 'header' && headerIndex > index) {
      fileError({ line: record.line, column: 'record_type', reason: `comes before the header (line ${body[headerIndex]!.line}): the header is the first record` });
    } else if (kind !== 'trailer' && trailerIndex !== -1 && index > trailerIndex) {
      fileError({ line: record.line, column: 'record_type', reason: `comes after the trailer (line ${body[trailerIndex]!.line}): the trailer is the last record` });
    }
  });

  // The header: whose instruction file this answers.
  const headerRecord = headerIndex === -1 ? undefined : body[headerIndex];
  if (!headerRecord) {
    fileError({ line: body[0]?.line ?? 2, column: 'record_type', reason: 'the file has no header record: its first record names the payroll and pay date it answers' });
  } else if (headerRecord.fields.length === width) {
    const payDate = cell(headerRecord, 'pay_date');
    if (payDate !== expected.payDate)
      fileError({ line: headerRecord.line, column: 'pay_date', reason: `is ${payDate || 'empty'}, but this is the return for pay date ${expected.payDate}` });
    const payroll = cell(headerRecord, 'payroll_external_id');
    if (!sameText(payroll, expected.payrollExternalId)) {
      fileError({
        line: headerRecord.line,
        column: 'payroll_external_id',
        reason: `is ${payroll || 'empty'}, but this is the return for payroll ${expected.payrollExternalId} (${expected.payrollId})`,
      });
    }
    const headerCurrency = cell(headerRecord, 'currency').toUpperCase();
    if (headerCurrency !== currency)
      fileError({ line: headerRecord.line, column: 'currency', reason: `is ${headerCurrency || 'empty'}, but the payroll pays in ${currency}` });
    const version = cell(headerRecord, 'file_version');
    if (!/^\d+$/.test(version) || Number(version) !== expected.fileVersion) {
      const older = /^\d+$/.test(version) && Number(version) >= 1 && Number(version) < expected.fileVersion;
      fileError({
        line: headerRecord.line,
        column: 'file_version',
        reason: older
          ? `answers instruction file version ${version}, which a re-run replaced with version ${expected.fileVersion}: fill in the return file of version ${expected.fileVersion}`
          : `is ${version || 'empty'}, but the pay date's instruction file is version ${expected.fileVersion}`,
      });
    }
  }

  // The items.
  const byPaymentReference = new Map(expected.items.filter((item) => item.paymentReference !== null).map((item) => [item.paymentReference!, item]));
  const payrollReferenceKeys = new Set(expected.items.map((item) => referenceKey(item.payrollReference)));
  // Items stored before payment references existed are found by their payroll reference.
  const withoutPaymentReference = new Map<string, ExpectedItem>();
  for (const item of expected.items) {
    if (item.paymentReference === null && !withoutPaymentReference.has(referenceKey(item.payrollReference))) {
      withoutPaymentReference.set(referenceKey(item.payrollReference), item);
    }
  }
  const answered = new Map<ExpectedItem, number>();
  const lines: ReturnLine[] = [];
  let rows = 0;
  let rejectedRows = 0;
  let requestedTotal: bigint | null = 0n;
  let deductedTotal: bigint | null = 0n;
  body.forEach((record, index) => {
    if (kinds[index] !== 'item') return;
    rows += 1;
    const errors: ReturnFileError[] = [];
    const error = (column: DeductionReturnColumn, reason: string) => errors.push({ line: record.line, column, reason });

    const paymentReference = cell(record, 'payment_reference').toUpperCase();
    if (record.fields.length !== width) {
      rejectedRows += 1;
      requestedTotal = null;
      deductedTotal = null;
      const named = byPaymentReference.get(paymentReference);
      if (named && !answered.has(named)) answered.set(named, record.line);
      check.errors.push({
        line: record.line,
        column: null,
        reason: `has ${record.fields.length} fields where the column line has ${width} (an amount written with a comma, such as 25,50, splits its field unless quoted: write 25.50)`,
      });
      return;
    }
    const payrollReference = cell(record, 'payroll_reference');
    let item: ExpectedItem | undefined;
    if (paymentReference === '') {
      item = cellKeys(payrollReference)
        .map((key) => withoutPaymentReference.get(key))
        .find((candidate) => candidate !== undefined && samePayrollReference(payrollReference, candidate.payrollReference));
      if (!item) error('payment_reference', "is empty: every item names its deduction's payment reference, as the instruction file did");
    } else {
      item = byPaymentReference.get(paymentReference);
      if (!item) {
        error('payment_reference', `${paymentReference} is not a deduction of instruction file version ${expected.fileVersion}`);
        if (payrollReference !== '' && !cellKeys(payrollReference).some((key) => payrollReferenceKeys.has(key))) {
          error('payroll_reference', `${payrollReference} is not on instruction file version ${expected.fileVersion}`);
        }
      }
    }
    if (item) {
      const first = answered.get(item);
      if (first !== undefined) error('payment_reference', `repeats the deduction of line ${first} (${item.paymentReference ?? item.payrollReference})`);
      else answered.set(item, record.line);
      if (paymentReference !== '' && !samePayrollReference(payrollReference, item.payrollReference)) {
        error('payroll_reference', `is ${payrollReference || 'empty'}, but ${paymentReference} is the deduction of payroll reference ${item.payrollReference}`);
      }
    }

    const requested = amountOf(record, 'amount_requested');
    if ('reason' in requested) {
      error('amount_requested', requested.reason);
      requestedTotal = null;
    } else {
      if (requestedTotal !== null) requestedTotal += BigInt(requested.minor);
      if (item && requested.minor !== item.amount) {
        error(
          'amount_requested',
          `is ${money(requested.minor, currency)}, but the instruction asked ${money(item.amount, currency)}: leave it, and write what payroll deducted in amount_deducted`,
        );
      }
    }
    const deducted = amountOf(record, 'amount_deducted');
    if ('reason' in deducted) {
      error('amount_deducted', deducted.reason === 'is empty' ? 'is empty: write what payroll deducted, 0.00 when nothing' : deducted.reason);
      deductedTotal = null;
    } else {
      if (deductedTotal !== null) deductedTotal += BigInt(deducted.minor);
      const over = reportedAmountOverLimit(deducted.minor, '', expected.limits, currency);
      if (over) error('amount_deducted', over.detail);
    }
    const leaver = leaverFlag(cell(record, 'leaver'));
    if (leaver === null) error('leaver', `must be yes or no (or y, n, true, false), got ${cell(record, 'leaver')}`);
    const rowCurrency = cell(record, 'currency').toUpperCase();
    if (rowCurrency !== currency) error('currency', `is ${rowCurrency || 'empty'}, but the payroll pays in ${currency}`);
    const payDate = cell(record, 'pay_date');
    if (payDate !== '' && payDate !== expected.payDate) error('pay_date', `is ${payDate}, but this is the return for pay date ${expected.payDate}`);

    if (errors.length > 0 || !item || 'reason' in deducted || leaver === null) {
      rejectedRows += 1;
      check.errors.push(...errors);
      return;
    }
    if (deducted.minor > item.amount) {
      check.warnings.push({
        line: record.line,
        column: 'amount_deducted',
        reason:
          item.amount === 0
            ? `${money(deducted.minor, currency)} deducted where the instruction asked nothing (${item.action}): reconciliation holds it, to be returned`
            : `${money(deducted.minor, currency)} is more than the ${money(item.amount, currency)} asked: reconciliation holds the excess, to be returned`,
      });
    }
    lines.push({ line: record.line, employeeId: item.employeeId, action: item.action, requested: item.amount, deducted: deducted.minor, leaver });
  });

  // The trailer: a file cut off in transit has none; one whose items were edited without it does not add up.
  const trailerRecord = trailerIndex === -1 ? undefined : body[trailerIndex];
  const missingAt = trailerRecord?.line ?? lastLine;
  for (const item of expected.items) {
    if (answered.has(item)) continue;
    check.errors.push({
      line: missingAt,
      column: 'payment_reference',
      reason: `${item.paymentReference ?? item.payrollReference} (payroll reference ${item.payrollReference}, ${money(item.amount, currency)} asked) has no item: answer every item of the instruction file, 0.00 when nothing was deducted`,
    });
  }
  if (!trailerRecord) {
    fileError({
      line: lastLine,
      column: null,
      reason: 'the file has no trailer record: it may have been cut off. Its last record is the trailer, with line_count, total_requested and total_deducted',
    });
  } else if (trailerRecord.fields.length === width) {
    const itemRecords = kinds.filter((kind) => kind === 'item').length;
    const count = cell(trailerRecord, 'line_count');
    if (!/^\d+$/.test(count) || Number(count) !== itemRecords) {
      fileError({
        line: trailerRecord.line,
        column: 'line_count',
        reason: `is ${count || 'empty'}, but the file has ${itemRecords} item record${itemRecords === 1 ? '' : 's'}`,
      });
    }
    const trailerCurrency = cell(trailerRecord, 'currency').toUpperCase();
    if (trailerCurrency !== currency)
      fileError({ line: trailerRecord.line, column: 'currency', reason: `is ${trailerCurrency || 'empty'}, but the payroll pays in ${currency}` });
    for (const [column, total, what] of [
      ['total_requested', requestedTotal, 'amount_requested'],
      ['total_deducted', deductedTotal, 'amount_deducted'],
    ] as const) {
      const stated = amountOf(trailerRecord, column);
      if ('reason' in stated) fileError({ line: trailerRecord.line, column, reason: stated.reason });
      else if (total !== null && BigInt(stated.minor) !== total) {
        fileError({
          line: trailerRecord.line,
          column,
          reason: `is ${money(stated.minor, currency)}, but the items' ${what} add up to ${money(total, currency)}: correct the total (or the items)`,
        });
      }
    }
  }
  if (deductedTotal !== null && deductedTotal > BigInt(expected.limits.maxPerPayDate)) {
    fileError({
      line: trailerRecord?.line ?? lastLine,
      column: 'total_deducted',
      reason: `the items' amount_deducted add up to ${money(deductedTotal, currency)}, more than payroll may report for a pay date, ${money(expected.limits.maxPerPayDate, currency)} (${PAY_DATE_LIMIT_NAME})`,
    });
  }
  return result(lines, rows, rejectedRows);
}
