import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';

export interface PayDateToStore {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
  lock_date: string;
}

export async function loadHolidays(db: Executor): Promise<Set<string>> {
  const rows = await db.selectFrom('bank_holidays').select('holiday_date').execute();
  return new Set(rows.map((row) => row.holiday_date));
}

export async function insertHolidays(db: Executor, holidays: ReadonlyArray<{ date: string; name: string }>): Promise<void> {
  if (holidays.length === 0) return;
  await db
    .insertInto('bank_holidays')
    .values(holidays.map((h) => ({ region: 'england-and-wales' as const, holiday_date: h.date, name: h.name, added_by: 'demo' })))
    .onConflict((oc) => oc.columns(['region', 'holiday_date']).doNothing())
    .execute();
}

export async function findLeadTimeForPayroll(db: Executor, payrollId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('payrolls')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select('payroll_providers.lead_time_working_days')
    .where('payrolls.id', '=', payrollId)
    .executeTakeFirst();
  return row?.lead_time_working_days;
}

/**
 * Upserts a payroll's calendar. A pay date that is already locked keeps its frozen cut-off and
 * period: the provider may not move a pay date after we have instructed it.
 */
export async function upsertPayDates(db: Executor, payrollId: string, payDates: readonly PayDateToStore[]): Promise<void> {
  if (payDates.length === 0) return;
  await sql`
    insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
    select ${payrollId}::uuid, d.pay_date, d.payroll_cutoff_date, d.pay_period, d.lock_date
    from unnest(${payDates.map((d) => d.pay_date)}::date[], ${payDates.map((d) => d.payroll_cutoff_date)}::date[],
                ${payDates.map((d) => d.pay_period)}::text[], ${payDates.map((d) => d.lock_date)}::date[])
      as d(pay_date, payroll_cutoff_date, pay_period, lock_date)
    on conflict (payroll_id, pay_date) do update
      set payroll_cutoff_date = excluded.payroll_cutoff_date,
          pay_period = excluded.pay_period,
          lock_date = excluded.lock_date,
          updated_at = now()
      where pay_dates.locked_at is null
  `.execute(db);
}

export async function listPayDates(db: Executor, payrollId: string) {
  return db
    .selectFrom('pay_dates')
    .select(['pay_date', 'payroll_cutoff_date', 'pay_period', 'lock_date', 'locked_at'])
    .where('payroll_id', '=', payrollId)
    .orderBy('pay_date')
    .execute();
}

/** Payrolls whose provider has an API, with what an adapter needs to reach it. */
export async function listPayrollsWithProviderApi(db: Executor) {
  return db
    .selectFrom('payrolls')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select([
      'payrolls.id as payroll_id',
      'payroll_providers.id',
      'payroll_providers.api_base_url',
      'payroll_providers.api_token_url',
      'payroll_providers.api_client_id',
      'payroll_providers.api_client_secret',
    ])
    .where('payroll_providers.api_base_url', 'is not', null)
    .orderBy('payrolls.id')
    .execute();
}

export async function markCalendarSynced(db: Executor, payrollId: string): Promise<void> {
  await db.updateTable('payrolls').set({ calendar_synced_at: new Date() }).where('id', '=', payrollId).execute();
}
