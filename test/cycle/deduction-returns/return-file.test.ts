import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { renderInstructionFile, type InstructionFileHeading } from '../../../src/cycle/instructions/instruction-file.ts';
import type { NewInstructionItem } from '../../../src/cycle/instructions/instruction-repository.ts';
import { deductionReturnColumns, deductionReturnFileName, readReturnFileRecords, renderDeductionReturnFile } from '../../../src/cycle/deduction-returns/return-file.ts';
import {
  checkDeductionReturn,
  leaverFlag,
  returnAmountInMinorUnits,
  samePayrollReference,
  type ReturnFileExpectation,
} from '../../../src/cycle/deduction-returns/return-file-rules.ts';

// The deduction return file as a pure thing: written from an instruction file, read back with every
// fault found in one pass, and the strange things spreadsheets and people do to a CSV.

const heading: InstructionFileHeading = {
  employer_name: 'Acme Widgets Ltd',
  employer_external_id: 'EMP-0042',
  payroll_name: 'Acme monthly',
  payroll_external_id: 'PAY-7',
  pay_date: '2026-10-30',
  pay_period: '7-2026',
  currency: 'GBP',
  file_version: 2,
};

const item = (overrides: Partial<NewInstructionItem>): NewInstructionItem => ({
  employee_id: '00000000-0000-4000-8000-000000000000',
  payroll_reference: 'W1001',
  amount: 5_000,
  previous_amount: null,
  currency: 'GBP',
  payment_reference: 'SD00000017',
  pay_period: '7-2026',
  action: 'new',
  ...overrides,
});

const items = [
  item({ employee_id: 'employee-c', payroll_reference: 'W1003', amount: 1_000, previous_amount: 1_000, payment_reference: 'SD00000019', action: 'continue' }),
  item({ employee_id: 'employee-a', payroll_reference: 'W1001', amount: 5_000, previous_amount: null, payment_reference: 'SD00000017', action: 'new' }),
  item({ employee_id: 'employee-b', payroll_reference: 'W1002', amount: 0, previous_amount: 2_000, payment_reference: 'SD00000018', action: 'stop' }),
  item({ employee_id: 'employee-d', payroll_reference: '000123', amount: 2_550, previous_amount: 2_000, payment_reference: 'SD00000020', action: 'amend' }),
];
const instructionFile = renderInstructionFile(heading, items);

/** The pre-filled return file of the instruction file above, byte for byte. */
const RETURN_FILE = [
  'record_type,payroll_reference,payment_reference,action,amount_requested,amount_deducted,leaver,currency,pay_period,pay_date,employer_name,employer_external_id,payroll_name,payroll_external_id,file_version,line_count,total_requested,total_deducted',
  'header,,,,,,,GBP,7-2026,2026-10-30,Acme Widgets Ltd,EMP-0042,Acme monthly,PAY-7,2,,,',
  'item,000123,SD00000020,amend,25.50,25.50,no,GBP,7-2026,2026-10-30,,,,,,,,',
  'item,W1001,SD00000017,new,50.00,50.00,no,GBP,7-2026,2026-10-30,,,,,,,,',
  'item,W1002,SD00000018,stop,0.00,0.00,no,GBP,7-2026,2026-10-30,,,,,,,,',
  'item,W1003,SD00000019,continue,10.00,10.00,no,GBP,7-2026,2026-10-30,,,,,,,,',
  'trailer,,,,,,,GBP,,,,,,,,4,85.50,85.50',
  '',
].join('\r\n');

const expectation: ReturnFileExpectation = {
  payDate: '2026-10-30',
  payrollId: '0193a4f1-0e6d-7a42-9c13-5d7e9f1a2b04',
  payrollExternalId: 'PAY-7',
  currency: 'GBP',
  fileVersion: 2,
  items: items.map((i) => ({ employeeId: i.employee_id, payrollReference: i.payroll_reference, paymentReference: i.payment_reference, amount: i.amount, action: i.action })),
  limits: { maxPerEmployee: 1_000_000_000, maxPerPayDate: 1_000_000_000_000 },
};

function checked(text: string | Buffer, expected: ReturnFileExpectation = expectation) {
  const read = readReturnFileRecords(text);
  if ('error' in read) throw new Error(`not CSV: ${read.error.reason}`);
  return checkDeductionReturn(read.records, expected);
}

