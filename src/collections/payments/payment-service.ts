import type { Executor } from '../../platform/db/connection.ts';
import type { WriteAlongside } from '../../platform/db/write-alongside.ts';
import type { MandateStatus } from '../../platform/db/tables.ts';
import { recordEvents } from '../../platform/events/outbox.ts';
import { targetPayDate, type CalendarPayDate } from '../../directory/calendars/target-pay-date.ts';
import { ConflictError, InvalidError, NotFoundError, type FieldError } from '../../platform/shared/domain-errors.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';
import { pageOf } from '../../platform/shared/paging.ts';
import type { Metadata } from '../../platform/shared/schemas.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { mandatePayDateOverLimitError, paymentAmountOverLimitError, paymentAmountsOverLimit, payDatesOverMandateLimit, type AmountLimits } from './amount-limits.ts';
import {
  findMandateWithOpenPayDates,
  findPayment,
  findPaymentForUpdate,
  insertPaymentRequestsWithEvents,
  type PendingOnPayDate,
  listPayments,
  markPaymentCancelled,
  type PaymentFilters,
} from './payment-repository.ts';
import { toPaymentResource, type PaymentResource, type PaymentRow } from './payment-resource.ts';
import { canTransition } from './payment-transitions.ts';
import { isUuid } from '../../platform/shared/schemas.ts';

/** The salary-deduction interface: a payment request without a currency is in GBP. */
export const DEFAULT_CURRENCY = 'GBP';

/** A payment request may hang on a mandate that is live or about to be: anything else is over. */
const PAYABLE_MANDATE_STATUSES: readonly MandateStatus[] = ['active', 'pending_enablement'];

export interface PayableMandate {
  id: string;
  currency: string;
  payrollId: string;
  employeeId: string;
  payDates: CalendarPayDate[];
}

/**
 * The caller's mandate, fit to take payment requests, with its payroll's upcoming pay dates.
 * Another biller's mandate is simply not found: its existence is not ours to reveal.
 */
export async function loadPayableMandate(db: Executor, billerClientId: string, mandateId: string, today: string, pointer: string): Promise<PayableMandate> {
  const mandate = await findMandateWithOpenPayDates(db, billerClientId, mandateId, today);
  if (!mandate) throw new NotFoundError(`Mandate ${mandateId}`);
  if (!PAYABLE_MANDATE_STATUSES.includes(mandate.status)) {
    throw new InvalidError('mandate-not-active', `Mandate ${mandateId} is ${mandate.status}; payment requests need an active or pending_enablement mandate`, {
      errors: [{ pointer, detail: `mandate is ${mandate.status}` }],
      members: { mandate_status: mandate.status },
    });
  }
  return {
    id: mandate.id,
    currency: mandate.currency,
    payrollId: mandate.payroll_id,
    employeeId: mandate.employee_id,
    payDates: mandate.pay_dates.map((p) => ({ payDate: p.pay_date, lockDate: p.lock_date, locked: p.locked })),
  };
}

export function assertMandateCurrency(currency: string, mandate: PayableMandate, pointer: string): void {
  if (currency !== mandate.currency) {
    throw new InvalidError('currency-mismatch', `The currency ${currency} differs from the mandate's currency ${mandate.currency}`, {
      errors: [{ pointer, detail: `must be ${mandate.currency}, the mandate's currency` }],
    });
  }
}

export type PaymentTimingRejection = {
  slug: 'due-date-in-past' | 'due-date-unreachable' | 'no-open-pay-date';
  detail: string;
  extensions: Record<string, unknown>;
};

export type PaymentTiming = { ok: true; targetPayDate: string } | { ok: false; rejection: PaymentTimingRejection };

/**
 * When a payment request will be deducted, or why it cannot be accepted (the salary-deduction
 * interface: an expected pay date after the due date is a rejection unless the request allows
 * a post-due deduction). A due date of today is not "past": it is simply unreachable, since no
 * pay date on or before today is still open.
 */
export function decidePaymentTiming(input: {
  payDates: readonly CalendarPayDate[];
  dueDate: string | null;
  allowPostDueDateDeduction: boolean;
  today: string;
}): PaymentTiming {
  const { dueDate, today } = input;
  if (dueDate !== null && dueDate < today) {
    return {
      ok: false,
      rejection: {
        slug: 'due-date-in-past',
        detail: `The due date ${dueDate} is in the past (today is ${today})`,
        extensions: { due_date: dueDate },
      },
    };
  }
  const result = targetPayDate(input);
  if (result.ok) return { ok: true, targetPayDate: result.payDate };
  if (result.reason === 'due_date_unreachable' && result.expectedPayDate !== null) {
    return {
      ok: false,
      rejection: {
        slug: 'due-date-unreachable',
        detail:
          `The earliest pay date this payment can be deducted on is ${result.expectedPayDate}, after the due date ${dueDate}; ` +
          'set allow_post_due_date_deduction to true to accept a deduction after the due date',
        extensions: { expected_pay_date: result.expectedPayDate, due_date: dueDate },
      },
    };
  }
  return {
    ok: false,
    rejection: {
      slug: 'no-open-pay-date',
      detail: "The mandate's payroll has no pay date still open for new payment requests",
      extensions: {},
    },
  };
}

