import { sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Executor } from '../db/connection.ts';
import type { PaymentStatus } from '../db/tables.ts';
import { applyPaging, type PagingQuery } from '../shared/paging.ts';

export interface NewPaymentRequest {
  billerClientId: string;
  mandateId: string;
  scheduleId: string | null;
  instalmentNumber: number | null;
  payrollId: string;
  employeeId: string;
  currency: string;
  amount: number;
  dueDate: string | null;
  allowPostDueDateDeduction: boolean;
  targetPayDate: string;
  metadata: unknown;
}

/**
 * The mandate a new payment request hangs on, with its payroll's pay dates after `today` (a pay
 * date on or before today is locked already; the target rule decides about the rest), in one
 * round trip. FOR SHARE makes a concurrent revocation wait for this transaction, or this one see
 * the revocation, so a revoked mandate can never gain a pending payment its revocation missed.
 */
export async function findMandateWithOpenPayDates(db: Executor, billerClientId: string, mandateId: string, today: string) {
  return db
    .selectFrom('mandates')
    .select((eb) => [
      'mandates.id',
      'mandates.status',
      'mandates.currency',
      'mandates.payroll_id',
      'mandates.employee_id',
      jsonArrayFrom(
        eb
          .selectFrom('pay_dates')
          .select(['pay_dates.pay_date', 'pay_dates.lock_date', sql<boolean>`pay_dates.locked_at is not null`.as('locked')])
          .whereRef('pay_dates.payroll_id', '=', 'mandates.payroll_id')
          .where('pay_dates.pay_date', '>', today)
          .orderBy('pay_dates.pay_date'),
      ).as('pay_dates'),
    ])
    .where('mandates.id', '=', mandateId)
    .where('mandates.biller_client_id', '=', billerClientId)
    .forShare()
    .executeTakeFirst();
}

/** One statement for any number of requests (a schedule's instalments arrive together). */
export async function insertPaymentRequests(db: Executor, requests: readonly NewPaymentRequest[]) {
  if (requests.length === 0) return [];
  return db
    .insertInto('payment_requests')
    .values(
      requests.map((r) => ({
        biller_client_id: r.billerClientId,
        mandate_id: r.mandateId,
        schedule_id: r.scheduleId,
        instalment_number: r.instalmentNumber,
        payroll_id: r.payrollId,
        employee_id: r.employeeId,
        currency: r.currency,
        amount: r.amount,
        due_date: r.dueDate,
        allow_post_due_date_deduction: r.allowPostDueDateDeduction,
        target_pay_date: r.targetPayDate,
        metadata: r.metadata === null || r.metadata === undefined ? null : JSON.stringify(r.metadata),
      })),
    )
    .returningAll()
    .execute();
}

export async function findPayment(db: Executor, billerClientId: string, paymentId: string) {
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('id', '=', paymentId)
    .where('biller_client_id', '=', billerClientId)
    .executeTakeFirst();
}

/** Row-locks the request so a cancel and the nightly lock cannot both move it. */
export async function findPaymentForUpdate(db: Executor, billerClientId: string, paymentId: string) {
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('id', '=', paymentId)
    .where('biller_client_id', '=', billerClientId)
    .forUpdate()
    .executeTakeFirst();
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
    .where('status', '=', 'pending')
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
  return db
    .selectFrom('payment_requests')
    .selectAll()
    .where('schedule_id', 'in', scheduleIds)
    .orderBy('schedule_id')
    .orderBy('instalment_number')
    .execute();
}
