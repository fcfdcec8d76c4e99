import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

export async function findPayrollForProvider(db: Executor, payrollId: string) {
  return db.selectFrom('payrolls').select(['id', 'payroll_provider_id', 'currency', 'external_id', 'name']).where('id', '=', payrollId).executeTakeFirst();
}

export interface SnapshotHeader {
  id: string;
  payroll_id: string;
  pay_date: string;
  pay_period: string;
  status: string;
  currency: string;
}

export async function findPayDate(db: Executor, payrollId: string, payDate: string) {
  return db.selectFrom('pay_dates').selectAll().where('payroll_id', '=', payrollId).where('pay_date', '=', payDate).executeTakeFirst();
}

// ---- The current snapshot of a pay date ----

/** The current snapshot of a pay date: its newest version (a re-run supersedes older ones). */
export async function findCurrentSnapshot(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_snapshots')
    .selectAll()
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .where('status', '!=', 'superseded')
    .executeTakeFirst();
}

/** The current snapshot of a pay date, row-locked (for update) until the transaction ends. */
export async function findCurrentSnapshotForUpdate(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_snapshots')
    .select(['id', 'status', 'snapshot_version'])
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .where('status', '!=', 'superseded')
    .forUpdate()
    .executeTakeFirst();
}

export async function listSnapshotLines(db: Executor, snapshotId: string) {
  return db
    .selectFrom('deduction_lines')
    .select(['employee_id', 'payroll_reference', 'requested_amount', 'currency', 'payment_reference'])
    .where('snapshot_id', '=', snapshotId)
    .orderBy('payroll_reference')
    .execute();
}

export async function listRequestedPayments(db: Executor, snapshotId: string) {
  return db.selectFrom('requested_payments').selectAll().where('snapshot_id', '=', snapshotId).orderBy('payment_reference').execute();
}

// ---- Row locks on a payroll's pay dates (its calendar entries) ----
//
// Every job and request that must not race another one on a pay date takes its row here, each in
// the mode it needs:
//  - a lock (the nightly lock job, a re-run) and a reconciliation take it for update, so they run
//    one after another and a re-run cannot swap the snapshot while a reconciliation reads it; the
//    lock takes the payroll row first, and with it every earlier pay date it locks too;
//  - a confirmation takes it for no key update: it waits for pushes in flight and for a lock;
//  - an employee push takes it for share: pushes do not wait for each other, only for the above.

export interface PayDateToLock {
  payroll_id: string;
  pay_date: string;
  pay_period: string;
  lock_date: string;
  locked_at: Date | null;
  currency: string;
  payroll_external_id: string;
  payroll_name: string;
  employer_external_id: string;
  employer_name: string;
  /** Set when the payroll's provider takes employee pushes through its API (never a sandbox provider, which is not called). */
  api_base_url: string | null;
  /** The payroll's first pay date to collect; null while it is not live. */
  go_live_date: string | null;
  /** Sandbox payrolls are locked by their simulation, whatever their go-live date. */
  sandbox: boolean;
}

/**
 * Row-locks the payroll, then the pay date and every earlier pay date of it that is due to lock by
 * then and still open, from the payroll's go-live date on (nothing before it is collected), and
 * returns those pay dates in date order (the requested one last).
 *
 * The payroll row is taken first by every lock and re-run of the payroll, so they run one after
 * another and two pay dates can never both claim the same pending payment request; the pay-date
 * rows keep a calendar sync from rewriting a pay date while it locks. An earlier pay date that a
 * concurrent job locked meanwhile drops out: the lock rechecks `locked_at` on the newest row version.
 */
export async function rowLockPayDatesToLock(db: Executor, payrollId: string, payDate: string): Promise<PayDateToLock[]> {
  const result = await rowLockPayDatesToLockStatement(payrollId, payDate).execute(db);
  return result.rows;
}

/** rowLockPayDatesToLock's statement. */
export function rowLockPayDatesToLockStatement(payrollId: string, payDate: string) {
  return sql<PayDateToLock>`
    /* prepared: row_lock_pay_dates_to_lock */
    select pd.payroll_id, pd.pay_date, pd.pay_period, pd.lock_date, pd.locked_at, p.currency,
           p.external_id as payroll_external_id, p.name as payroll_name,
           em.external_id as employer_external_id, em.name as employer_name,
           case when pp.sandbox then null else pp.api_base_url end as api_base_url,
           p.go_live_date, pp.sandbox
    from payrolls p
    join pay_dates pd on pd.payroll_id = p.id
    join payroll_providers pp on pp.id = p.payroll_provider_id
    join employers em on em.id = p.employer_id
    where p.id = ${payrollId} and pd.pay_date <= ${payDate}::date
      and (pd.pay_date = ${payDate}::date
           or (pd.locked_at is null
               and (pp.sandbox or pd.pay_date >= p.go_live_date)
               and pd.lock_date <= (select lock_date from pay_dates where payroll_id = ${payrollId} and pay_date = ${payDate}::date)))
    order by pd.pay_date
    for update of p, pd
  `;
}

export interface PayDateForReconciliation {
  pay_period: string;
  currency: string;
}

/**
 * Row-locks the pay date (for update), as a lock does: a re-run cannot swap the snapshot while a
 * reconciliation reads it, and two reconciliations of one pay date run one after the other.
 */
export async function rowLockPayDateForReconciliation(db: Executor, payrollId: string, payDate: string) {
  const result = await sql<PayDateForReconciliation>`
    select pd.pay_period, p.currency
    from pay_dates pd join payrolls p on p.id = pd.payroll_id
    where pd.payroll_id = ${payrollId} and pd.pay_date = ${payDate}
    for update of pd
  `.execute(db);
  return result.rows[0];
}

/**
 * Takes the pay date exclusively for a confirmation's records: waits for pushes in flight (they hold
 * it shared) and for a lock or re-run of the pay date (they hold it for update), so the versions
 * computed next are not raced and the snapshot cannot be superseded under the confirmation. Returns
 * the snapshot as it is once the pay date is taken, in the same round trip.
 */
export async function rowLockPayDateForConfirmation(db: Executor, payrollId: string, payDate: string, snapshotId: string): Promise<SnapshotHeader | undefined> {
  // The pay date is taken first (the CTE runs before the row is returned); the snapshot's share lock
  // then makes PostgreSQL return its newest committed version, not the one this statement started
  // with: a re-run that superseded it while we waited for the pay date is seen.
  const result = await sql<SnapshotHeader>`
    with pay_date as (
      select 1 from pay_dates
      where payroll_id = ${payrollId} and pay_date = ${payDate}
      for no key update
    )
    select s.id, s.payroll_id, s.pay_date, s.pay_period, s.status, s.currency
    from deduction_snapshots s
    where s.id = ${snapshotId} and exists (select 1 from pay_date)
    for share of s
  `.execute(db);
  return result.rows[0];
}

/**
 * The calendar entry of a pay period, share-locked for an employee push: concurrent pushes do not
 * wait for each other, but a confirmation (which takes the row exclusively before computing next
 * versions) waits for pushes in flight, and pushes wait for it, so the two never race for one
 * version number.
 */
export async function rowLockPayDateForPush(db: Executor, payrollId: string, payPeriod: string) {
  const result = await sql<{ pay_date: string }>`
    select pay_date from pay_dates
    where payroll_id = ${payrollId} and pay_period = ${payPeriod}
    for share
  `.execute(db);
  return result.rows[0];
}
