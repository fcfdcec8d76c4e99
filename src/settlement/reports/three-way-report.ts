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
 * Where a part of the explanation sits: between two consecutive figures of the chain requested →
 * deducted → expected → received → funded → paid out, or in the collections held back (collected,
 * neither funded nor paid out), which the received cash and the remittance still to come account for.
 */
export const threeWayGaps = ['requested-deducted', 'deducted-expected', 'expected-received', 'received-funded', 'funded-paid_out', 'held_back'] as const;
export type ThreeWayGap = (typeof threeWayGaps)[number];

/**
 * How far apart consecutive figures are: the earlier less the later, in minor units (deducted counts as
 * requested until payroll has reported), and what is held back. What the parts must add up to.
 */
export function threeWayGapSizes(row: ThreeWayRow): Record<ThreeWayGap, number> {
  const deducted = row.deducted ?? row.requested;
  return {
    'requested-deducted': row.requested - deducted,
    'deducted-expected': deducted - row.expected,
    'expected-received': row.expected - row.received,
    'received-funded': row.received - row.funded,
    'funded-paid_out': row.funded - row.paid_out,
    held_back: row.held_back,
  };
}

export type ThreeWayPartKind =
  | 'not_reported'
  | 'deducted_less'
  | 'deducted_more'
  | 'expected_differs'
  | 'nothing_received'
  | 'remitted_short'
  | 'remitted_over'
  | 'funded_next_run'
  | 'reversal_netted_next_run'
  | 'short_of_next_request'
  | 'awaiting_report'
  | 'not_needed'
  | 'shortfall'
  | 'funded_on_trust'
  | 'held_back'
  | 'awaiting_payout'
  | 'reversal_awaiting_payout';

/** One clause of the explanation and the money it accounts for. */
export interface ThreeWayPart {
  kind: ThreeWayPartKind;
  /** The clause, lower case, without a full stop: explainThreeWay joins them into the sentence. */
  text: string;
  /** Minor units it accounts for in each gap it explains, signed as the gap is (threeWayGapSizes). */
  amounts: Partial<Record<ThreeWayGap, number>>;
}

/**
 * Why a payroll pay date's figures differ, clause by clause in the order money travels: payroll's
 * deduction, the employer's remittance, what became of the cash received, what is held back, then
 * payouts. Every penny is accounted for: for each gap of threeWayGapSizes, the amounts of the parts
 * add up to it exactly (test/settlement/reports/three-way-rules.test.ts proves it over every row).
 *
 * The cash received and not yet funded is told by what the next payout run does with it, as the
 * funding run decides (funding-order.ts): requests netting zero or less are funded first, whatever the
 * cash (`netting`); then whole payment requests, oldest first, as far as the cash goes (`fundable`).
 * What is left over then either waits for more cash, being less than the next whole request in line
 * (`next_request`), or is more than any collection needs (an over-remittance, an over-deduction held
 * as an exception), or waits for payroll's report before there is anything to fund. Funded beyond
 * what was received is either owed back (the bank took back a credit already paid out) or was funded
 * on the employer's trust, on payroll's report alone.
 */
