import type { Executor } from '../db/connection.ts';
import { findLeadTimeForPayroll, loadHolidays, upsertPayDates } from './calendar-repository.ts';
import { lockDate } from './lock-date.ts';

export interface ProviderPayDate {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
}

/** Stores a provider's calendar with each pay date's lock date computed from its lead time. */
export async function savePayCalendar(db: Executor, payrollId: string, payDates: readonly ProviderPayDate[]): Promise<void> {
  const [holidays, leadTime] = await Promise.all([loadHolidays(db), findLeadTimeForPayroll(db, payrollId)]);
  if (leadTime === undefined) throw new Error(`payroll ${payrollId} does not exist`);
  await upsertPayDates(
    db,
    payrollId,
    payDates.map((d) => ({ ...d, lock_date: lockDate(d.payroll_cutoff_date, leadTime, holidays) })),
  );
}