export function timingRejected(rejection: PaymentTimingRejection, errors: FieldError[]): InvalidError {
  return new InvalidError(rejection.slug, rejection.detail, {
    errors,
    members: rejection.extensions,
  });
}

export interface PaymentRecord {
  mandate_id: string;
  amount: number;
  due_date: string | null;
  currency: string;
  metadata: Metadata | null;
  allow_post_due_date_deduction: boolean;
}

/** Refuses (422) any amount of a request body over MAX_PAYMENT_AMOUNT_MINOR; checked before any I/O. */
export function assertPaymentAmountsWithinLimit(amounts: ReadonlyArray<{ pointer: string; amount: number }>, limits: AmountLimits, currency: string): void {
  const over = paymentAmountsOverLimit(amounts, limits);
  if (over.length > 0) throw paymentAmountOverLimitError(over, limits, currency);
}

/**
 * Writes new payment requests of one mandate (with their events), then refuses (422) the body if the
 * mandate would ask more than MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR on a pay date, with what its
 * pending requests already asked there. The caller's transaction, which holds the mandate's row lock
 * (loadPayableMandate), rolls the write back with the refusal; writing first keeps the check and
 * the insert one statement, read after the lock was granted, so two requests at once cannot both
 * take the last of a pay date's room.
 */
export async function insertNewPaymentRequestsWithinLimit(
  trx: Executor,
  requests: readonly NewPaymentRequest[],
  /** Where in the request body each request's amount was given, for the field errors of a refusal. */
  amountPointers: readonly string[],
  limits: AmountLimits,
  alongside?: WritesAlongsideRows,
): Promise<PaymentRow[]> {
  if (requests.length === 0) return [];
  const { rows, pendingBefore } = await writeNewPaymentRequests(trx, requests, alongside);
  const mandateId = requests[0]!.mandateId;
  const alreadyRequested = new Map(pendingBefore.map((p) => [p.pay_date, BigInt(p.pending)]));
  const additions = requests.map((request, index) => ({ payDate: request.targetPayDate, amount: request.amount, pointer: amountPointers[index]! }));
  const over = payDatesOverMandateLimit(additions, alreadyRequested, limits);
  if (over.length > 0) throw mandatePayDateOverLimitError(mandateId, over, limits, requests[0]!.currency);
  return rows;
}

/**
 * POST /payments. Two statements in the caller's transaction (mandate with calendar; the insert
 * with its event): this path carries the API's write load. `storeResponse` turns the new payment
 * into a write that goes into the insert's statement (the idempotent response, see
 * EffectRoute.responseInWrite).
 */
export async function createPaymentRequest(
  trx: Executor,
  input: { billerClientId: string; record: PaymentRecord; today: string; limits: AmountLimits },
  storeResponse?: (payment: PaymentResource) => WriteAlongside,
): Promise<PaymentResource> {
  const { record, billerClientId, today, limits } = input;
  assertPaymentAmountsWithinLimit([{ pointer: '/payment_record/amount', amount: record.amount }], limits, record.currency);
  const mandate = await loadPayableMandate(trx, billerClientId, record.mandate_id, today, '/payment_record/mandate_id');
  assertMandateCurrency(record.currency, mandate, '/payment_record/currency');
  const timing = decidePaymentTiming({
    payDates: mandate.payDates,
    dueDate: record.due_date,
    allowPostDueDateDeduction: record.allow_post_due_date_deduction,
    today,
  });
  if (!timing.ok) {
    throw timingRejected(timing.rejection, [{ pointer: '/payment_record/due_date', detail: timing.rejection.detail }]);
  }
  const request: NewPaymentRequest = {
    billerClientId,
    mandateId: mandate.id,
    scheduleId: null,
    instalmentNumber: null,
    payrollId: mandate.payrollId,
    employeeId: mandate.employeeId,
    currency: record.currency,
    amount: record.amount,
    dueDate: record.due_date,
    allowPostDueDateDeduction: record.allow_post_due_date_deduction,
    targetPayDate: timing.targetPayDate,
    metadata: record.metadata,
  };
  const alongside = storeResponse && ((rows: readonly PaymentRow[]) => storeResponse(toPaymentResource(rows[0]!)));
  const [row] = await insertNewPaymentRequestsWithinLimit(trx, [request], ['/payment_record/amount'], limits, alongside);
  return toPaymentResource(row!);
}