export function threeWayParts(row: ThreeWayRow): ThreeWayPart[] {
  const money = (minor: number) => formatMoney(minor, row.currency);
  const parts: ThreeWayPart[] = [];
  const add = (kind: ThreeWayPartKind, text: string, amounts: ThreeWayPart['amounts'] = {}) => parts.push({ kind, text, amounts });
  const gaps = threeWayGapSizes(row);

  // Payroll's report.
  const lessDeducted = gaps['requested-deducted'];
  if (row.deducted === null) add('not_reported', 'payroll has not reported its deductions yet');
  else if (lessDeducted > 0) add('deducted_less', `payroll deducted ${money(lessDeducted)} less than requested`, { 'requested-deducted': lessDeducted });
  else if (lessDeducted < 0) add('deducted_more', `payroll deducted ${money(-lessDeducted)} more than requested`, { 'requested-deducted': lessDeducted });

  // The employer owes what payroll deducted once it has reported, what was requested before: the
  // remittance is made so (finance.md, Expected remittances), and says so should it ever differ.
  const owedBasis = row.deducted === null ? 'requested' : 'deducted';
  const lessExpected = gaps['deducted-expected'];
  if (lessExpected !== 0) {
    add('expected_differs', `the remittance expects ${money(Math.abs(lessExpected))} ${lessExpected > 0 ? 'less' : 'more'} than ${owedBasis}`, {
      'deducted-expected': lessExpected,
    });
  }

  // The employer's remittance.
  const unremitted = gaps['expected-received'];
  if (row.received === 0 && row.expected > 0) {
    // After a shortfall the bank has taken back what had arrived: the shortfall clause says so.
    const when =
      row.remittance_status === 'late'
        ? `, late since ${firstLateDay(row.due_date)}`
        : row.remittance_status === 'shortfall'
          ? ' any more'
          : `, not yet due (due ${row.due_date})`;
    add('nothing_received', `nothing received${when}`, { 'expected-received': unremitted });
  } else if (unremitted > 0) {
    add('remitted_short', `employer remitted ${money(unremitted)} less than ${owedBasis} (short)`, { 'expected-received': unremitted });
  } else if (unremitted < 0) {
    add('remitted_over', `employer remitted ${money(-unremitted)} more than ${owedBasis} (over)`, { 'expected-received': unremitted });
  }

  // The cash received and not yet funded: what the next payout run funds from it, then what is left.
  if (row.fundable !== 0) {
    add('funded_next_run', `${money(row.fundable)} held back, funded from the cash received at the next payout run`, {
      'received-funded': row.fundable,
      held_back: row.fundable,
    });
  }
  if (row.netting !== 0) {
    // A reversal costs no cash: it lowers what is funded, so it leaves more of the cash unused.
    add('reversal_netted_next_run', `${money(Math.abs(row.netting))} reversed, to be netted in the next payout run`, {
      'received-funded': row.netting,
      held_back: row.netting,
    });
  }
  /** The cash received that the next payout run leaves unused; below zero, funded beyond what was received. */
  const unused = gaps['received-funded'] - row.fundable - row.netting;
  /** The collections still held back after the next payout run: they wait for more cash. */
  const waiting = row.held_back - row.fundable - row.netting;
  if (unused > 0) {
    if (waiting > 0) {
      const next = row.next_request > 0 ? ` (${money(row.next_request)})` : '';
      add('short_of_next_request', `${money(unused)} received, not enough to fund the next whole payment request${next}`, { 'received-funded': unused });
    } else if (row.deducted === null) {
      add('awaiting_report', `${money(unused)} received, funding nothing until payroll reports`, { 'received-funded': unused });
    } else {
      add('not_needed', `${money(unused)} received that no collection needs`, { 'received-funded': unused });
    }
  }
  const owedBack = Math.min(row.shortfall, Math.max(0, -unused));
  if (row.shortfall > 0) {
    add('shortfall', `the bank took back money already paid out: ${money(row.shortfall)} owed back (shortfall)`, owedBack > 0 ? { 'received-funded': -owedBack } : {});
  }
  // Cash-funded pay dates never fund beyond what was received, but for a shortfall: the rest was funded
  // because the employer is (or was) trusted to remit, and payroll's report was enough.
  const fundedOnTrust = Math.max(0, -unused - owedBack);
  if (fundedOnTrust > 0) {
    add('funded_on_trust', `${money(fundedOnTrust)} funded before the cash arrived (employer trusted to remit)`, { 'received-funded': -fundedOnTrust });
  }

  // What stays held back: until the cash covers it all, less what is already received and unused; a
  // shortfall is paid back first.
  if (waiting > 0) {
    const more = waiting - unused;
    const nothingYet = row.received <= 0 && row.shortfall <= 0;
    const until = fundedOnTrust > 0 || nothingYet || more <= 0 ? 'until the remittance arrives' : `until ${money(more)} more arrives`;
    add('held_back', `${money(waiting)} held back ${until}`, { held_back: waiting });
  } else if (waiting < 0) {
    // Only when the figures disagree with each other (netting leaves out a reversal held back).
    add('held_back', `${money(-waiting)} reversed, to be netted once funded`, { held_back: waiting });
  }

  // Payouts.
  const awaitingPayout = gaps['funded-paid_out'];
  if (awaitingPayout > 0) add('awaiting_payout', `${money(awaitingPayout)} funded, not yet paid out (next payout run)`, { 'funded-paid_out': awaitingPayout });
  else if (awaitingPayout < 0)
    add('reversal_awaiting_payout', `${money(-awaitingPayout)} reversed, to be netted in the next payout run`, { 'funded-paid_out': awaitingPayout });

  return parts;
}

/** The parts as one short sentence; "All paid out." when the figures agree. */
export function explainThreeWay(row: ThreeWayRow): string {
  const parts = threeWayParts(row);
  if (parts.length === 0) return 'All paid out.';
  const sentence = parts.map((part) => part.text).join('; ');
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
