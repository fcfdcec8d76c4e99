import { describe, expect, it } from 'vitest';
import { parsePayCalendarCsv } from '../../../src/directory/calendars/pay-calendar-csv.ts';

describe('parsePayCalendarCsv: good files', () => {
  it.each([
    {
      name: 'with pay periods, in date order whatever the file order',
      csv: 'pay_date,payroll_cutoff_date,pay_period\n2027-02-26,2027-02-19,11-2026\n2027-01-29,2027-01-22,10-2026\n',
      frequency: 'monthly' as const,
      payDates: [
        { pay_date: '2027-01-29', payroll_cutoff_date: '2027-01-22', pay_period: '10-2026' },
        { pay_date: '2027-02-26', payroll_cutoff_date: '2027-02-19', pay_period: '11-2026' },
      ],
    },
    {
      name: "without pay periods: the payroll's frequency labels them (tax week 53 included)",
      csv: 'payroll_cutoff_date,pay_date\r\n2027-03-31,2027-04-05\r\n2027-04-07,2027-04-12\r\n',
      frequency: 'weekly' as const,
      payDates: [
        { pay_date: '2027-04-05', payroll_cutoff_date: '2027-03-31', pay_period: '53-2026' },
        { pay_date: '2027-04-12', payroll_cutoff_date: '2027-04-07', pay_period: '1-2027' },
      ],
    },
    {
      name: 'a byte-order mark, upper-case headers, blanks around fields and empty lines',
      csv: '\uFEFFPAY_DATE,PAYROLL_CUTOFF_DATE\n\n 2027-01-29 , 2027-01-29 \n\n',
      frequency: 'monthly' as const,
      payDates: [{ pay_date: '2027-01-29', payroll_cutoff_date: '2027-01-29', pay_period: '10-2026' }],
    },
  ])('$name', ({ csv, frequency, payDates }) => {
    expect(parsePayCalendarCsv(csv, frequency)).toEqual({ ok: true, payDates });
  });
});

describe('parsePayCalendarCsv: bad files report every fault', () => {
  it.each([
    {
      name: 'bad rows: every one with its line and column',
      csv: [
        'pay_date,payroll_cutoff_date,pay_period',
        '2027-01-29,2027-01-22,10-2026',
        '2027-02-30,2027-02-19,11-2026',
        '2027-03-31,2027-04-01,12-2026',
        '2027-04-30,,month one',
        '2027-01-29,2027-01-20,1-2027',
        '2027-05-28,2027-05-21,10-2026',
        '2027-06-30,2027-06-23',
      ].join('\n'),
      errors: [
        { line: 3, column: 'pay_date', reason: "'2027-02-30' is not a date as YYYY-MM-DD" },
        { line: 4, column: 'payroll_cutoff_date', reason: '2027-04-01 is after the pay date 2027-03-31' },
        { line: 5, column: 'payroll_cutoff_date', reason: 'is empty' },
        { line: 5, column: 'pay_period', reason: "'month one' is not a pay period such as 10-2026 (period, then the year the tax year started)" },
        { line: 6, column: 'pay_date', reason: '2027-01-29 is already on line 2' },
        { line: 7, column: 'pay_period', reason: 'pay period 10-2026 is already on line 2' },
        { line: 8, column: null, reason: 'has 2 fields; the header has 3' },
      ],
    },
    {
      name: 'a header with unknown, repeated and missing columns',
      csv: 'pay_date,pay_date,cutoff\n2027-01-29,2027-01-29,2027-01-22\n',
      errors: [
        { line: 1, column: 'cutoff', reason: 'unknown column; expected pay_date, payroll_cutoff_date, pay_period' },
        { line: 1, column: 'pay_date', reason: 'the column is named twice' },
        { line: 1, column: 'payroll_cutoff_date', reason: 'the column is missing' },
      ],
    },
    { name: 'an empty file', csv: '', errors: [{ line: 1, column: null, reason: 'the file is empty: expected the header pay_date,payroll_cutoff_date[,pay_period]' }] },
    { name: 'a header alone', csv: 'pay_date,payroll_cutoff_date\n', errors: [{ line: 1, column: null, reason: 'the file has a header and no pay dates' }] },
  ])('$name', ({ csv, errors }) => {
    expect(parsePayCalendarCsv(csv, 'monthly')).toEqual({ ok: false, errors });
  });

  it('a quote left open is reported with its line', () => {
    const result = parsePayCalendarCsv('pay_date,payroll_cutoff_date\n2027-01-29,2027-01-22\n"2027-02-26,2027-02-19\n', 'monthly');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toEqual([{ line: 3, column: null, reason: expect.stringMatching(/^not readable as CSV: Quote Not Closed/) }]);
  });

  it('a payroll of unknown frequency needs the pay_period column', () => {
    expect(parsePayCalendarCsv('pay_date,payroll_cutoff_date\n2027-01-29,2027-01-22\n', 'unknown')).toEqual({
      ok: false,
      errors: [{ line: 1, column: 'pay_period', reason: "the payroll's frequency is unknown, so each pay date needs its pay_period" }],
    });
  });
});
