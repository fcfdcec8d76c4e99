import type { RemittanceStatus } from '../../platform/db/tables.ts';
import { addWorkingDays, assertCalendarDate, type HolidayCalendar } from '../../directory/calendars/working-days.ts';

// A remittance is what an employer owes the collection account for one payroll pay date. Its
// status is derived from money alone (expected against received) and, while nothing has come,
// from the calendar: it turns late only once the employer's grace has passed.

export interface RemittanceAmounts {
  /** Minor units the employer should remit, >= 0. */
  expected: number;
  /** Minor units matched to it so far, >= 0. */
  received: number;
}

function assertMinorUnits(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`${what} must be a non-negative integer of minor units, got ${String(amount)}`);
}

/**
 * The last day an employer's remittance is on time: `lateWorkingDays` working days after the pay
 * date (the pay date itself is day 0, so 0 means on the pay date).
 */
export function remittanceDueDate(payDate: string, lateWorkingDays: number, holidays: HolidayCalendar): string {
  return addWorkingDays(payDate, lateWorkingDays, holidays);
}

/**
 * - shortfall: more has been paid out of it than it has received (the bank took back a credit after it
 *   was paid out): money owed back, whatever else is true;
 * - received: exactly what was expected has come (also when nothing was expected);
 * - over: more than expected has come;
 * - short: some, but not all, has come, whether or not it is past due (the money says more than the date);
 * - expected: nothing yet, and today is on or before the due date;
 * - late: nothing yet, and the due date has passed.
 */
export function remittanceStatus(input: RemittanceAmounts & { dueDate: string; today: string; shortfall?: number }): RemittanceStatus {
  const { expected, received, dueDate, today, shortfall = 0 } = input;
  assertMinorUnits(expected, 'the expected amount');
  assertMinorUnits(received, 'the received amount');
  assertMinorUnits(shortfall, 'the shortfall');
  assertCalendarDate(dueDate);
  assertCalendarDate(today);
  if (shortfall > 0) return 'shortfall';
  if (received === expected) return 'received';
  if (received > expected) return 'over';
  if (received > 0) return 'short';
  // Validated 'YYYY-MM-DD' dates order as strings.
  return today > dueDate ? 'late' : 'expected';
}

/** What the employer still owes: what is expected less what came, never below zero (an overpayment is not a debt). */
export function amountOwed(amounts: RemittanceAmounts): number {
  assertMinorUnits(amounts.expected, 'the expected amount');
  assertMinorUnits(amounts.received, 'the received amount');
  return Math.max(0, amounts.expected - amounts.received);
}

/**
 * What an employer is expected to remit: what payroll reports it deducted once it has reported
 * (an employee with too little pay is deducted less than was asked), until then what we requested.
 */
export function expectedRemittance(amounts: { requested: number; deducted: number | null }): number {
  assertMinorUnits(amounts.requested, 'the requested amount');
  if (amounts.deducted === null) return amounts.requested;
  assertMinorUnits(amounts.deducted, 'the deducted amount');
  return amounts.deducted;
}

/**
 * What has been paid out of a pay date beyond what it has received: after the bank takes back a credit
 * whose money was already paid to billers, that money is owed back. Never below zero.
 */
export function remittanceShortfall(amounts: { paidOut: number; received: number }): number {
  if (!Number.isSafeInteger(amounts.paidOut)) throw new RangeError(`the paid out amount must be an integer of minor units, got ${String(amounts.paidOut)}`);
  assertMinorUnits(amounts.received, 'the received amount');
  return Math.max(0, amounts.paidOut - amounts.received);
}
