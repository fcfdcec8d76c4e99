import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { insertPaymentUpdatedEvents } from '../../collections/payments/payment-event-repository.ts';
import { PAYMENT_REQUEST_LIFECYCLE } from '../../collections/payments/payment-transitions.ts';
import { fromStatusesSql } from '../../platform/db/status-transitions-sql.ts';
import { SNAPSHOT_LIFECYCLE } from './snapshot-transitions.ts';
import { lockDeductionDataStatement, type LockInput } from './pay-date-lock-statement-repository.ts';

export type { LockInput };

export async function payrollExists(db: Executor, payrollId: string): Promise<boolean> {
  return (await db.selectFrom('payrolls').select('id').where('id', '=', payrollId).executeTakeFirst()) !== undefined;
}

export interface LockContext {
  current: { id: string; snapshot_version: number; employee_count: number; total_amount: number; currency: string } | null;
  collectionAccount: { account_number: string; sort_code: string; account_holder_name: string } | null;
}

interface LockContextRow {
  id: string | null;
  snapshot_version: number | null;
  employee_count: number | null;
  total_amount: number | null;
  currency: string | null;
  account_number: string | null;
  sort_code: string | null;
  account_holder_name: string | null;
}

/** findLockContext's statement: one row, whatever exists (each half null when missing). */
export function findLockContextStatement(payrollId: string, payDate: string, currency: string) {
  return sql<LockContextRow>`
    /* prepared: find_lock_context */
    select s.id, s.snapshot_version, s.employee_count, s.total_amount, s.currency,
           a.account_number, a.sort_code, a.account_holder_name
    from (values (1)) as one (n)
    left join deduction_snapshots s on s.payroll_id = ${payrollId} and s.pay_date = ${payDate}::date and s.status <> 'superseded'
    left join collection_accounts a on a.currency = ${currency} and a.active
  `;
}

/** What a lock needs to know besides the pay date, in one round trip: the current snapshot and where payroll pays the money. */
export async function findLockContext(db: Executor, payrollId: string, payDate: string, currency: string): Promise<LockContext> {
  const result = await findLockContextStatement(payrollId, payDate, currency).execute(db);
  const row = result.rows[0]!;
  return {
    current:
      row.id === null
        ? null
        : { id: row.id, snapshot_version: row.snapshot_version!, employee_count: row.employee_count!, total_amount: row.total_amount!, currency: row.currency! },
    collectionAccount: row.account_number === null ? null : { account_number: row.account_number, sort_code: row.sort_code!, account_holder_name: row.account_holder_name! },
  };
}

export interface LockedSnapshotHeader {
  snapshotVersion: number;
  totalAmount: number;
  employeeCount: number;
  /** How many payment requests this lock moved to `instructed` (each with its event). */
  paymentsInstructed: number;
  /**
   * Pending requests refused for an amount over the per-request limit: moved to `failed` (or
   * `partially_collected` when an earlier attempt collected some), each with its event.
   */
  paymentsRefused: number;
  /** Pending requests left pending because the snapshot total would otherwise pass its largest. */
  paymentsHeldBack: number;
  /**
   * On a re-run, requests the superseded snapshot had instructed (and this pay date has not
   * reconciled) that the new snapshot no longer asks for: moved back to `pending`, each with its event.
   */
  paymentsReleased: number;
  /** Of those released, the ones whose mandate has ended: cancelReleasedPayments cancels them next. */
  releasedOfEndedMandates: string[];
  /** Schedules errored for an instalment refused (instalment_refused): their schedule.updated events come next. */
  erroredScheduleIds: string[];
}

/**
 * Locks one payroll pay date in a single statement: chooses the payment requests due on or
 * before it (new pending ones, plus on a re-run those the superseded snapshot had instructed and
 * those already reconciled, which keep what they were asked), refuses pending ones whose amount is
 * over the per-request limit, applies mandate limitations (the mandate's own and the service's
 * per-pay-date one) in due-date order with window sums, keeps the snapshot total within what the
 * data response carries exactly, aggregates per employee, writes
 * the snapshot (the next version), its lines, the line-to-payment links and the requested payment,
 * moves newly included requests to `instructed` and refused ones to `failed` (erroring their
 * schedules), and on a re-run moves back to `pending` the instructed requests the new version no
 * longer asks for (released), all with their payment_request.updated events, and marks the pay
 * date locked.
 *
 * One request's bad amount never fails the statement: every sum is numeric until it is known to
 * fit a bigint, and no total it returns or stores can pass `maxSnapshotTotal`.
 *
 * The statement step by step: lockDeductionDataStatement (pay-date-lock-statement-repository.ts); as
 * sent to PostgreSQL: src/cycle/snapshots/sql/lock_deduction_data.sql.
 */
export async function lockDeductionData(db: Executor, input: LockInput): Promise<LockedSnapshotHeader> {
  const result = await lockDeductionDataStatement(input).execute(db);
  const row = result.rows[0]!;
  return {
    snapshotVersion: row.snapshot_version,
    totalAmount: row.total_amount,
    employeeCount: row.employee_count,
    paymentsInstructed: row.payments_instructed,
    paymentsRefused: row.payments_refused,
    paymentsHeldBack: row.payments_held_back,
    paymentsReleased: row.payments_released,
    releasedOfEndedMandates: row.released_of_ended_mandates,
    erroredScheduleIds: row.errored_schedule_ids,
  };
}

/**
 * Cancels requests a re-run has just released to pending (lockDeductionData's releasedOfEndedMandates)
 * because their mandate has ended, as the mandate's ending cancelled its other pending requests: one
 * statement, each with its payment_request.updated event. Its own statement, after the lock: a row
 * cannot change twice in one, and each change (instructed -> pending -> cancelled) is its own version.
 */
export async function cancelReleasedPayments(db: Executor, paymentIds: readonly string[]): Promise<number> {
  if (paymentIds.length === 0) return 0;
  const result = await cancelReleasedPaymentsStatement(paymentIds).execute(db);
  return result.rows[0]!.cancelled;
}

/** cancelReleasedPayments' statement. */
export function cancelReleasedPaymentsStatement(paymentIds: readonly string[]) {
  return sql<{ cancelled: number }>`
    with cancelled as (
      update payment_requests pr
      set status = 'cancelled', cancelled_at = now(), version = pr.version + 1, updated_at = now()
      where pr.id = any(${[...paymentIds]}::uuid[])
        and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, 'cancelled', ['pending'])})
      returning pr.*
    ),
    events as (${insertPaymentUpdatedEvents('cancelled')})
    select count(*)::int as cancelled from cancelled
  `;
}

/** Retires the current snapshot first: only one snapshot per pay date may be current at a time. */
export async function supersedeSnapshot(db: Executor, snapshotId: string): Promise<void> {
  await db
    .updateTable('deduction_snapshots')
    .set({ status: 'superseded', superseded_at: new Date() })
    .where('id', '=', snapshotId)
    .where('status', 'in', SNAPSHOT_LIFECYCLE.fromStatuses('superseded'))
    .execute();
}

export async function linkSupersededSnapshot(db: Executor, snapshotId: string, supersededBy: string): Promise<void> {
  await db.updateTable('deduction_snapshots').set({ superseded_by: supersededBy }).where('id', '=', snapshotId).execute();
}
