import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { WriteAlongside } from '../../platform/db/write-alongside.ts';
import type { MandateStatus, PaymentStatus } from '../../platform/db/tables.ts';
import { insertPaymentEventsSql } from './payment-event-repository.ts';
import { type PagingQuery } from '../../platform/shared/paging.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { PaymentRow } from './payment-resource.ts';
import { CANCELLABLE_PAYMENT_STATUSES } from './payment-transitions.ts';

/**
 * The mandate a new payment request hangs on, with its payroll's pay dates after `today` (a pay
 * date on or before today is locked already; the target rule decides about the rest), in one
 * round trip.
 *
 * The mandate row is locked FOR NO KEY UPDATE until the transaction ends: a concurrent revocation
 * waits for it (or this one sees the revocation), so a revoked mandate can never gain a pending
 * payment its revocation missed; and requests on the same mandate are written one after the other,
 * so the insert below (a later statement, with a snapshot taken once the lock is held) sees every
 * pending amount the per-pay-date limit must count. Inserting payment requests takes only a
 * key-share lock on the mandate, which this lock does not block.
 * Prepared once per connection: every POST /payments and /schedules runs it.
 */
export async function findMandateWithOpenPayDates(db: Executor, billerClientId: string, mandateId: string, today: string) {
  const { rows } = await sql<{
    id: string;
    status: MandateStatus;
    currency: string;
    payroll_id: string;
    employee_id: string;
    pay_dates: Array<{ pay_date: string; lock_date: string; locked: boolean }>;
  }>`
    /* prepared: find_mandate_with_open_pay_dates */
    select m.id, m.status, m.currency, m.payroll_id, m.employee_id,
           coalesce((
             select json_agg(json_build_object('pay_date', d.pay_date, 'lock_date', d.lock_date, 'locked', d.locked_at is not null)
                             order by d.pay_date)
             from pay_dates d
             where d.payroll_id = m.payroll_id and d.pay_date > ${today}::date
           ), '[]') as pay_dates
    from mandates m
    where m.id = ${mandateId}::uuid and m.biller_client_id = ${billerClientId}::uuid
    for no key update of m
  `.execute(db);
  return rows[0];
}

/** What pending payment requests of a mandate already ask on one pay date: exact decimal text. */
export interface PendingOnPayDate {
  pay_date: string;
  /** Sum of amount - collected_amount; text, since amounts stored before the limits may sum past 2^53. */
  pending: string;
}

/**
 * New payment requests of one mandate and their payment_request.created events (stored narrow, see
 * insertPaymentEventsSql) in one statement, prepared once per connection: the write of POST /payments
 * and POST /schedules. The rows come complete (ids, initial
 * state, timestamps; see newPaymentRow) and are stored as given. Returns what the mandate's pending
 * requests already asked on the new rows' pay dates before them (the statement cannot see its own
 * inserts), read with this statement's snapshot, so after the mandate lock of
 * findMandateWithOpenPayDates was granted.
 */