/** The pre-filled file with some of its lines replaced (by their 1-based line number). */
function edited(lines: Record<number, string>, base = RETURN_FILE): string {
  const all = base.split('\r\n');
  for (const [line, text] of Object.entries(lines)) all[Number(line) - 1] = text;
  return all.join('\r\n');
}

describe('renderDeductionReturnFile', () => {
  it('writes the documented layout from the instruction file alone: its header, every item pre-filled with what it asks, a trailer with both totals', () => {
    expect(renderDeductionReturnFile(instructionFile).toString('utf8')).toBe(RETURN_FILE);
    expect(renderDeductionReturnFile(instructionFile).equals(renderDeductionReturnFile(Buffer.from(instructionFile)))).toBe(true);
  });

  it('is one table a CSV reader takes as it is, and is its own clean import', () => {
    const records = parse(renderDeductionReturnFile(instructionFile), { columns: true }) as Array<Record<string, string>>;
    for (const record of records) expect(Object.keys(record)).toEqual([...deductionReturnColumns]);
    const check = checked(renderDeductionReturnFile(instructionFile));
    expect(check).toMatchObject({ rows: 4, rejectedRows: 0, fileErrors: 0, errors: [], warnings: [] });
    expect(check.lines.map((line) => [line.line, line.employeeId, line.requested, line.deducted, line.leaver])).toEqual([
      [3, 'employee-d', 2_550, 2_550, false],
      [4, 'employee-a', 5_000, 5_000, false],
      [5, 'employee-b', 0, 0, false],
      [6, 'employee-c', 1_000, 1_000, false],
    ]);
  });

  it('keeps a formula-looking name neutralised as the instruction file wrote it, and an empty instruction still has its header and trailer', () => {
    const hostile = renderInstructionFile({ ...heading, employer_name: '=HYPERLINK("x")', payroll_external_id: '-PAY' }, []);
    const text = renderDeductionReturnFile(hostile).toString('utf8');
    expect(text).toContain(`,"'=HYPERLINK(""x"")",EMP-0042,Acme monthly,'-PAY,2,,,\r\n`);
    expect(text.endsWith('trailer,,,,,,,GBP,,,,,,,,0,0.00,0.00\r\n')).toBe(true);
    // The payroll's own id, read back through the apostrophe.
    expect(checked(text, { ...expectation, payrollExternalId: '-PAY', items: [] })).toMatchObject({ rows: 0, errors: [] });
  });

  it('is named after the instruction file it answers', () => {
    expect(deductionReturnFileName('acme-widgets-ltd_monthly_2026-11-27_v2.csv')).toBe('acme-widgets-ltd_monthly_2026-11-27_v2_deduction-return.csv');
    expect(deductionReturnFileName('instructions-ACME-MONTHLY-2026-11-27-v2.csv')).toBe('deduction-return-ACME-MONTHLY-2026-11-27-v2.csv');
  });
});

describe('the example of docs/integrators.md (Deduction return files)', () => {
  it('is the pre-filled file of the instruction file example there, filled in, and reads as it says', () => {
    const guide = readFileSync(new URL('../../../docs/integrators.md', import.meta.url), 'utf8');
    const example = /## Deduction return files[\s\S]*?```csv\n([\s\S]*?)```/.exec(guide)![1]!.replaceAll('\n', '\r\n');
    const documented = [
      item({ employee_id: 'w1001', payroll_reference: 'W1001', amount: 5_000, payment_reference: 'SD00000017', action: 'new' }),
      item({ employee_id: 'w1002', payroll_reference: 'W1002', amount: 0, previous_amount: 2_000, payment_reference: 'SD00000018', action: 'stop' }),
      item({ employee_id: 'w1003', payroll_reference: 'W1003', amount: 1_000, previous_amount: 1_000, payment_reference: 'SD00000019', action: 'continue' }),
      item({ employee_id: 'w1004', payroll_reference: 'W1004', amount: 2_550, previous_amount: 2_000, payment_reference: 'SD00000020', action: 'amend' }),
    ];
    const prefilled = renderDeductionReturnFile(renderInstructionFile({ ...heading, file_version: 1 }, documented)).toString('utf8');
    const filled = prefilled
      .replace('item,W1003,SD00000019,continue,10.00,10.00,no,', 'item,W1003,SD00000019,continue,10.00,4.50,no,')
      .replace('item,W1004,SD00000020,amend,25.50,25.50,no,', 'item,W1004,SD00000020,amend,25.50,0.00,yes,')
      .replace(',4,85.50,85.50', ',4,85.50,54.50');
    expect(example).toBe(filled);
    const check = checked(example, {
      ...expectation,
      fileVersion: 1,
      items: documented.map((i) => ({
        employeeId: i.employee_id,
        payrollReference: i.payroll_reference,
        paymentReference: i.payment_reference,
        amount: i.amount,
        action: i.action,
      })),
    });
    expect(check.errors).toEqual([]);
    expect(check.lines.map((line) => [line.employeeId, line.deducted, line.leaver])).toEqual([
      ['w1001', 5_000, false],
      ['w1002', 0, false],
      ['w1003', 450, false],
      ['w1004', 0, true],
    ]);
  });
});

