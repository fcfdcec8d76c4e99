import { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import {
  type FilePosition,
  type ParsedStatementFile,
  type StatementEntry,
  StatementRejected,
  invalidDateReason,
  readStatementAmount,
  readStatementDate,
  statementCurrencyExponent,
  ukAccountNumber,
  ukSortCode,
} from './bank-statement.ts';

// The statement layout for banks that export only CSV: a header row naming exactly these columns, in
// any order, then one booked entry per row. Values are trimmed; an empty optional value is null.
// A file is one statement (page 1 of 1, no balances or totals). What refuses the file: a header that
// is not exactly these columns, a row of another width, malformed quoting, no row, statement columns
// (statement_id, sort_code, account_number) that change between rows or do not name a UK account, a
// first row's currency that is not supported. A row that cannot be booked as it stands (its amount,
// direction, dates, bank reference, or a currency other than the first row's) is kept with its
// `problem`, like a camt entry, for the exceptions queue.

export const CSV_STATEMENT_COLUMNS = [
  'statement_id',
  'sort_code',
  'account_number',
  'currency',
  'bank_reference',
  'booking_date',
  'value_date',
  'direction',
  'amount',
  'reference',
  'debtor_name',
  'debtor_account',
] as const;

type Column = (typeof CSV_STATEMENT_COLUMNS)[number];

/** Columns whose value must be the same on every row: they describe the statement, not the entry. */
const STATEMENT_COLUMNS = ['statement_id', 'sort_code', 'account_number', 'currency'] as const;

/** Parses the CSV statement layout from its text chunks; positions are 1-based line numbers of the row's start. */
export async function parseCsvStatement(chunks: AsyncIterable<string>): Promise<ParsedStatementFile> {
  const parser = parse({ bom: true, info: true, skip_empty_lines: true, relax_column_count: true });
  const source = Readable.from(chunks, { objectMode: false });
  // A refusal from the source (a file past maxBytes) must end the loop below, not leave it waiting.
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);

  const reader = new CsvReader();
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number; empty_lines: number } }>) {
      reader.row(record, info);
    }
  } catch (error) {
    if (error instanceof CsvError) {
      const line = (error as CsvError & { lines?: number }).lines;
      throw new StatementRejected(`malformed CSV: ${error.message.replace(/ (at|on) line \d+\.?$/, '')}`, line === undefined ? undefined : { line });
    }
    throw error;
  } finally {
    source.destroy();
  }
  return reader.finish();
}

interface StatementColumns {
  values: Record<(typeof STATEMENT_COLUMNS)[number], string>;
  /** The row they were first read from, for messages about a row that differs. */
  line: number;
}

class CsvReader {
  #columns: Map<Column, number> | undefined;
  #columnCount = 0;
  #previousEnd = 0;
  #previousEmptyLines = 0;
  #statement: StatementColumns | undefined;
  #account: { sortCode: string; accountNumber: string } | undefined;
  readonly #entries: StatementEntry[] = [];