export async function insertPaymentRequestsWithEvents(
  db: Executor,
  rows: readonly PaymentRow[],
  /** Committed by this statement too, or not at all (POST /payments' idempotent response). */
  alongside?: WriteAlongside,
): Promise<PendingOnPayDate[]> {
  if (rows.length === 0) return [];
  const mandateId = rows[0]!.mandate_id;
  if (rows.some((row) => row.mandate_id !== mandateId)) throw new Error('payment requests are written one mandate at a time');
  const payDates = [...new Set(rows.map((row) => row.target_pay_date))];
  // The variant with a write alongside is its own prepared statement: its text differs.
  const head = alongside
    ? sql`/* prepared: insert_payment_requests_with_events_alongside */ with alongside as (${alongside}),`
    : sql`/* prepared: insert_payment_requests_with_events */ with`;
  const result = await sql<PendingOnPayDate>`
    ${head} written as (
      insert into payment_requests (
        id, biller_client_id, mandate_id, schedule_id, instalment_number, payroll_id, employee_id, status, currency,
        amount, collected_amount, paid_out_amount, attempts, due_date, allow_post_due_date_deduction, target_pay_date,
        metadata, version, created_at, updated_at, cancelled_at)
      select r.id, r.biller_client_id, r.mandate_id, r.schedule_id, r.instalment_number, r.payroll_id, r.employee_id, r.status,
             r.currency, r.amount, r.collected_amount, r.paid_out_amount, r.attempts, r.due_date, r.allow_post_due_date_deduction,
             r.target_pay_date, r.metadata, r.version, r.created_at, r.updated_at, r.cancelled_at
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(
        id uuid, biller_client_id uuid, mandate_id uuid, schedule_id uuid, instalment_number integer, payroll_id uuid,
        employee_id uuid, status text, currency text, amount bigint, collected_amount bigint, paid_out_amount bigint,
        attempts integer, due_date date, allow_post_due_date_deduction boolean, target_pay_date date, metadata jsonb,
        version integer, created_at timestamptz, updated_at timestamptz, cancelled_at timestamptz)
      returning *
    ),
    written_events as (${insertPaymentEventsSql('payment_request.created', 'written')})
    -- Through the mandate's index: a mandate has few requests, and no index of payment_requests reads the status.
    select to_char(p.target_pay_date, 'YYYY-MM-DD') as pay_date, sum(p.amount - p.collected_amount)::text as pending
    from payment_requests p
    where p.mandate_id = ${mandateId}::uuid and p.status = 'pending' and p.target_pay_date = any(${payDates}::date[])
    group by p.target_pay_date
  `.execute(db);
  return result.rows;
}

export async function findPayment(db: Executor, billerClientId: string, paymentId: string) {
  return db.selectFrom('payment_requests').selectAll().where('id', '=', paymentId).where('biller_client_id', '=', billerClientId).executeTakeFirst();
}

/** Row-locks the request so a cancel and the nightly lock cannot both move it. */
export async function findPaymentForUpdate(db: Executor, billerClientId: string, paymentId: string) {
  return db.selectFrom('payment_requests').selectAll().where('id', '=', paymentId).where('biller_client_id', '=', billerClientId).forUpdate().executeTakeFirst();
}

/** What cancelling a pending payment request writes, one request or a schedule's worth. */
const cancellation = {
  status: 'cancelled' as const,
  version: sql<number>`version + 1`,
  updated_at: sql<Date>`now()`,
  cancelled_at: sql<Date>`now()`,
};

export async function markPaymentCancelled(db: Executor, paymentId: string) {
  return db
    .updateTable('payment_requests')
    .set(cancellation)
    .where('id', '=', paymentId)
    .where('status', 'in', CANCELLABLE_PAYMENT_STATUSES)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Set-based: every still-pending request of a schedule. The WHERE is re-checked after a row lock
 * wait, so a request the nightly lock instructs meanwhile is left alone.
 */
export async function cancelPendingPaymentsOfSchedule(db: Executor, scheduleId: string) {
  return db
    .updateTable('payment_requests')
    .set(cancellation)
    .where('schedule_id', '=', scheduleId)
    .where('status', 'in', CANCELLABLE_PAYMENT_STATUSES)
    .returningAll()
    .execute();
}

export interface PaymentFilters {
  status?: PaymentStatus | undefined;
  mandateId?: string | undefined;
  targetPayDate?: string | undefined;
  scheduleId?: string | undefined;
}

export async function listPayments(db: Executor, billerClientId: string, filters: PaymentFilters, paging: PagingQuery) {
  let query = db.selectFrom('payment_requests').selectAll().where('biller_client_id', '=', billerClientId);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.mandateId) query = query.where('mandate_id', '=', filters.mandateId);
  if (filters.targetPayDate) query = query.where('target_pay_date', '=', filters.targetPayDate);
  if (filters.scheduleId) query = query.where('schedule_id', '=', filters.scheduleId);
  return applyPaging(query, 'payment_requests', paging).execute();
}

/** A schedule's instalments, in instalment order, for any number of schedules at once. */
export async function listPaymentsOfSchedules(db: Executor, scheduleIds: readonly string[]) {
  if (scheduleIds.length === 0) return [];
  return db.selectFrom('payment_requests').selectAll().where('schedule_id', 'in', scheduleIds).orderBy('schedule_id').orderBy('instalment_number').execute();
}
