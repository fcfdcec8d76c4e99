import { assertCalendarDate } from './working-days.ts';

export interface CalendarPayDate {
  payDate: string;
  lockDate: string;
  /** The nightly lock has already locked this pay date (a snapshot exists). */
  locked: boolean;
}

export interface TargetPayDateInput {
  payDates: ReadonlyArray<CalendarPayDate>;
  dueDate: string | null;
  allowPostDueDateDeduction: boolean;
  /** The service's calendar date (see serviceToday), not a UTC date. */
  today: string;
}

export type TargetPayDateResult =
  | { ok: true; payDate: string; postDue: boolean }
  | {
      ok: false;
      reason: 'due_date_unreachable';
      /**
       * The first open pay date after the due date, to name in the 422 detail. Always a string
       * today: when no pay date is open at all the result is 'no_open_pay_date' instead, because
       * an exhausted calendar is an operational problem, not a fact about the customer's due date.
       */
      expectedPayDate: string | null;
    }
  | { ok: false; reason: 'no_open_pay_date' };

/**
 * A pay date can still take new payment requests only while its lock has not run and will not
 * run tonight either. A lock date of today counts as closed: the nightly run for today may
 * already have happened (or be happening), and a request added now would silently miss the
 * snapshot. The `locked` flag covers re-runs and locks that ran early.
 */
export function isPayDateOpen(payDate: CalendarPayDate, today: string): boolean {
  return !payDate.locked && payDate.lockDate > today;
}

/**
 * The target pay date rule. Aim for the latest open pay date on or before the due date so the
 * money arrives in time while being taken as late as possible; with no due date, the earliest
 * open pay date. When every open pay date is after the due date, deducting late is only allowed
 * if the payment request opted in; otherwise the request is rejected naming the pay date it
 * would have got.
 */
export function targetPayDate(input: TargetPayDateInput): TargetPayDateResult {
  const { dueDate, allowPostDueDateDeduction, today } = input;
  assertCalendarDate(today);
  if (dueDate !== null) assertCalendarDate(dueDate);
  for (const p of input.payDates) {
    assertCalendarDate(p.payDate);
    assertCalendarDate(p.lockDate);
  }

  // Providers do not promise any order; ISO strings sort chronologically.
  const open = input.payDates
    .filter((p) => isPayDateOpen(p, today))
    .map((p) => p.payDate)
    .sort();

  const firstOpen = open[0];
  if (firstOpen === undefined) return { ok: false, reason: 'no_open_pay_date' };
  if (dueDate === null) return { ok: true, payDate: firstOpen, postDue: false };

  const onOrBeforeDue = open.filter((d) => d <= dueDate);
  const latestInTime = onOrBeforeDue[onOrBeforeDue.length - 1];
  if (latestInTime !== undefined) return { ok: true, payDate: latestInTime, postDue: false };

  // Every open pay date is after the due date here, so the first open one is the earliest
  // possible collection.
  if (allowPostDueDateDeduction) return { ok: true, payDate: firstOpen, postDue: true };
  return { ok: false, reason: 'due_date_unreachable', expectedPayDate: firstOpen };
}
