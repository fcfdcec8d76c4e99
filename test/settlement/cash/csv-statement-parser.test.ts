import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type ParsedStatement, type StatementEntry, StatementRejected } from '../../../src/settlement/cash/bank-statement.ts';
import { CSV_STATEMENT_COLUMNS } from '../../../src/settlement/cash/csv-statement-parser.ts';
import { parseStatement } from '../../../src/settlement/cash/statement-parser.ts';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const MAX = 1_000_000;

async function* chunked(text: string, size: number): AsyncGenerator<string> {
  for (let offset = 0; offset < text.length; offset += size) yield text.slice(offset, offset + size);
}

/** The file's statement: a CSV file is always one. */
async function parse(text: string, chunkSize = 13, maxBytes = MAX): Promise<ParsedStatement> {
  const file = await parseStatement(chunked(text, chunkSize), { maxBytes });
  expect(file.format).toBe('csv');
  expect(file.statements).toHaveLength(1);
  return file.statements[0]!;
}

/** A row's entry as the parser gives it: what the CSV layout has no column for is always the same. */
function entry(fields: Partial<StatementEntry> & Pick<StatementEntry, 'position' | 'index' | 'bankReference'>): StatementEntry {
  return {
    accountServicerReference: fields.bankReference,
    entryReference: null,
    transactionReferences: [],
    batch: null,
    direction: 'credit',
    reversal: false,
    bankTransactionCode: null,
    returnReason: null,
    amount: 1000,
    currency: 'GBP',
    bookingDate: '2026-11-27',
    valueDate: '2026-11-27',
    remittanceInformation: 'SDR261030P12',
    debtorName: 'Acme Ltd',
    debtorAccount: null,
    problem: null,
    ...fields,
  };
}

async function refusal(text: string): Promise<{ detail: string; position: unknown }> {
  const error = await parse(text).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof StatementRejected)) throw new Error(`expected StatementRejected, got ${String(error)}`);
  return { detail: error.detail, position: error.position };
}

const HEADER = CSV_STATEMENT_COLUMNS.join(',');

type Row = Partial<Record<(typeof CSV_STATEMENT_COLUMNS)[number], string>>;

function row(values: Row = {}): string {
  const defaults: Required<Row> = {
    statement_id: 'S1',
    sort_code: '60-16-13',
    account_number: '31926819',
    currency: 'GBP',
    bank_reference: 'B1',
    booking_date: '2026-11-27',
    value_date: '2026-11-27',
    direction: 'credit',
    amount: '10.00',
    reference: 'SDR261030P12',
    debtor_name: 'Acme Ltd',
    debtor_account: '',
  };
  const merged = { ...defaults, ...values };
  return CSV_STATEMENT_COLUMNS.map((column) => merged[column]).join(',');
}

const csv = (...rows: string[]) => [HEADER, ...rows].join('\n');

describe('CSV statement', () => {
  it('reads the fixture: quoted values, an empty value date, a debit without debtor', async () => {
    const file = await parseStatement(createReadStream(fixture('statement.csv'), { highWaterMark: 50 }), { maxBytes: MAX });
    expect(file).toEqual({
      format: 'csv',
      statements: [
        {
          format: 'csv',
          statementId: 'LLOY-20261127',
          page: { number: 1, last: true },
          electronicSequenceNumber: null,
          legalSequenceNumber: null,
          account: { sortCode: '60-16-13', accountNumber: '31926819' },
          currency: 'GBP',
          balances: [],
          summary: null,
          entries: [
            entry({
              position: { line: 2 },
              index: 0,
              bankReference: 'LLY0001',
              amount: 125000,
              remittanceInformation: 'SDR261030P12',
              debtorName: 'Acme Payroll Ltd',
              debtorAccount: 'GB82WEST12345698765432',
            }),
            entry({
              position: { line: 3 },
              index: 1,
              bankReference: 'LLY0002',
              amount: 31050,
              valueDate: null,
              remittanceInformation: 'SDR261030P13 BROWN, NOV',
              debtorName: 'Brown & Sons',
              debtorAccount: '20000055555555',
            }),
            entry({
              position: { line: 4 },
              index: 2,
              bankReference: 'LLY0003',
              direction: 'debit',
              amount: 50000,
              remittanceInformation: 'PAYOUT PO-2611-7',
              debtorName: null,
              debtorAccount: null,
            }),
          ],
        },
      ],
    });
  });

  it('takes the columns in any order, a sort code without dashes, a byte-order mark, CRLF and padded values', async () => {
    const reversed = [...CSV_STATEMENT_COLUMNS].reverse();
    const values = row({ sort_code: '601613', amount: ' 1250 ', currency: 'JPY' }).split(',').reverse();
    const statement = await parse(`\uFEFF${reversed.join(',')}\r\n${values.join(',')}\r\n`);
    expect(statement.account).toEqual({ sortCode: '60-16-13', accountNumber: '31926819' });
    expect(statement.currency).toBe('JPY');
    expect(statement.entries[0]).toMatchObject({ amount: 1250, currency: 'JPY', position: { line: 2 }, problem: null });
  });

  it('numbers rows by the line they start on, past blank lines and values spanning lines', async () => {
    const text = csv(row({ reference: '"two\nlines"' }), '', row({ bank_reference: 'B2' }), '', '', row({ bank_reference: 'B3' }));
    const statement = await parse(text);
    expect(statement.entries.map((entry) => entry.position.line)).toEqual([2, 5, 8]);
    expect(statement.entries[0]?.remittanceInformation).toBe('two\nlines');
  });

  it('is the same whatever the chunk size', async () => {
    const text = csv(row(), row({ bank_reference: 'B2', direction: 'debit', amount: '0.5' }));
    expect(await parse(text, 1)).toEqual(await parse(text, text.length));
  });
});

