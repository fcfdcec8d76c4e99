import { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import {
  BankReferences,
  checkEntryCurrency,
  type FilePosition,
  type ParsedStatement,
  type StatementEntry,
  StatementRejected,
  statementAmountInMinorUnits,
  statementCurrencyExponent,
  statementDate,
  ukAccountNumber,
  ukSortCode,
} from './bank-statement.ts';

// The statement layout for banks that export only CSV: a header row naming exactly these columns, in
// any order, then one booked entry per row. Values are trimmed; an empty optional value is null.

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
const REQUIRED_COLUMNS: readonly Column[] = [...STATEMENT_COLUMNS, 'bank_reference', 'booking_date', 'direction', 'amount'];

/** Parses the CSV statement layout from its text chunks; positions are 1-based line numbers of the row's start. */
export async function parseCsvStatement(chunks: AsyncIterable<string>): Promise<ParsedStatement> {
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
  readonly #references = new BankReferences();

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
    for (const column of REQUIRED_COLUMNS) {
      if (value(column) === '') throw new StatementRejected(`${column} is empty`, position);
    }

    const statement = this.#statementOf(value, position);
    const currency = statement.values.currency;
    const bankReference = value('bank_reference');
    const direction = value('direction');
    if (direction !== 'credit' && direction !== 'debit') {
      throw new StatementRejected(`direction "${direction}" is neither credit nor debit`, position);
    }
    const entryCurrency = value('currency');
    checkEntryCurrency(entryCurrency, currency, position);
    const valueDate = value('value_date');
    const entry: StatementEntry = {
      position,
      bankReference,
      direction,
      amount: statementAmountInMinorUnits(value('amount'), currency, position),
      currency,
      bookingDate: statementDate(value('booking_date'), 'booking_date', position),
      valueDate: valueDate === '' ? null : statementDate(valueDate, 'value_date', position),
      remittanceInformation: value('reference') || null,
      debtorName: value('debtor_name') || null,
      debtorAccount: value('debtor_account').replace(/\s+/g, '') || null,
    };
    this.#references.add(bankReference, position);
    this.#entries.push(entry);
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
      // A different currency on a row is the entry-currency refusal, the same as camt's; checked by the caller.
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

  finish(): ParsedStatement {
    if (this.#columns === undefined) throw new StatementRejected('CSV statement has no header row');
    const statement = this.#statement;
    if (statement === undefined || this.#account === undefined) {
      throw new StatementRejected('CSV statement has no rows: its statement_id and account cannot be known');
    }
    return {
      format: 'csv',
      statementId: statement.values.statement_id,
      account: this.#account,
      currency: statement.values.currency,
      entries: this.#entries,
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
