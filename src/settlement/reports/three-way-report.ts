import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { formatCalendarDate, parseCalendarDate } from '../../directory/calendars/working-days.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { formatMinorUnits } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { neutraliseFormula } from '../../platform/shared/csv-cells.ts';
import { findThreeWayRows, type ThreeWayRow } from './three-way-report-repository.ts';

export type { ThreeWayRow };

// The three-way reconciliation: for each payroll pay date, what we asked the employer's payroll to
// deduct, what payroll says it deducted, what the employer sent to our collection account, and what
// left it for billers. Finance reads one line per payroll and wants to know, without opening four
// screens, why the figures differ.

/** The report's columns, in order: finance's spreadsheets address columns by position. */
export const threeWayColumns = [
  'payroll_id',
  'employer',
  'payroll',
  'pay_date',
  'currency',
  'payment_reference',
  'requested',
  'deducted',
  'expected',
  'received',
  'remittance_status',
  'due_date',
  'funded',
  'paid_out',
  'held_back',
  'explanation',
  // Added after the others, so the columns finance's spreadsheets address by position keep their place.
  'shortfall',
] as const;

export type ThreeWayRecord = Record<(typeof threeWayColumns)[number], string>;

/** The first day a remittance counts as late: remittanceStatus turns 'late' once today is past the due date. */
export function firstLateDay(dueDate: string): string {
  return formatCalendarDate(parseCalendarDate(dueDate).plus({ days: 1 }));
}

/**
 * Why a payroll pay date's four figures differ, as one short sentence; "All paid out." when they agree.
 * In the order money travels: payroll's deduction, the employer's remittance, then our funding and payouts.
 */
export function explainThreeWay(row: ThreeWayRow): string {
  const money = (minor: number) => formatMoney(minor, row.currency);
  const differences: string[] = [];

  if (row.deducted === null) differences.push('payroll has not reported its deductions yet');
  else if (row.deducted < row.requested) differences.push(`payroll deducted ${money(row.requested - row.deducted)} less than requested`);
  else if (row.deducted > row.requested) differences.push(`payroll deducted ${money(row.deducted - row.requested)} more than requested`);

  // The employer owes what payroll deducted once it has reported, what was requested before.
  const owedBasis = row.deducted === null ? 'requested' : 'deducted';
  if (row.received === 0 && row.expected > 0) {
    differences.push(row.remittance_status === 'late' ? `nothing received, late since ${firstLateDay(row.due_date)}` : `nothing received, not yet due (due ${row.due_date})`);
  } else if (row.received < row.expected) {
    differences.push(`employer remitted ${money(row.expected - row.received)} less than ${owedBasis} (short)`);
  } else if (row.received > row.expected) {
    differences.push(`employer remitted ${money(row.received - row.expected)} more than ${owedBasis} (over)`);
  }

  if (row.shortfall > 0) differences.push(`the bank took back money already paid out: ${money(row.shortfall)} owed back (shortfall)`);

  // A reversal (payroll reported less after a payout) is a negative entry: it waits like a collection.
  if (row.held_back > 0) differences.push(`${money(row.held_back)} held back until the remittance arrives`);
  else if (row.held_back < 0) differences.push(`${money(-row.held_back)} reversed, waiting for the remittance before it is netted`);

  const awaitingPayout = row.funded - row.paid_out;
  if (awaitingPayout > 0) differences.push(`${money(awaitingPayout)} funded, not yet paid out (next payout run)`);
  else if (awaitingPayout < 0) differences.push(`${money(-awaitingPayout)} reversed, to be netted in the next payout run`);

  if (differences.length === 0) return 'All paid out.';
  const sentence = differences.join('; ');
  return `${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`;
}

/** One record: money as decimal strings in the row's currency, a missing payroll report as an empty cell. */
export function toThreeWayRecord(row: ThreeWayRow): ThreeWayRecord {
  const money = (minor: number) => formatMinorUnits(minor, row.currency);
  return {
    payroll_id: row.payroll_id,
    employer: row.employer,
    payroll: row.payroll,
    pay_date: row.pay_date,
    currency: row.currency,
    payment_reference: row.payment_reference,
    requested: money(row.requested),
    deducted: row.deducted === null ? '' : money(row.deducted),
    expected: money(row.expected),
    received: money(row.received),
    remittance_status: row.remittance_status,
    due_date: row.due_date,
    funded: money(row.funded),
    paid_out: money(row.paid_out),
    held_back: money(row.held_back),
    explanation: explainThreeWay(row),
    shortfall: money(row.shortfall),
  };
}

/** The CSV cells of a record: names from outside neutralised, so a spreadsheet never runs them. */
export function toThreeWayCsvCells(record: ThreeWayRecord): string[] {
  return threeWayColumns.map((column) => (column === 'employer' || column === 'payroll' ? neutraliseFormula(record[column]) : record[column]));
}

/** Exact at any size: a pay date's thousands of remittances can add up past what a number carries. */
export interface ThreeWayTotal {
  currency: string;
  requested: bigint;
  deducted: bigint;
  received: bigint;
  funded: bigint;
  paid_out: bigint;
  held_back: bigint;
  shortfall: bigint;
}

/** Per currency sums of the rows (a missing payroll report counts as nothing deducted), in currency order. */
export function threeWayTotals(rows: readonly ThreeWayRow[]): ThreeWayTotal[] {
  const totals = new Map<string, ThreeWayTotal>();
  for (const row of rows) {
    const total = totals.get(row.currency) ?? { currency: row.currency, requested: 0n, deducted: 0n, received: 0n, funded: 0n, paid_out: 0n, held_back: 0n, shortfall: 0n };
    total.requested += BigInt(row.requested);
    total.deducted += BigInt(row.deducted ?? 0);
    total.received += BigInt(row.received);
    total.funded += BigInt(row.funded);
    total.paid_out += BigInt(row.paid_out);
    total.held_back += BigInt(row.held_back);
    total.shortfall += BigInt(row.shortfall);
    totals.set(row.currency, total);
  }
  return [...totals.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

export function threeWayFileName(payDate: string): string {
  return `three-way-${payDate}.csv`;
}

/** The pay date's rows, live payrolls only (sandbox payrolls' money is simulated). */
export async function threeWayReport(db: Executor, payDate: string): Promise<ThreeWayRow[]> {
  return findThreeWayRows(db, payDate);
}

/** The rows as a CSV byte stream, header first, written as the reader takes it. */
export function threeWayCsvStream(rows: readonly ThreeWayRow[]): Readable {
  const csv = stringify({ header: true, columns: [...threeWayColumns] });
  // One row per payroll paying on the date (thousands at most): read in one query, written row by row.
  Readable.from(rows.map((row) => toThreeWayCsvCells(toThreeWayRecord(row)))).pipe(csv);
  return csv;
}

/**
 * The report read first and then streamed, so a database that cannot be reached fails an HTTP request
 * before any byte of a 200 has been sent.
 */
export async function openThreeWayCsvStream(db: Executor, payDate: string): Promise<Readable> {
  return threeWayCsvStream(await threeWayReport(db, payDate));
}

/** Streams the CSV into a file or stdout; `end: false` leaves the destination open (stdout must not be ended). */
export async function writeThreeWayCsv(db: Executor, payDate: string, destination: Writable, options: { end?: boolean } = {}): Promise<void> {
  await pipeline(await openThreeWayCsvStream(db, payDate), destination, { end: options.end ?? true });
}