describe('CSV refusals', () => {
  it('refuses an unknown, a missing and a repeated column in the header', async () => {
    expect(await refusal(`${HEADER},balance\n${row()},1`)).toEqual({
      detail: `unknown column "balance" (expected exactly: ${CSV_STATEMENT_COLUMNS.join(', ')}) (line 1)`,
      position: { line: 1 },
    });
    const withoutDebtor = CSV_STATEMENT_COLUMNS.filter((column) => column !== 'debtor_account' && column !== 'value_date');
    expect(await refusal(`${withoutDebtor.join(',')}\n`)).toEqual({ detail: 'missing columns value_date, debtor_account (line 1)', position: { line: 1 } });
    expect((await refusal(`${HEADER.replace(',debtor_account', '')}\n`)).detail).toBe('missing column debtor_account (line 1)');
    expect((await refusal(`${HEADER},amount\n`)).detail).toBe('column "amount" appears twice (line 1)');
  });

  it('refuses a file without rows', async () => {
    expect((await refusal(`${HEADER}\n`)).detail).toBe('CSV statement has no rows: its statement_id and account cannot be known');
    expect((await refusal('\n \n')).detail).toBe('statement file is empty');
  });

  it('refuses statement columns that change between rows', async () => {
    expect(await refusal(csv(row(), row({ bank_reference: 'B2', statement_id: 'S2' })))).toEqual({
      detail: 'statement_id "S2" differs from "S1" on line 2: a file is one statement of one account (line 3)',
      position: { line: 3 },
    });
    expect((await refusal(csv(row(), row({ bank_reference: 'B2', sort_code: '60-16-14' })))).detail).toBe(
      'sort_code "60-16-14" differs from "60-16-13" on line 2: a file is one statement of one account (line 3)',
    );
    expect((await refusal(csv(row(), row({ bank_reference: 'B2', account_number: '31926810' })))).detail).toBe(
      'account_number "31926810" differs from "31926819" on line 2: a file is one statement of one account (line 3)',
    );
  });

  it.each([
    [{ sort_code: '60-16-1' }, 'sort code "60-16-1" is not 6 digits (NN-NN-NN)'],
    [{ account_number: '3192681' }, 'account number "3192681" is not 8 digits'],
    [{ currency: 'ABC' }, 'currency "ABC" is not supported'],
    [{ statement_id: '' }, 'statement_id is empty'],
    [{ currency: ' ' }, 'currency is empty'],
  ] as const)('refuses the statement columns %o', async (values, detail) => {
    expect(await refusal(csv(row(values)))).toEqual({ detail: `${detail} (line 2)`, position: { line: 2 } });
  });

  it('refuses a row with more or fewer values than the header', async () => {
    expect(await refusal(csv(row(), `${row({ bank_reference: 'B2' })},extra`))).toEqual({
      detail: 'row has 13 values, the header has 12 (line 3)',
      position: { line: 3 },
    });
    expect((await refusal(csv('S1,60-16-13'))).detail).toBe('row has 2 values, the header has 12 (line 2)');
  });

  it('refuses malformed quoting with its line', async () => {
    const result = await refusal(csv(row(), row({ bank_reference: 'B2', reference: 'say "hi"' })));
    expect(result.detail).toBe('malformed CSV: Invalid Opening Quote: a quote is found on field 9 at line 3, value is "say " (line 3)');
    expect(result.position).toEqual({ line: 3 });
  });

  it('stops reading the source when it refuses the file', async () => {
    let closed = false;
    async function* source(): AsyncGenerator<string> {
      try {
        yield csv(row({ sort_code: '60-16-1' }));
        yield* Array.from({ length: 1000 }, (_, index) => `\n${row({ bank_reference: `B${index + 2}` })}`);
      } finally {
        closed = true;
      }
    }
    const error = await parseStatement(Readable.from(source()), { maxBytes: MAX }).catch((thrown: unknown) => thrown);
    expect((error as StatementRejected).detail).toBe('sort code "60-16-1" is not 6 digits (NN-NN-NN) (line 2)');
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(true);
  });

  it('refuses a file past maxBytes while streaming', async () => {
    const rows = Array.from({ length: 500 }, (_, index) => row({ bank_reference: `B${index}` }));
    let chunksRead = 0;
    async function* counted(): AsyncGenerator<string> {
      for await (const chunk of chunked(csv(...rows), 100)) {
        chunksRead += 1;
        yield chunk;
      }
    }
    const error = await parseStatement(counted(), { maxBytes: 2000 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(StatementRejected);
    expect((error as StatementRejected).detail).toBe('statement file larger than 2000 bytes');
    expect(chunksRead).toBeLessThanOrEqual(22);
  });
});

describe('a row that cannot be booked is kept, with its problem; the rest of the file is read', () => {
  /** The entry of the second of three rows; the first and third stand as written. */
  async function middle(values: Row): Promise<StatementEntry> {
    const statement = await parse(csv(row(), row({ bank_reference: 'B2', ...values }), row({ bank_reference: 'B3' })));
    expect(statement.entries.map((parsed) => [parsed.index, parsed.problem])).toEqual([
      [0, null],
      [1, statement.entries[1]!.problem],
      [2, null],
    ]);
    return statement.entries[1]!;
  }

  it.each([
    [{ amount: '0.00' }, { amount: 0 }, "the entry's amount is zero"],
    [{ amount: '-1' }, { amount: 0 }, 'amount "-1" is not a positive decimal number'],
    [{ amount: '1e3' }, { amount: 0 }, 'amount "1e3" is not a positive decimal number'],
    [{ amount: '"1,250.00"' }, { amount: 0 }, 'amount "1,250.00" is not a positive decimal number'],
    [{ amount: '12.345' }, { amount: 0 }, 'amount "12.345" has more decimal places than GBP allows (at most 2 decimal places)'],
    [{ amount: '' }, { amount: 0 }, 'amount is empty'],
    [{ direction: 'CRDT' }, { direction: 'credit' }, 'direction "CRDT" is neither credit nor debit'],
    [{ direction: '' }, { direction: 'credit' }, 'direction is empty'],
    [{ booking_date: '27/11/2026' }, { bookingDate: '2026-11-27' }, 'booking_date "27/11/2026" is not a valid date (YYYY-MM-DD)'],
    [{ booking_date: ' ', value_date: '' }, { bookingDate: '', valueDate: null }, 'booking_date is empty'],
    [{ value_date: '2026-13-01' }, { valueDate: null }, 'value_date "2026-13-01" is not a valid date (YYYY-MM-DD)'],
    [{ bank_reference: '' }, { bankReference: '#2', accountServicerReference: null }, 'bank_reference is empty'],
    [{ currency: 'EUR' }, { currency: 'EUR' }, "the entry's currency EUR differs from the account's GBP"],
    [{ currency: 'XAU' }, { currency: 'XAU', amount: 0 }, 'the entry\'s currency XAU differs from the account\'s GBP; currency "XAU" is not supported'],
  ] as const)('%o', async (values, fields, problem) => {
    expect(await middle(values)).toEqual(entry({ position: { line: 3 }, index: 1, bankReference: 'B2', ...fields, problem }));
  });

  it('accepts decimal places past the currency that are zeros', async () => {
    expect(await middle({ amount: '4106.910' })).toMatchObject({ amount: 410691, problem: null });
  });

  it('keeps a bank reference used twice on both rows (identity is decided by the import)', async () => {
    const statement = await parse(csv(row(), row({ amount: '20.00' })));
    expect(statement.entries.map(({ bankReference, accountServicerReference, amount, problem }) => [bankReference, accountServicerReference, amount, problem])).toEqual([
      ['B1', 'B1', 1000, null],
      ['B1', 'B1', 2000, null],
    ]);
  });

  it('joins several problems of one row', async () => {
    expect((await middle({ amount: '0', direction: 'in' })).problem).toBe('direction "in" is neither credit nor debit; the entry\'s amount is zero');
  });
});