  row(record: string[], info: { lines: number; empty_lines: number }): void {
    // csv-parse reports the line a record ends on; a quoted value can span lines, so the start is
    // the line after the previous record's end, past any blank lines it skipped.
    const line = this.#previousEnd + 1 + (info.empty_lines - this.#previousEmptyLines);
    this.#previousEnd = info.lines;
    this.#previousEmptyLines = info.empty_lines;
    const position = { line };
    const values = record.map((value) => value.trim());
    if (this.#columns === undefined) {
      this.#columns = header(values, position);
      this.#columnCount = values.length;
      return;
    }
    if (values.length !== this.#columnCount) {
      throw new StatementRejected(`row has ${values.length} values, the header has ${this.#columnCount}`, position);
    }
    const columns = this.#columns;
    const value = (column: Column): string => values[columns.get(column) ?? -1] ?? '';
    for (const column of STATEMENT_COLUMNS) {
      if (value(column) === '') throw new StatementRejected(`${column} is empty`, position);
    }

    const statement = this.#statementOf(value, position);
    const accountCurrency = statement.values.currency;
    const problems: string[] = [];
    const required = (column: Column): string => {
      const text = value(column);
      if (text === '') problems.push(`${column} is empty`);
      return text;
    };
    const bankReference = required('bank_reference');
    const directionText = required('direction');
    let direction: 'credit' | 'debit' = 'credit';
    if (directionText === 'credit' || directionText === 'debit') direction = directionText;
    else if (directionText !== '') problems.push(`direction "${directionText}" is neither credit nor debit`);
    const currency = value('currency');
    if (currency !== accountCurrency) problems.push(`the entry's currency ${currency} differs from the account's ${accountCurrency}`);
    let amount = 0;
    const amountText = required('amount');
    if (amountText !== '') {
      const reading = readStatementAmount(amountText, currency, { allowZero: true });
      if (reading.problem !== undefined) problems.push(reading.problem);
      else if (reading.minor === 0) problems.push("the entry's amount is zero");
      else amount = reading.minor;
    }
    const valueDateText = value('value_date');
    const valueDate = valueDateText === '' ? null : readStatementDate(valueDateText);
    if (valueDateText !== '' && valueDate === null) problems.push(invalidDateReason('value_date', valueDateText));
    const bookingDateText = required('booking_date');
    let bookingDate = bookingDateText === '' ? null : readStatementDate(bookingDateText);
    if (bookingDateText !== '' && bookingDate === null) problems.push(invalidDateReason('booking_date', bookingDateText));
    bookingDate ??= valueDate ?? '';

    const index = this.#entries.length;
    this.#entries.push({
      position,
      index,
      bankReference: bankReference === '' ? `#${index + 1}` : bankReference,
      accountServicerReference: bankReference === '' ? null : bankReference,
      entryReference: null,
      transactionReferences: [],
      batch: null,
      direction,
      reversal: false,
      bankTransactionCode: null,
      returnReason: null,
      amount,
      currency,
      bookingDate,
      valueDate,
      remittanceInformation: value('reference') || null,
      debtorName: value('debtor_name') || null,
      debtorAccount: value('debtor_account').replace(/\s+/g, '') || null,
      problem: problems.length === 0 ? null : problems.join('; '),
    });
  }

  /** The statement's columns from the first row, checked once; every later row must repeat them. */
  #statementOf(value: (column: Column) => string, position: FilePosition): StatementColumns {
    const statement = this.#statement;
    if (statement === undefined) {
      const values = { statement_id: '', sort_code: '', account_number: '', currency: '' };
      for (const column of STATEMENT_COLUMNS) values[column] = value(column);
      statementCurrencyExponent(values.currency, position);
      this.#account = { sortCode: ukSortCode(values.sort_code, position), accountNumber: ukAccountNumber(values.account_number, position) };
      this.#statement = { values, line: position.line };
      return this.#statement;
    }
    for (const column of STATEMENT_COLUMNS) {
      // A different currency on a row is that entry's problem, the same as camt's; checked by the caller.
      if (column === 'currency') continue;
      if (value(column) !== statement.values[column]) {
        throw new StatementRejected(
          `${column} "${value(column)}" differs from "${statement.values[column]}" on line ${statement.line}: a file is one statement of one account`,
          position,
        );
      }
    }
    return statement;
  }

  finish(): ParsedStatementFile {
    if (this.#columns === undefined) throw new StatementRejected('CSV statement has no header row');
    const statement = this.#statement;
    if (statement === undefined || this.#account === undefined) {
      throw new StatementRejected('CSV statement has no rows: its statement_id and account cannot be known');
    }
    return {
      format: 'csv',
      statements: [
        {
          format: 'csv',
          statementId: statement.values.statement_id,
          page: { number: 1, last: true },
          electronicSequenceNumber: null,
          legalSequenceNumber: null,
          account: this.#account,
          currency: statement.values.currency,
          balances: [],
          summary: null,
          entries: this.#entries,
        },
      ],
    };
  }
}

function header(names: string[], position: FilePosition): Map<Column, number> {
  const known = new Set<string>(CSV_STATEMENT_COLUMNS);
  const columns = new Map<Column, number>();
  names.forEach((name, index) => {
    if (!known.has(name)) {
      throw new StatementRejected(`unknown column "${name}" (expected exactly: ${CSV_STATEMENT_COLUMNS.join(', ')})`, position);
    }
    if (columns.has(name as Column)) throw new StatementRejected(`column "${name}" appears twice`, position);
    columns.set(name as Column, index);
  });
  const missing = CSV_STATEMENT_COLUMNS.filter((column) => !columns.has(column));
  if (missing.length > 0) throw new StatementRejected(`missing column${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`, position);
  return columns;
}