/** Another write for the statement that stores new payment requests, made from those rows. */
type WritesAlongsideRows = (rows: readonly PaymentRow[]) => WriteAlongside;

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
  metadata: Metadata | null;
}

/** A payment request as it starts: pending, version 1, nothing collected, paid out or tried yet. */
function newPaymentRow(request: NewPaymentRequest, now: Date): PaymentRow {
  return {
    id: timeOrderedUuid(now.getTime()),
    biller_client_id: request.billerClientId,
    mandate_id: request.mandateId,
    schedule_id: request.scheduleId,
    instalment_number: request.instalmentNumber,
    payroll_id: request.payrollId,
    employee_id: request.employeeId,
    status: 'pending',
    currency: request.currency,
    amount: request.amount,
    collected_amount: 0,
    paid_out_amount: 0,
    attempts: 0,
    due_date: request.dueDate,
    allow_post_due_date_deduction: request.allowPostDueDateDeduction,
    target_pay_date: request.targetPayDate,
    metadata: request.metadata,
    version: 1,
    created_at: now,
    updated_at: now,
    cancelled_at: null,
    status_reason: null,
  };
}

/**
 * Writes new payment requests with their payment_request.created events, in one statement, and
 * returns the rows as stored with what their mandates' pending requests asked on the same pay dates
 * before them. The rows are built here in full, so the response is exactly the row that is stored,
 * without reading it back; each event renders from that row.
 */
async function writeNewPaymentRequests(
  trx: Executor,
  requests: readonly NewPaymentRequest[],
  alongside?: WritesAlongsideRows,
): Promise<{ rows: PaymentRow[]; pendingBefore: PendingOnPayDate[] }> {
  const now = new Date();
  const rows = requests.map((request) => newPaymentRow(request, now));
  return { rows, pendingBefore: await insertPaymentRequestsWithEvents(trx, rows, alongside?.(rows)) };
}

/** Writes new payment requests with their events, without the amount limits (fixtures of tests that build ledgers). */
export async function insertNewPaymentRequests(trx: Executor, requests: readonly NewPaymentRequest[]): Promise<PaymentRow[]> {
  return (await writeNewPaymentRequests(trx, requests)).rows;
}

export function paymentEvent(type: 'payment_request.created' | 'payment_request.updated', billerClientId: string, payment: PaymentResource) {
  return { type, billerClientId, resourceType: 'payment_request', resourceId: payment.id, data: payment };
}

function paymentNotFound(paymentId: string) {
  return new NotFoundError(`Payment ${paymentId}`);
}

export async function getPayment(db: Executor, billerClientId: string, paymentId: string): Promise<PaymentResource> {
  const row = isUuid(paymentId) ? await findPayment(db, billerClientId, paymentId) : undefined;
  if (!row) throw paymentNotFound(paymentId);
  return toPaymentResource(row);
}

export async function listPaymentResources(db: Executor, billerClientId: string, filters: PaymentFilters, paging: PagingQuery) {
  const page = pageOf(await listPayments(db, billerClientId, filters, paging), paging);
  return { payments: page.items.map(toPaymentResource), paging: page.paging };
}

/**
 * Cancelling is only possible before the lock: once instructed, the employer has been told to
 * deduct. Cancelling twice is not an error, the second call just reports the cancellation.
 */
export async function cancelPaymentRequest(trx: Executor, billerClientId: string, paymentId: string): Promise<PaymentResource> {
  const row = isUuid(paymentId) ? await findPaymentForUpdate(trx, billerClientId, paymentId) : undefined;
  if (!row) throw paymentNotFound(paymentId);
  if (row.status === 'cancelled') return toPaymentResource(row);
  if (!canTransition(row.status, 'cancelled')) {
    throw new ConflictError(
      'payment-not-cancellable',
      `Payment ${paymentId} has been instructed to payroll for pay date ${row.target_pay_date} and is now ${row.status}; only pending payment requests can be cancelled`,
      { members: { payment_status: row.status, target_pay_date: row.target_pay_date } },
    );
  }
  const payment = toPaymentResource(await markPaymentCancelled(trx, row.id));
  await recordEvents(trx, [paymentEvent('payment_request.updated', billerClientId, payment)]);
  return payment;
}
