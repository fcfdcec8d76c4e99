import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

export interface PayDateToStore {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
  lock_date: string;
}

/** What a payroll's calendar is computed with: its provider's lead time and its bank-holiday region. */
export async function findPayrollCalendarSettings(db: Executor, payrollId: string) {
  return db
    .selectFrom('payrolls')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select([
      'payrolls.id as payroll_id',
      'payrolls.payment_run_frequency',
      'payrolls.bank_holiday_region',
      'payrolls.go_live_date',
      'payroll_providers.lead_time_working_days',
    ])
    .where('payrolls.id', '=', payrollId)
    .executeTakeFirst();
}

/**
 * The connection details of a payroll's provider, for an adapter (see AdapterFactory). A sandbox
 * provider is simulated and never called: none for its payrolls, whatever its row holds.
 */
export async function findPayrollProviderConnection(db: Executor, payrollId: string) {
  return db
    .selectFrom('payrolls')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select([
      'payroll_providers.id',
      'payroll_providers.api_base_url',
      'payroll_providers.api_token_url',
      'payroll_providers.api_client_id',
      'payroll_providers.api_client_secret',
    ])
    .where('payrolls.id', '=', payrollId)
    .where('payroll_providers.sandbox', '=', false)
    .executeTakeFirst();
}

/**
 * Upserts a payroll's calendar. A pay date that is already locked keeps its locked cut-off and
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

/**
 * Every pay date of a payroll, held (FOR UPDATE) while a new calendar replaces them: the nightly
 * lock waits, so a pay date cannot be locked between the check that it is not and the change.
 */
export async function listPayDatesForUpdate(db: Executor, payrollId: string) {
  return db
    .selectFrom('pay_dates')
    .select(['pay_date', 'payroll_cutoff_date', 'pay_period', 'lock_date', 'locked_at', 'first_locked_at'])
    .where('payroll_id', '=', payrollId)
    .orderBy('pay_date')
    .forUpdate()
    .execute();
}

/**
 * Of the given pay dates, those something refers to: how many payment requests target each, and
 * whether anything else of the cycle (a snapshot, an instruction file, a confirmation, a record, a re-run...) names it.
 */
export async function findPayDatesInUse(db: Executor, payrollId: string, payDates: readonly string[]) {
  if (payDates.length === 0) return [];
  const result = await sql<{ pay_date: string; payment_requests: number; other_uses: boolean }>`
    select d.pay_date::text as pay_date,
      (select count(*)::int from payment_requests r where r.payroll_id = ${payrollId}::uuid and r.target_pay_date = d.pay_date) as payment_requests,
      exists (select 1 from deduction_snapshots x where x.payroll_id = ${payrollId}::uuid and x.pay_date = d.pay_date)
        or exists (select 1 from reruns x where x.payroll_id = ${payrollId}::uuid and x.pay_date = d.pay_date)
        or exists (select 1 from instruction_files x where x.payroll_id = ${payrollId}::uuid and x.pay_date = d.pay_date)
        or exists (select 1 from confirmations x where x.payroll_id = ${payrollId}::uuid and x.pay_date = d.pay_date)
        or exists (select 1 from deduction_records x where x.payroll_id = ${payrollId}::uuid and x.pay_date = d.pay_date)
        or exists (select 1 from collection_attempts x where x.payroll_id = ${payrollId}::uuid and x.pay_date = d.pay_date)
        or exists (select 1 from reconciliation_exceptions x where x.payroll_id = ${payrollId}::uuid and x.pay_date = d.pay_date)
        as other_uses
    from unnest(${payDates}::date[]) as d(pay_date)
    order by d.pay_date
  `.execute(db);
  return result.rows.filter((row) => row.payment_requests > 0 || row.other_uses);
}

/**
 * Applies a planned calendar replacement to unlocked pay dates: removals first (their pay periods
 * may pass to new pay dates), then changes, then additions. A changed pay period goes through a
 * placeholder ('0-n': no tax period is 0) because the unique (payroll, pay period) is checked row by
 * row, and two pay dates may swap periods. Locked pay dates are never written.
 */
export async function replaceUnlockedPayDates(
  db: Executor,
  payrollId: string,
  plan: { remove: readonly string[]; change: readonly PayDateToStore[]; add: readonly PayDateToStore[] },
): Promise<void> {
  if (plan.remove.length > 0) {
    await db
      .deleteFrom('pay_dates')
      .where('payroll_id', '=', payrollId)
      .where('pay_date', 'in', [...plan.remove])
      .where('locked_at', 'is', null)
      .execute();
  }
  if (plan.change.length > 0) {
    const dates = plan.change.map((d) => d.pay_date);
    await sql`
      update pay_dates p set pay_period = '0-' || c.n
      from unnest(${dates}::date[]) with ordinality as c(pay_date, n)
      where p.payroll_id = ${payrollId}::uuid and p.pay_date = c.pay_date and p.locked_at is null
    `.execute(db);
    await sql`
      update pay_dates p
      set payroll_cutoff_date = c.payroll_cutoff_date, pay_period = c.pay_period, lock_date = c.lock_date, updated_at = now()
      from unnest(${dates}::date[], ${plan.change.map((d) => d.payroll_cutoff_date)}::date[],
                  ${plan.change.map((d) => d.pay_period)}::text[], ${plan.change.map((d) => d.lock_date)}::date[])
        as c(pay_date, payroll_cutoff_date, pay_period, lock_date)
      where p.payroll_id = ${payrollId}::uuid and p.pay_date = c.pay_date and p.locked_at is null
    `.execute(db);
  }
  if (plan.add.length > 0) {
    await db
      .insertInto('pay_dates')
      .values(plan.add.map((d) => ({ payroll_id: payrollId, ...d })))
      .execute();
  }
}

export async function listPayDates(db: Executor, payrollId: string) {
  return db
    .selectFrom('pay_dates')
    .select(['pay_date', 'payroll_cutoff_date', 'pay_period', 'lock_date', 'locked_at', 'first_locked_at'])
    .where('payroll_id', '=', payrollId)
    .orderBy('pay_date')
    .execute();
}

/** Payrolls whose live provider has an API, with what an adapter needs to reach it; sandbox providers are never called. */
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
    .where('payroll_providers.sandbox', '=', false)
    .orderBy('payrolls.id')
    .execute();
}

export async function updateGoLiveDate(db: Executor, payrollId: string, goLiveDate: string): Promise<void> {
  await db.updateTable('payrolls').set({ go_live_date: goLiveDate }).where('id', '=', payrollId).execute();
}

/** Sets a payroll's go-live date unless it has one (a calendar written later never moves it). */
export async function setGoLiveDateIfUnset(db: Executor, payrollId: string, goLiveDate: string): Promise<string> {
  const row = await db
    .updateTable('payrolls')
    .set({ go_live_date: sql<string>`coalesce(go_live_date, ${goLiveDate}::date)` })
    .where('id', '=', payrollId)
    .returning('go_live_date')
    .executeTakeFirstOrThrow();
  return row.go_live_date!;
}

export async function markCalendarSynced(db: Executor, payrollId: string): Promise<void> {
  await db.updateTable('payrolls').set({ calendar_synced_at: new Date() }).where('id', '=', payrollId).execute();
}