describe('returnAmountInMinorUnits', () => {
  it.each([
    ['25.50', 'GBP', 2_550],
    ['25.5', 'GBP', 2_550],
    ['25', 'GBP', 2_500],
    ['  25.50  ', 'GBP', 2_550],
    ['0', 'GBP', 0],
    ['0.00', 'GBP', 0],
    ['.5', 'GBP', 50],
    ['25.500', 'GBP', 2_550],
    ['1,234.50', 'GBP', 123_450],
    ['1,234', 'GBP', 123_400],
    ['12,345,678.90', 'GBP', 1_234_567_890],
    ['1500', 'JPY', 1_500],
    ['1.234', 'BHD', 1_234],
  ])('reads %j %s as %d minor units', (text, currency, minor) => {
    expect(returnAmountInMinorUnits(text, currency)).toEqual({ minor });
  });

  it.each([
    ['', 'is empty'],
    ['-5.00', 'must not be negative'],
    ['(5.00)', 'must not be negative'],
    ['25,50', 'has a comma that does not separate thousands'],
    ['1,23.50', 'has a comma that does not separate thousands'],
    ['1234,567.00', 'has a comma that does not separate thousands'],
    ['£25.00', 'without a currency symbol'],
    ['25.00 GBP', 'without a currency symbol'],
    ['1.2E+03', 'without a currency symbol'],
    ['25.505', 'more than 2 decimal places for GBP'],
    ['.', 'without a currency symbol'],
    ['1234567890123456', 'is too large'],
  ])('refuses %j, saying why', (text, reason) => {
    const read = returnAmountInMinorUnits(text, 'GBP');
    expect('reason' in read && read.reason).toContain(reason);
  });

  it('refuses decimals a currency does not have', () => {
    expect(returnAmountInMinorUnits('15.5', 'JPY')).toEqual({ reason: 'must be a whole number of JPY, got 15.5' });
  });
});

describe('leaverFlag', () => {
  it.each(['yes', 'YES', 'Yes', 'y', 'Y', 'true', 'TRUE', ' yes '])('takes %j as a leaver', (text) => expect(leaverFlag(text)).toBe(true));
  it.each(['no', 'NO', 'n', 'N', 'false', 'False', '', '  '])('takes %j as not a leaver', (text) => expect(leaverFlag(text)).toBe(false));
  it.each(['1', '0', 'x', 'leaver', 'yes please'])('takes %j as neither', (text) => expect(leaverFlag(text)).toBeNull());
});

describe('samePayrollReference', () => {
  it('matches as written, through the formula apostrophe, and a works number whose leading zeros a spreadsheet dropped', () => {
    expect(samePayrollReference('W1001', 'W1001')).toBe(true);
    expect(samePayrollReference(" '-W1 ", '-W1')).toBe(true);
    expect(samePayrollReference('123', '000123')).toBe(true);
    expect(samePayrollReference('W1002', 'W1001')).toBe(false);
    expect(samePayrollReference('124', '000123')).toBe(false);
    expect(samePayrollReference('w1001', 'W1001')).toBe(false);
  });
});

