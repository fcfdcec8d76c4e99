import { CsvError, parse } from 'csv-parse/sync';
import { type PayFrequency, payPeriodLabel } from './calendar-generation.ts';
import { assertCalendarDate } from './working-days.ts';

export interface CsvRowError {
  /** The file's line, counting the header as line 1. */
  line: number;
  /** The column's header name; null when the fault is the line's, not one field's. */
  column: string | null;
  reason: string;
}

export interface ImportedPayDate {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
}

export type PayCalendarCsvResult = { ok: true; payDates: ImportedPayDate[] } | { ok: false; errors: CsvRowError[] };

const REQUIRED_COLUMNS = ['pay_date', 'payroll_cutoff_date'] as const;
const KNOWN_COLUMNS: readonly string[] = [...REQUIRED_COLUMNS, 'pay_period'];
const PAY_PERIOD = /^[0-9]+-[0-9]+$/;

function dateProblem(value: string): string | undefined {
  if (value === '') return 'is empty';
  try {
    assertCalendarDate(value);
    return value.startsWith('0000-') ? `'${value}' is not a date as YYYY-MM-DD` : undefined;
  } catch {
    return `'${value}' is not a date as YYYY-MM-DD`;
  }
}

/**
 * Reads a pay calendar sent as CSV: a header naming pay_date and payroll_cutoff_date, and
 * optionally pay_period (in any order), then one pay date a line. Every fault of every line is
 * reported with its line, column and reason, so a clerk fixes the file in one go; one fault and
 * nothing of the file is used. Without a pay_period the payroll's frequency labels the pay date
 * (see payPeriodLabel); a payroll of unknown frequency needs the column.
 */
export function parsePayCalendarCsv(text: string, frequency: PayFrequency | 'unknown'): PayCalendarCsvResult {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    // With `info` each record comes with where it ended in the file (its line).
    records = parse(text, { info: true, bom: true, skip_empty_lines: true, relax_column_count: true, trim: true }) as unknown as typeof records;
  } catch (error) {
    if (error instanceof CsvError) {
      const line = typeof error.lines === 'number' ? error.lines : 1;
      return { ok: false, errors: [{ line, column: null, reason: `not readable as CSV: ${error.message}` }] };
    }
    throw error;
  }

  const [header, ...rows] = records;
  if (!header) return { ok: false, errors: [{ line: 1, column: null, reason: 'the file is empty: expected the header pay_date,payroll_cutoff_date[,pay_period]' }] };
  const errors: CsvRowError[] = [];
  const columns = header.record.map((name) => name.toLowerCase());
  const headerLine = header.info.lines;
  for (const name of columns) {
    if (!KNOWN_COLUMNS.includes(name)) errors.push({ line: headerLine, column: name, reason: `unknown column; expected ${KNOWN_COLUMNS.join(', ')}` });
  }
  for (const name of new Set(columns)) {
    if (columns.indexOf(name) !== columns.lastIndexOf(name)) errors.push({ line: headerLine, column: name, reason: 'the column is named twice' });
  }
  for (const name of REQUIRED_COLUMNS) {
    if (!columns.includes(name)) errors.push({ line: headerLine, column: name, reason: 'the column is missing' });
  }
  const hasPeriod = columns.includes('pay_period');
  if (!hasPeriod && frequency === 'unknown') {
    errors.push({ line: headerLine, column: 'pay_period', reason: "the payroll's frequency is unknown, so each pay date needs its pay_period" });
  }
  if (errors.length > 0) return { ok: false, errors };
  if (rows.length === 0) return { ok: false, errors: [{ line: headerLine, column: null, reason: 'the file has a header and no pay dates' }] };

  const payDates: ImportedPayDate[] = [];
  const linesByDate = new Map<string, number>();
  const linesByPeriod = new Map<string, number>();
  for (const { record, info } of rows) {
    const line = info.lines;
    if (record.length !== columns.length) {
      errors.push({ line, column: null, reason: `has ${record.length} fields; the header has ${columns.length}` });
      continue;
    }
    const field = (name: string) => record[columns.indexOf(name)]!;
    const payDate = field('pay_date');
    const cutoff = field('payroll_cutoff_date');
    const rowErrors: CsvRowError[] = [];
    const payDateProblem = dateProblem(payDate);
    if (payDateProblem) rowErrors.push({ line, column: 'pay_date', reason: payDateProblem });
    const cutoffProblem = dateProblem(cutoff);
    if (cutoffProblem) rowErrors.push({ line, column: 'payroll_cutoff_date', reason: cutoffProblem });
    if (!payDateProblem && !cutoffProblem && cutoff > payDate) {
      rowErrors.push({ line, column: 'payroll_cutoff_date', reason: `${cutoff} is after the pay date ${payDate}` });
    }
    let period = hasPeriod ? field('pay_period') : undefined;
    if (period !== undefined && !PAY_PERIOD.test(period)) {
      rowErrors.push({ line, column: 'pay_period', reason: `'${period}' is not a pay period such as 10-2026 (period, then the year the tax year started)` });
    }
    if (period === undefined && !payDateProblem && frequency !== 'unknown') period = payPeriodLabel(frequency, payDate);
    if (!payDateProblem) {
      const earlier = linesByDate.get(payDate);
      if (earlier !== undefined) rowErrors.push({ line, column: 'pay_date', reason: `${payDate} is already on line ${earlier}` });
      else linesByDate.set(payDate, line);
    }
    if (period !== undefined && PAY_PERIOD.test(period)) {
      const earlier = linesByPeriod.get(period);
      if (earlier !== undefined) rowErrors.push({ line, column: hasPeriod ? 'pay_period' : 'pay_date', reason: `pay period ${period} is already on line ${earlier}` });
      else linesByPeriod.set(period, line);
    }
    if (rowErrors.length > 0) errors.push(...rowErrors);
    else payDates.push({ pay_date: payDate, payroll_cutoff_date: cutoff, pay_period: period! });
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, payDates: payDates.sort((a, b) => (a.pay_date < b.pay_date ? -1 : 1)) };
}
