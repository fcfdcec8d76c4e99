import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { instructionFileColumns, instructionFileName, renderInstructionFile, type InstructionFileHeading } from '../../../src/cycle/instructions/instruction-file.ts';
import type { NewInstructionItem } from '../../../src/cycle/instructions/instruction-repository.ts';

const heading: InstructionFileHeading = {
  employer_name: 'Acme Widgets Ltd',
  employer_external_id: 'EMP-0042',
  payroll_name: 'Acme monthly',
  payroll_external_id: 'PAY-7',
  pay_date: '2026-10-30',
  pay_period: '7-2026',
  currency: 'GBP',
  file_version: 1,
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
  item({ employee_id: 'c', payroll_reference: 'W1003', amount: 1_000, previous_amount: 1_000, payment_reference: 'SD00000019', action: 'continue' }),
  item({ employee_id: 'a', payroll_reference: 'W1001', amount: 5_000, previous_amount: null, payment_reference: 'SD00000017', action: 'new' }),
  item({ employee_id: 'b', payroll_reference: 'W1002', amount: 0, previous_amount: 2_000, payment_reference: 'SD00000018', action: 'stop' }),
  item({ employee_id: 'd', payroll_reference: 'W1004', amount: 2_550, previous_amount: 2_000, payment_reference: 'SD00000020', action: 'amend' }),
];

/** The example in docs/integrators.md (Instruction files), byte for byte. */
const EXAMPLE = [
  'record_type,payroll_reference,action,amount,previous_amount,currency,payment_reference,pay_period,pay_date,employer_name,employer_external_id,payroll_name,payroll_external_id,file_version,line_count,total_amount',
  'header,,,,,GBP,,7-2026,2026-10-30,Acme Widgets Ltd,EMP-0042,Acme monthly,PAY-7,1,,',
  'item,W1001,new,50.00,,GBP,SD00000017,7-2026,2026-10-30,,,,,,,',
  'item,W1002,stop,0.00,20.00,GBP,SD00000018,7-2026,2026-10-30,,,,,,,',
  'item,W1003,continue,10.00,10.00,GBP,SD00000019,7-2026,2026-10-30,,,,,,,',
  'item,W1004,amend,25.50,20.00,GBP,SD00000020,7-2026,2026-10-30,,,,,,,',
  'trailer,,,,,GBP,,,,,,,,,4,85.50',
  '',
].join('\r\n');

