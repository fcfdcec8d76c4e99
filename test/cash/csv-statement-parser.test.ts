import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type ParsedStatement, StatementRejected } from '../../src/cash/bank-statement.ts';
import { CSV_STATEMENT_COLUMNS } from '../../src/cash/csv-statement-parser.ts';
import { parseStatement } from '../../src/cash/statement-parser.ts';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const MAX = 1_000_000;

async function* chunked(text: string, size: number): AsyncGenerator<string> {
  for (let offset = 0; offset < text.length; offset += size) yield text.slice(offset, offset + size);
}

function parse(text: string, chunkSize = 13, maxBytes = MAX): Promise<ParsedStatement> {
  return parseStatement(chunked(text, chunkSize), { maxBytes });
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
    const statement = await parseStatement(createReadStream(fixture('statement.csv'), { highWaterMark: 50 }), { maxBytes: MAX });
    expect(statement).toEqual({
      format: 'csv',
      statementId: 'LLOY-20261127',
      account: { sortCode: '60-16-13', accountNumber: '31926819' },
      currency: 'GBP',
      entries: [
        {
          position: { line: 2 },
          bankReference: 'LLY0001',
          direction: 'credit',
          amount: 125000,
          currency: 'GBP',
          bookingDate: '2026-11-27',
          valueDate: '2026-11-27',
          remittanceInformation: 'SDR261030P12',
          debtorName: 'Acme Payroll Ltd',
          debtorAccount: 'GB82WEST12345698765432',
        },
        {
          position: { line: 3 },
          bankReference: 'LLY0002',
          direction: 'credit',
          amount: 31050,
          currency: 'GBP',
          bookingDate: '2026-11-27',
          valueDate: null,
          remittanceInformation: 'SDR261030P13 BROWN, NOV',
          debtorName: 'Brown & Sons',
          debtorAccount: '20000055555555',
        },
        {
          position: { line: 4 },
          bankReference: 'LLY0003',
          direction: 'debit',
          amount: 50000,
          currency: 'GBP',
          bookingDate: '2026-11-27',
          valueDate: '2026-11-27',
          remittanceInformation: 'PAYOUT PO-2611-7',
          debtorName: null,
          debtorAccount: null,
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
    expect(statement.entries[0]).toMatchObject({ amount: 1250, currency: 'JPY', position: { line: 2 } });
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
    expect((await refusal(csv(row(), row({ bank_reference: 'B2', currency: 'EUR' })))).detail).toBe(
      'entry currency EUR differs from the account currency GBP (line 3)',
    );
  });

  it('refuses a duplicate bank reference, naming the first line', async () => {
    expect(await refusal(csv(row(), row({ amount: '20.00' })))).toEqual({
      detail: 'duplicate bank reference "B1" (first at line 2) (line 3)',
      position: { line: 3 },
    });
  });

  it.each([
    ['0.00', 'amount "0.00" is zero'],
    ['-1', 'amount "-1" is not a positive decimal number'],
    ['1e3', 'amount "1e3" is not a positive decimal number'],
    ['1,250.00', 'amount "1,250.00" is not a positive decimal number'],
    ['12.345', 'amount "12.345" has more decimal places than GBP allows (at most 2 decimal places)'],
  ])('refuses amount %s', async (amount, detail) => {
    const quoted = amount.includes(',') ? `"${amount}"` : amount;
    expect(await refusal(csv(row(), row({ bank_reference: 'B2', amount: quoted })))).toEqual({ detail: `${detail} (line 3)`, position: { line: 3 } });
  });

  it.each([
    [{ direction: 'CRDT' }, 'direction "CRDT" is neither credit nor debit'],
    [{ booking_date: '27/11/2026' }, 'booking_date "27/11/2026" is not a valid date (YYYY-MM-DD)'],
    [{ value_date: '2026-13-01' }, 'value_date "2026-13-01" is not a valid date (YYYY-MM-DD)'],
    [{ bank_reference: '' }, 'bank_reference is empty'],
    [{ amount: '' }, 'amount is empty'],
    [{ booking_date: ' ' }, 'booking_date is empty'],
    [{ sort_code: '60-16-1' }, 'sort code "60-16-1" is not 6 digits (NN-NN-NN)'],
    [{ account_number: '3192681' }, 'account number "3192681" is not 8 digits'],
    [{ currency: 'ABC' }, 'currency "ABC" is not supported'],
  ] as const)('refuses %o', async (values, detail) => {
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
        yield csv(row({ direction: 'in' }));
        yield* Array.from({ length: 1000 }, (_, index) => `\n${row({ bank_reference: `B${index + 2}` })}`);
      } finally {
        closed = true;
      }
    }
    const error = await parseStatement(Readable.from(source()), { maxBytes: MAX }).catch((thrown: unknown) => thrown);
    expect((error as StatementRejected).detail).toBe('direction "in" is neither credit nor debit (line 2)');
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