describe('readReturnFileRecords', () => {
  it('drops a byte order mark, takes CRLF and LF alike, skips empty lines and counts each record from the line it starts on', () => {
    const lf = readReturnFileRecords(`\ufeffa,b\n\n1,"two\nlines"\n\n\n3,4\n`);
    const crlf = readReturnFileRecords(`\ufeffa,b\r\n\r\n1,"two\r\nlines"\r\n\r\n\r\n3,4\r\n`);
    expect(lf).toEqual({
      records: [
        { line: 1, fields: ['a', 'b'] },
        { line: 3, fields: ['1', 'two\nlines'] },
        { line: 7, fields: ['3', '4'] },
      ],
    });
    expect(crlf).toEqual({
      records: [
        { line: 1, fields: ['a', 'b'] },
        { line: 3, fields: ['1', 'two\r\nlines'] },
        { line: 7, fields: ['3', '4'] },
      ],
    });
  });

  it('calls a file that is not CSV so, at the line where it stopped', () => {
    expect(readReturnFileRecords('a,b\r\n1,"open\r\n')).toMatchObject({ error: { column: null, reason: expect.stringContaining('is not valid CSV') } });
  });
});

describe('checkDeductionReturn', () => {
  it('takes a file as a spreadsheet saves it: LF, BOM, quoted cells, spaces, thousands separators, empty and blank rows, lower-case references, 123 for 000123', () => {
    const text =
      '\ufeff' +
      [
        RETURN_FILE.split('\r\n')[0],
        'header,,,,,,,GBP,7-2026,2026-10-30,Acme Widgets Ltd,EMP-0042,Acme monthly,PAY-7,2,,,',
        'item,123,sd00000020,amend,25.50,"25.5",Y,GBP,7-2026,2026-10-30,,,,,,,,',
        '',
        '"item","W1001"," SD00000017 ",new,50.00,"1,234.50",no,GBP,,,,,,,,,,',
        ',,,,,,,,,,,,,,,,,',
        'item,W1002,SD00000018,stop,0,0, ,gbp,7-2026,2026-10-30,,,,,,,,',
        'ITEM,W1003,SD00000019,continue,10,4.5,FALSE,GBP,7-2026,2026-10-30,,,,,,,,',
        'trailer,,,,,,,GBP,,,,,,,,4,85.5,"1,264.50"',
      ].join('\n');
    const check = checked(text);
    expect(check.errors).toEqual([]);
    expect(check.lines.map((line) => [line.line, line.employeeId, line.deducted, line.leaver])).toEqual([
      [3, 'employee-d', 2_550, true],
      [5, 'employee-a', 123_450, false],
      [7, 'employee-b', 0, false],
      [8, 'employee-c', 450, false],
    ]);
    expect(check.warnings).toEqual([
      { line: 5, column: 'amount_deducted', reason: '£1,234.50 is more than the £50.00 asked: reconciliation holds the excess, to be returned' },
    ]);
  });

  it('reports every bad item in one pass, each with its line, column and reason, and takes the good ones', () => {
    const text = edited({
      3: 'item,000123,SD00000020,amend,25.50,25,50,no,GBP,7-2026,2026-10-30,,,,,,,,',
      4: 'item,W1001,SD00000017,new,50.00,-5.00,maybe,EUR,7-2026,2026-11-30,,,,,,,,',
      5: 'item,W9999,SD00009999,stop,0.00,0.00,no,GBP,7-2026,2026-10-30,,,,,,,,',
      6: 'item,W1002,SD00000019,continue,12.00,,no,GBP,7-2026,2026-10-30,,,,,,,,',
    });
    const check = checked(text);
    expect(check.errors).toEqual([
      {
        line: 3,
        column: null,
        reason: 'has 19 fields where the column line has 18 (an amount written with a comma, such as 25,50, splits its field unless quoted: write 25.50)',
      },
      { line: 4, column: 'amount_deducted', reason: 'must not be negative, got -5.00' },
      { line: 4, column: 'leaver', reason: 'must be yes or no (or y, n, true, false), got maybe' },
      { line: 4, column: 'currency', reason: 'is EUR, but the payroll pays in GBP' },
      { line: 4, column: 'pay_date', reason: 'is 2026-11-30, but this is the return for pay date 2026-10-30' },
      { line: 5, column: 'payment_reference', reason: 'SD00009999 is not a deduction of instruction file version 2' },
      { line: 5, column: 'payroll_reference', reason: 'W9999 is not on instruction file version 2' },
      { line: 6, column: 'payroll_reference', reason: 'is W1002, but SD00000019 is the deduction of payroll reference W1003' },
      { line: 6, column: 'amount_requested', reason: 'is £12.00, but the instruction asked £10.00: leave it, and write what payroll deducted in amount_deducted' },
      { line: 6, column: 'amount_deducted', reason: 'is empty: write what payroll deducted, 0.00 when nothing' },
      {
        line: 7,
        column: 'payment_reference',
        reason: 'SD00000018 (payroll reference W1002, £0.00 asked) has no item: answer every item of the instruction file, 0.00 when nothing was deducted',
      },
    ]);
    // Item errors only: the header and trailer agree (the totals are not checked while amounts cannot be read).
    expect(check).toMatchObject({ rows: 4, rejectedRows: 4, fileErrors: 0, lines: [] });
  });

  it('names a repeated item, keeps the first, and counts the trailer against every item record', () => {
    const base = RETURN_FILE.split('\r\n');
    const text = [...base.slice(0, 4), 'item,W1001,SD00000017,new,50.00,20.00,no,GBP,7-2026,2026-10-30,,,,,,,,', ...base.slice(4)].join('\r\n');
    const check = checked(text.replace('trailer,,,,,,,GBP,,,,,,,,4,85.50,85.50', 'trailer,,,,,,,GBP,,,,,,,,5,135.50,105.50'));
    expect(check.errors).toEqual([{ line: 5, column: 'payment_reference', reason: 'repeats the deduction of line 4 (SD00000017)' }]);
    expect(check.lines.map((line) => line.line)).toEqual([3, 4, 6, 7]);
  });

  it('refuses the file whole for a header naming another pay date, payroll, currency or version', () => {
    const check = checked(edited({ 2: 'header,,,,,,,EUR,7-2026,2026-11-30,Acme Widgets Ltd,EMP-0042,Acme monthly,PAY-8,1,,,' }));
    expect(check.errors).toEqual([
      { line: 2, column: 'pay_date', reason: 'is 2026-11-30, but this is the return for pay date 2026-10-30' },
      { line: 2, column: 'payroll_external_id', reason: `is PAY-8, but this is the return for payroll PAY-7 (${expectation.payrollId})` },
      { line: 2, column: 'currency', reason: 'is EUR, but the payroll pays in GBP' },
      { line: 2, column: 'file_version', reason: 'answers instruction file version 1, which a re-run replaced with version 2: fill in the return file of version 2' },
    ]);
    expect(check.fileErrors).toBe(4);
    expect(checked(edited({ 2: 'header,,,,,,,GBP,7-2026,2026-10-30,Acme Widgets Ltd,EMP-0042,Acme monthly,PAY-7,3,,,' })).errors).toEqual([
      { line: 2, column: 'file_version', reason: "is 3, but the pay date's instruction file is version 2" },
    ]);
  });

  it('says clearly when the trailer is missing (cut off), counts wrongly, or its totals do not add up', () => {
    const cut = RETURN_FILE.split('\r\n').slice(0, 5).join('\r\n');
    expect(checked(cut).errors).toEqual([
      {
        line: 6,
        column: 'payment_reference',
        reason: 'SD00000019 (payroll reference W1003, £10.00 asked) has no item: answer every item of the instruction file, 0.00 when nothing was deducted',
      },
      {
        line: 6,
        column: null,
        reason: 'the file has no trailer record: it may have been cut off. Its last record is the trailer, with line_count, total_requested and total_deducted',
      },
    ]);
    const partlyDeducted = edited({ 4: 'item,W1001,SD00000017,new,50.00,20.00,no,GBP,7-2026,2026-10-30,,,,,,,,', 7: 'trailer,,,,,,,GBP,,,,,,,,3,85.50,85.50' });
    const check = checked(partlyDeducted);
    expect(check.errors).toEqual([
      { line: 7, column: 'line_count', reason: 'is 3, but the file has 4 item records' },
      { line: 7, column: 'total_deducted', reason: "is £85.50, but the items' amount_deducted add up to £55.50: correct the total (or the items)" },
    ]);
    expect(check).toMatchObject({ fileErrors: 2, rejectedRows: 0 });
    expect(check.lines).toHaveLength(4);
    expect(checked(edited({ 7: 'trailer,,,,,,,GBP,,,,,,,,four,85.50,' })).errors).toEqual([
      { line: 7, column: 'line_count', reason: 'is four, but the file has 4 item records' },
      { line: 7, column: 'total_deducted', reason: 'is empty' },
    ]);
  });

  it('puts every record in its place: the header first, the trailer last, nothing else', () => {
    const lines = RETURN_FILE.split('\r\n');
    const shuffled = [lines[0], lines[3], lines[1], lines[2], lines[6], lines[4], 'note,,,,,,,,,,,,,,,,,', lines[5], lines[6], ''].join('\r\n');
    expect(checked(shuffled).errors.filter((error) => error.column === 'record_type')).toEqual([
      { line: 2, column: 'record_type', reason: 'comes before the header (line 3): the header is the first record' },
      { line: 5, column: 'record_type', reason: 'is a trailer before the last record (the trailer is on line 9)' },
      { line: 7, column: 'record_type', reason: 'must be header, item or trailer, got note' },
    ]);
    expect(checked([lines[0], ...lines.slice(2)].join('\r\n')).errors[0]).toEqual({
      line: 2,
      column: 'record_type',
      reason: 'the file has no header record: its first record names the payroll and pay date it answers',
    });
  });

  it('tells an instruction file, a semicolon file, a wrong column line and an empty file apart', () => {
    expect(checked(instructionFile).errors).toEqual([
      { line: 1, column: null, reason: 'names the columns of an instruction file: import its deduction return file, which has amount_deducted beside each item' },
    ]);
    expect(checked(RETURN_FILE.replaceAll(',', ';')).errors).toEqual([
      { line: 1, column: null, reason: 'is separated by semicolons: save the file as CSV with commas (CSV UTF-8, comma delimited)' },
    ]);
    const renamed = checked(RETURN_FILE.replace('amount_deducted,leaver', 'deducted,leaver,leaver'));
    expect(renamed.errors).toEqual([
      { line: 1, column: 'deducted', reason: expect.stringContaining('is not a column of a deduction return file') },
      { line: 1, column: 'leaver', reason: 'appears more than once in the column line' },
      { line: 1, column: 'amount_deducted', reason: 'is missing from the column line' },
    ]);
    expect(renamed.fileErrors).toBe(3);
    expect(checked('').errors).toEqual([{ line: 1, column: null, reason: 'the file is empty: it needs the column line, a header, the items and a trailer' }]);
  });

  it('finds an item stored before payment references existed by its payroll reference, and only such an item', () => {
    const older = { ...expectation, items: expectation.items.map((i) => (i.payrollReference === '000123' ? { ...i, paymentReference: null } : i)) };
    const check = checked(
      edited({ 3: 'item,123,,amend,25.50,25.50,no,GBP,7-2026,2026-10-30,,,,,,,,', 4: 'item,W1001,,new,50.00,50.00,no,GBP,7-2026,2026-10-30,,,,,,,,' }),
      older,
    );
    expect(check.errors).toEqual([
      { line: 4, column: 'payment_reference', reason: "is empty: every item names its deduction's payment reference, as the instruction file did" },
      {
        line: 7,
        column: 'payment_reference',
        reason: 'SD00000017 (payroll reference W1001, £50.00 asked) has no item: answer every item of the instruction file, 0.00 when nothing was deducted',
      },
    ]);
    expect(check.lines.map((line) => line.employeeId)).toEqual(['employee-d', 'employee-b', 'employee-c']);
  });

  it('warns of a deduction where the instruction asked nothing, and holds amounts to the reporting limits', () => {
    const stopped = checked(edited({ 5: 'item,W1002,SD00000018,stop,0.00,20.00,no,GBP,7-2026,2026-10-30,,,,,,,,', 7: 'trailer,,,,,,,GBP,,,,,,,,4,85.50,105.50' }));
    expect(stopped.warnings).toEqual([
      { line: 5, column: 'amount_deducted', reason: '£20.00 deducted where the instruction asked nothing (stop): reconciliation holds it, to be returned' },
    ]);
    const limited = checked(RETURN_FILE, { ...expectation, limits: { maxPerEmployee: 3_000, maxPerPayDate: 8_000 } });
    expect(limited.errors).toEqual([
      { line: 4, column: 'amount_deducted', reason: 'must be at most £30.00 (MAX_REPORTED_DEDUCTION_MINOR), got £50.00' },
      {
        line: 7,
        column: 'total_deducted',
        reason: "the items' amount_deducted add up to £85.50, more than payroll may report for a pay date, £80.00 (MAX_REPORTED_PAY_DATE_TOTAL_MINOR)",
      },
    ]);
  });
});
