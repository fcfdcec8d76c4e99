import { isPayDateOpen } from '../calendars/target-pay-date.ts';

export interface SandboxCalendarEntry {
  pay_date: string;
  lock_date: string;
  locked: boolean;
}

/**
 * The pay date a simulated lock takes when the integrator names none: the payroll's first open pay
 * date, the one new payment requests aim at (targetPayDate), so locking it instructs what they just
 * created. Earlier pay dates left unlocked (the nightly run never locks a sandbox payroll) are frozen
 * before it by the freeze itself. Null when the calendar has no open pay date left.
 */
export function nextSandboxPayDate(calendar: readonly SandboxCalendarEntry[], today: string): string | null {
  const open = calendar
    .filter((entry) => isPayDateOpen({ payDate: entry.pay_date, lockDate: entry.lock_date, locked: entry.locked }, today))
    .map((entry) => entry.pay_date)
    .sort();
  return open[0] ?? null;
}
