import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { BankHolidayRegion } from '../../platform/db/tables.ts';
import { regionalHolidays } from './bank-holidays.ts';
import type { HolidayCalendar } from './working-days.ts';

/**
 * A region's non-working days: the library's bank holidays for any year and the days operators
 * added. The added days are few (a state funeral, a jubilee), so all of them are read.
 */
export async function loadHolidays(db: Executor, region: BankHolidayRegion): Promise<HolidayCalendar> {
  const rows = await db.selectFrom('bank_holidays').select('holiday_date').where('region', '=', region).execute();
  return regionalHolidays(
    region,
    rows.map((row) => row.holiday_date),
  );
}

export async function listAdHocBankHolidays(db: Executor, region: BankHolidayRegion, year?: number) {
  let query = db.selectFrom('bank_holidays').selectAll().where('region', '=', region);
  if (year !== undefined) query = query.where('holiday_date', '>=', `${year}-01-01`).where('holiday_date', '<=', `${year}-12-31`);
  return query.orderBy('holiday_date').execute();
}

/** Undefined when the region already has an ad-hoc day on that date. */
export async function insertAdHocBankHoliday(db: Executor, holiday: { region: BankHolidayRegion; holiday_date: string; name: string; added_by: string }) {
  return db
    .insertInto('bank_holidays')
    .values(holiday)
    .onConflict((oc) => oc.columns(['region', 'holiday_date']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function deleteAdHocBankHoliday(db: Executor, region: BankHolidayRegion, date: string) {
  return db.deleteFrom('bank_holidays').where('region', '=', region).where('holiday_date', '=', date).returningAll().executeTakeFirst();
}

/** Whose payrolls' lock dates a change affects: a region's (its bank holidays) or a provider's (its lead time). */
export type LockDateScope = { region: BankHolidayRegion } | { payrollProviderId: string } | { payrollId: string };

/**
 * The pay dates of the scope's payrolls the nightly run has not locked yet, with the lead time of
 * their provider and the payroll's bank-holiday region, held (FOR UPDATE) so a lock cannot start
 * on a pay date whose lock date is being recomputed.
 */
export async function listUnlockedPayDates(db: Executor, scope: LockDateScope) {
  const query = db
    .selectFrom('pay_dates')
    .innerJoin('payrolls', 'payrolls.id', 'pay_dates.payroll_id')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select([
      'pay_dates.payroll_id',
      'pay_dates.pay_date',
      'pay_dates.payroll_cutoff_date',
      'pay_dates.lock_date',
      'payroll_providers.lead_time_working_days',
      'payrolls.bank_holiday_region',
    ]);
  return (
    'region' in scope
      ? query.where('payrolls.bank_holiday_region', '=', scope.region)
      : 'payrollId' in scope
        ? query.where('payrolls.id', '=', scope.payrollId)
        : query.where('payrolls.payroll_provider_id', '=', scope.payrollProviderId)
  )
    .where('pay_dates.locked_at', 'is', null)
    .orderBy('pay_dates.payroll_id')
    .orderBy('pay_dates.pay_date')
    .forUpdate('pay_dates')
    .execute();
}

/** Sets new lock dates; a pay date locked meanwhile keeps the one it was locked with. */
export async function setLockDates(db: Executor, changes: ReadonlyArray<{ payroll_id: string; pay_date: string; lock_date: string }>): Promise<number> {
  if (changes.length === 0) return 0;
  const result = await sql`
    update pay_dates p
    set lock_date = c.lock_date, updated_at = now()
    from unnest(${changes.map((c) => c.payroll_id)}::uuid[], ${changes.map((c) => c.pay_date)}::date[], ${changes.map((c) => c.lock_date)}::date[])
      as c(payroll_id, pay_date, lock_date)
    where p.payroll_id = c.payroll_id and p.pay_date = c.pay_date and p.locked_at is null
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
