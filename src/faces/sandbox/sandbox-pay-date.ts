import { isPayDateOpen } from '../../directory/calendars/target-pay-date.ts';
import { addWorkingDays, type HolidayCalendar } from '../../directory/calendars/working-days.ts';

export interface SandboxCalendarEntry {
  pay_date: string;
  lock_date: string;
  locked: boolean;
}

/**
 * The pay date a simulated lock takes when the integrator names none: the payroll's first open pay
 * date, the one new payment requests aim at (targetPayDate), so locking it instructs what they just
 * created. Earlier pay dates left unlocked (the nightly run never locks a sandbox payroll) are locked
 * before it by the lock itself. Null when the calendar has no open pay date left.
 */
export function nextSandboxPayDate(calendar: readonly SandboxCalendarEntry[], today: string): string | null {
  const open = calendar
    .filter((entry) => isPayDateOpen({ payDate: entry.pay_date, lockDate: entry.lock_date, locked: entry.locked }, today))
    .map((entry) => entry.pay_date)
    .sort();
  return open[0] ?? null;
}

/**
 * The date a simulated payout carries: the day the daily run would have paid the latest collected pay
 * date (the settlement delay in working days after it), or, when the biller already had a payout on or
 * after that day (two payrolls paying on one date, driven one after the other), the next working day
 * after its latest: a biller gets one payout per currency and date, so each simulation needs a day of
 * its own.
 */
export function sandboxPayoutDate(latestCollectedPayDate: string, latestPayoutDate: string | null, settlementDelayWorkingDays: number, holidays: HolidayCalendar): string {
  const due = addWorkingDays(latestCollectedPayDate, settlementDelayWorkingDays, holidays);
  if (latestPayoutDate === null || latestPayoutDate < due) return due;
  return addWorkingDays(latestPayoutDate, 1, holidays);
}