describe('renderInstructionFile', () => {
  it('writes the documented layout: column names, a header, the items in payroll reference order, a trailer', () => {
    expect(renderInstructionFile(heading, items).toString('utf8')).toBe(EXAMPLE);
  });

  it('is one table a CSV reader takes as it is: every record has every column', () => {
    const records = parse(renderInstructionFile(heading, items), { columns: true }) as Array<Record<string, string>>;
    expect(records.map((r) => r.record_type)).toEqual(['header', 'item', 'item', 'item', 'item', 'trailer']);
    for (const record of records) expect(Object.keys(record)).toEqual([...instructionFileColumns]);
    const trailer = records.at(-1)!;
    const lines = records.filter((r) => r.record_type === 'item');
    expect(Number(trailer.line_count)).toBe(lines.length);
    expect(trailer.total_amount).toBe('85.50');
    // The total is the sum of the item amounts, to the penny.
    expect(lines.reduce((sum, r) => sum + Math.round(Number(r.amount) * 100), 0)).toBe(8_550);
    // Our ids are not in the file: the clerk knows people by their payroll reference.
    expect(renderInstructionFile(heading, items).toString('utf8')).not.toMatch(/employee_id|00000000-0000/);
  });

  it('orders items by payroll reference, then payment reference, whatever order they come in', () => {
    const reversed = renderInstructionFile(heading, [...items].reverse());
    expect(reversed.equals(renderInstructionFile(heading, items))).toBe(true);
    const tied = [item({ payroll_reference: '', payment_reference: 'SD00000002' }), item({ payroll_reference: '', payment_reference: 'SD00000001' })];
    const rows = parse(renderInstructionFile(heading, tied), { columns: true }) as Array<Record<string, string>>;
    expect(rows.filter((r) => r.record_type === 'item').map((r) => r.payment_reference)).toEqual(['SD00000001', 'SD00000002']);
  });

  it('has a header and a trailer with no items: nothing to key, and the file says so', () => {
    const text = renderInstructionFile(heading, []).toString('utf8');
    const records = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(records).toEqual([
      expect.objectContaining({ record_type: 'header', employer_external_id: 'EMP-0042', pay_date: '2026-10-30' }),
      expect.objectContaining({ record_type: 'trailer', line_count: '0', total_amount: '0.00', currency: 'GBP' }),
    ]);
  });

  it('writes money in the currency of the file', () => {
    const yen = renderInstructionFile({ ...heading, currency: 'JPY' }, [item({ amount: 5_000, currency: 'JPY' })]);
    const records = parse(yen, { columns: true }) as Array<Record<string, string>>;
    expect(records.map((r) => [r.record_type, r.amount, r.total_amount, r.currency])).toEqual([
      ['header', '', '', 'JPY'],
      ['item', '5000', '', 'JPY'],
      ['trailer', '', '5000', 'JPY'],
    ]);
  });

  it('shows text from outside as text in a spreadsheet, never a formula, and quotes what needs quoting', () => {
    const hostile: InstructionFileHeading = {
      ...heading,
      employer_name: '=HYPERLINK("http://evil.example","click")',
      employer_external_id: '+44',
      payroll_name: 'Acme, "monthly"\nrun',
      payroll_external_id: '@SUM(1)',
    };
    const records = parse(renderInstructionFile(hostile, [item({ payroll_reference: '-12' })]), { columns: true }) as Array<Record<string, string>>;
    expect(records[0]).toMatchObject({
      employer_name: `'=HYPERLINK("http://evil.example","click")`,
      employer_external_id: "'+44",
      payroll_name: 'Acme, "monthly"\nrun',
      payroll_external_id: "'@SUM(1)",
    });
    expect(records[1]).toMatchObject({ record_type: 'item', payroll_reference: "'-12" });
  });
});

describe('instructionFileName', () => {
  it.each([
    [{ employerName: 'Acme Widgets Ltd', payrollName: 'Acme monthly', payDate: '2026-10-30', version: 1 }, 'acme-widgets-ltd_acme-monthly_2026-10-30_v1.csv'],
    [
      { employerName: 'Severn Valley Distribution Ltd', payrollName: 'Severn Valley Distribution Ltd weekly payroll', payDate: '2026-12-11', version: 2 },
      'severn-valley-distribution-ltd_weekly-payroll_2026-12-11_v2.csv',
    ],
    [{ employerName: "O'Brien & Sons", payrollName: 'Four-weekly (staff)', payDate: '2027-01-08', version: 3 }, 'obrien-and-sons_four-weekly-staff_2027-01-08_v3.csv'],
    [{ employerName: 'Café Zürich GmbH', payrollName: 'Café Zürich GmbH', payDate: '2027-01-29', version: 1 }, 'cafe-zurich-gmbh_cafe-zurich-gmbh_2027-01-29_v1.csv'],
    [{ employerName: '株式会社', payrollName: '/../../etc/passwd', payDate: '2027-01-29', version: 1 }, 'zhushihuishe_etc-passwd_2027-01-29_v1.csv'],
    [{ employerName: '***', payrollName: '', payDate: '2027-01-29', version: 1 }, 'employer_payroll_2027-01-29_v1.csv'],
  ])('names %j %s', (file, name) => expect(instructionFileName(file)).toBe(name));

  it('is safe on every file system and in a header, whatever the names, and no longer than it needs', () => {
    const long = 'The Extraordinarily Long-Named Northern Regional Hospitality and Leisure Group plc';
    const name = instructionFileName({ employerName: long, payrollName: `${long} weekly payroll`, payDate: '2027-01-29', version: 12 });
    expect(name).toBe('the-extraordinarily-long-named-northern_weekly-payroll_2027-01-29_v12.csv');
    for (const employerName of ['a/b\\c:d*e?f"g<h>i|j', 'CON', ' ', '\u0000x', 'Ünïcödé — “quotes”']) {
      expect(instructionFileName({ employerName, payrollName: 'x', payDate: '2027-01-29', version: 1 })).toMatch(/^[a-z0-9-]+_[a-z0-9-]+_\d{4}-\d{2}-\d{2}_v\d+\.csv$/);
    }
  });
});
