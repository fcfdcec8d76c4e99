import type { Executor } from '../../platform/db/connection.ts';
import type { ScheduleStatus } from '../../platform/db/tables.ts';
import { recordEvents, type EventToRecord } from '../../platform/events/outbox.ts';
import { MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { cancelPendingPaymentsOfSchedule, listPaymentsOfSchedules } from '../payments/payment-repository.ts';
import { toPaymentResource, type PaymentResource } from '../payments/payment-resource.ts';
import type { AmountLimits } from '../payments/amount-limits.ts';
import {
  assertMandateCurrency,
  assertPaymentAmountsWithinLimit,
  cancelPaymentRequest,
  decidePaymentTiming,
  insertNewPaymentRequestsWithinLimit,
  loadPayableMandate,
  paymentEvent,
  type PaymentTimingRejection,
} from '../payments/payment-service.ts';
import { ConflictError, InvalidError, NotFoundError, type FieldError } from '../../platform/shared/domain-errors.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';
import { pageOf } from '../../platform/shared/paging.ts';
import type { Metadata } from '../../platform/shared/schemas.ts';
import { instalmentDueDates, type InstalmentInterval } from './instalment-due-dates.ts';
import { findSchedule, findScheduleForUpdate, insertSchedule, listSchedules, markScheduleCancelled, type ScheduleFilters } from './schedule-repository.ts';
import { toScheduleResource, type ScheduleResource } from './schedule-resource.ts';
import { scheduleOutcomeOfBillerCancel } from './schedule-outcome.ts';
import { settleSchedules } from './schedule-settlement-repository.ts';
import { SCHEDULE_LIFECYCLE } from './schedule-transitions.ts';
import { isUuid } from '../../platform/shared/schemas.ts';

/** The request body has been validated: exactly one of the two forms is present. */
export type ScheduleRecord = {
  mandate_id: string;
  currency: string;
  total_amount: number | null;
  allow_post_due_date_deduction: boolean;
  metadata: Metadata | null;
} & (
  { instalments: Array<{ amount: number; due_date: string; metadata: Metadata | null }> } | { amount: number; count: number; interval: InstalmentInterval; start_date: string }
);

export interface PlannedInstalment {
  instalmentNumber: number;
  amount: number;
  dueDate: string;
  metadata: Metadata | null;
  /** Where a problem with this instalment's due date points in the request body. */
  dueDatePointer: string;
  /** Where a problem with its amount points. */
  amountPointer: string;
}

/** Both request forms become one list of numbered instalments (numbers start at 1). */
export function planInstalments(record: ScheduleRecord): PlannedInstalment[] {
  if ('instalments' in record) {
    return record.instalments.map((instalment, index) => ({
      instalmentNumber: index + 1,
      amount: instalment.amount,
      dueDate: instalment.due_date,
      metadata: instalment.metadata,
      dueDatePointer: `/schedule_record/instalments/${index}/due_date`,
      amountPointer: `/schedule_record/instalments/${index}/amount`,
    }));
  }
  return instalmentDueDates(record.start_date, record.interval, record.count).map((dueDate, index) => ({
    instalmentNumber: index + 1,
    amount: record.amount,
    dueDate,
    metadata: null,
    dueDatePointer: '/schedule_record/start_date',
    amountPointer: '/schedule_record/amount',
  }));
}

/**
 * The schedule total is the sum of its instalments; a stated total_amount is a checksum the biller
 * gives us and must agree. Summed as bigint: 120 large amounts could pass the exact-integer range.
 * Messages give the body's integer amounts with what they are in `currency` (2500 is £25.00).
 */
export function scheduleTotal(instalments: readonly PlannedInstalment[], statedTotal: number | null, currency: string): number {
  const sum = instalments.reduce((total, instalment) => total + BigInt(instalment.amount), 0n);
  if (sum > BigInt(MAX_EXACT_MINOR_UNITS)) {
    throw new InvalidError(
      'total-amount-too-large',
      `The instalments add up to ${sum} (${formatMoney(sum, currency)}), more than ${MAX_EXACT_MINOR_UNITS} (${formatMoney(MAX_EXACT_MINOR_UNITS, currency)})`,
      {
        errors: [{ pointer: '/schedule_record', detail: 'the instalment amounts add up to more than the largest amount accepted' }],
      },
    );
  }
  const total = Number(sum);
  if (statedTotal !== null && statedTotal !== total) {
    const detail = `total_amount ${statedTotal} (${formatMoney(statedTotal, currency)}) does not equal the sum of the instalment amounts, ${total} (${formatMoney(total, currency)})`;
    throw new InvalidError('total-amount-mismatch', detail, {
      errors: [{ pointer: '/schedule_record/total_amount', detail }],
      members: { total_amount: statedTotal, instalments_total: total },
    });
  }
  return total;
}

/** One entry per place in the body an amount was given: the generated form states one amount for all. */
function uniqueAmountPointers(instalments: readonly PlannedInstalment[]): Array<{ pointer: string; amount: number }> {
  const byPointer = new Map<string, number>();
  for (const instalment of instalments) byPointer.set(instalment.amountPointer, instalment.amount);
  return [...byPointer].map(([pointer, amount]) => ({ pointer, amount }));
}

interface InstalmentRejection {
  instalment: PlannedInstalment;
  rejection: PaymentTimingRejection;
}

/**
 * A schedule is all or nothing: one unacceptable instalment rejects it, and the problem lists every
 * instalment that failed so the biller can fix them in one go. When all failed for the same reason
 * the type is that reason's, so clients branch on it as they do for single payments.
 */
function instalmentsRejected(rejections: readonly InstalmentRejection[], count: number): InvalidError {
  const describe = ({ instalment, rejection }: InstalmentRejection) => `instalment ${instalment.instalmentNumber} (due ${instalment.dueDate}): ${rejection.detail}`;
  const slugs = new Set(rejections.map((r) => r.rejection.slug));
  const slug = slugs.size === 1 ? rejections[0]!.rejection.slug : 'instalments-rejected';
  const detail =
    rejections.length === 1
      ? `The schedule was not created: ${describe(rejections[0]!)}`
      : `The schedule was not created: ${rejections.length} of ${count} instalments cannot be accepted: ${rejections.map(describe).join('; ')}`;
  const errors: FieldError[] = rejections.map((r) => ({ pointer: r.instalment.dueDatePointer, detail: describe(r) }));
  return new InvalidError(slug, detail, {
    errors,
    members: {
      rejected_instalments: rejections.map(({ instalment, rejection }) => ({
        instalment_number: instalment.instalmentNumber,
        due_date: instalment.dueDate,
        reason: rejection.slug,
        ...('expected_pay_date' in rejection.extensions ? { expected_pay_date: rejection.extensions.expected_pay_date } : {}),
      })),
    },
  });
}

/**
 * POST /schedules: every instalment is a payment request under the POST /payments rules, targeted
 * at its own pay date. Writes happen only after all instalments are accepted, set-based.
 */
export async function createSchedule(
  trx: Executor,
  input: { billerClientId: string; record: ScheduleRecord; today: string; limits: AmountLimits },
): Promise<ScheduleResource> {
  const { billerClientId, record, today, limits } = input;
  const instalments = planInstalments(record);
  assertPaymentAmountsWithinLimit(uniqueAmountPointers(instalments), limits, record.currency);
  const totalAmount = scheduleTotal(instalments, record.total_amount, record.currency);
  const mandate = await loadPayableMandate(trx, billerClientId, record.mandate_id, today, '/schedule_record/mandate_id');
  assertMandateCurrency(record.currency, mandate, '/schedule_record/currency');

  const rejections: InstalmentRejection[] = [];
  const targets: string[] = [];
  for (const instalment of instalments) {
    const timing = decidePaymentTiming({
      payDates: mandate.payDates,
      dueDate: instalment.dueDate,
      allowPostDueDateDeduction: record.allow_post_due_date_deduction,
      today,
    });
    if (timing.ok) targets.push(timing.targetPayDate);
    else rejections.push({ instalment, rejection: timing.rejection });
  }
  if (rejections.length > 0) throw instalmentsRejected(rejections, instalments.length);

  const schedule = await insertSchedule(trx, {
    billerClientId,
    mandateId: mandate.id,
    currency: record.currency,
    totalAmount,
    instalmentCount: instalments.length,
    metadata: record.metadata,
  });
  // In instalment order, each with its payment_request.created event; the instalments landing on
  // one pay date count together against the mandate's limit there.
  const payments = await insertNewPaymentRequestsWithinLimit(
    trx,
    instalments.map((instalment, index) => ({
      billerClientId,
      mandateId: mandate.id,
      scheduleId: schedule.id,
      instalmentNumber: instalment.instalmentNumber,
      payrollId: mandate.payrollId,
      employeeId: mandate.employeeId,
      currency: record.currency,
      amount: instalment.amount,
      dueDate: instalment.dueDate,
      allowPostDueDateDeduction: record.allow_post_due_date_deduction,
      targetPayDate: targets[index]!,
      metadata: instalment.metadata,
    })),
    instalments.map((instalment) => instalment.amountPointer),
    limits,
  );
  return toScheduleResource(schedule, payments);
}

function scheduleNotFound(scheduleId: string) {
  return new NotFoundError(`Schedule ${scheduleId}`);
}

export async function getSchedule(db: Executor, billerClientId: string, scheduleId: string): Promise<ScheduleResource> {
  const row = isUuid(scheduleId) ? await findSchedule(db, billerClientId, scheduleId) : undefined;
  if (!row) throw scheduleNotFound(scheduleId);
  return toScheduleResource(row, await listPaymentsOfSchedules(db, [row.id]));
}

export async function listScheduleResources(db: Executor, billerClientId: string, filters: ScheduleFilters, paging: PagingQuery) {
  const page = pageOf(await listSchedules(db, billerClientId, filters, paging), paging);
  const payments = await listPaymentsOfSchedules(
    db,
    page.items.map((s) => s.id),
  );
  const bySchedule = new Map<string, typeof payments>();
  for (const payment of payments) {
    const group = bySchedule.get(payment.schedule_id!);
    if (group) group.push(payment);
    else bySchedule.set(payment.schedule_id!, [payment]);
  }
  return {
    schedules: page.items.map((row) => toScheduleResource(row, bySchedule.get(row.id) ?? [])),
    paging: page.paging,
  };
}

/**
 * A completed schedule has nothing left to stop; an errored one may still have pending instalments
 * worth stopping, so it can be cancelled like an active one (SCHEDULE_LIFECYCLE decides).
 */
export function canCancelSchedule(status: ScheduleStatus): boolean {
  return SCHEDULE_LIFECYCLE.can(status, 'cancelled');
}

/**
 * Cancels the instalments payroll has not been instructed about yet; instructed ones run their
 * course (they cannot be recalled), and the schedule is marked cancelled, `cancelled_by_biller`, with
 * a payment_request.updated per instalment cancelled and one schedule.updated. Idempotent: a second
 * cancel changes nothing and writes no event.
 */
export async function cancelSchedule(trx: Executor, billerClientId: string, scheduleId: string): Promise<ScheduleResource> {
  const row = isUuid(scheduleId) ? await findScheduleForUpdate(trx, billerClientId, scheduleId) : undefined;
  if (!row) throw scheduleNotFound(scheduleId);
  if (row.status === 'cancelled') return toScheduleResource(row, await listPaymentsOfSchedules(trx, [row.id]));
  if (!canCancelSchedule(row.status)) {
    throw new ConflictError('schedule-not-cancellable', `Schedule ${scheduleId} is ${row.status} and can no longer be cancelled`, {
      members: { schedule_status: row.status },
    });
  }
  const cancelled = await cancelPendingPaymentsOfSchedule(trx, row.id);
  const outcome = scheduleOutcomeOfBillerCancel();
  const schedule = toScheduleResource(await markScheduleCancelled(trx, row.id, outcome.reason), await listPaymentsOfSchedules(trx, [row.id]));
  await recordEvents(trx, [
    ...cancelled
      .sort((a, b) => a.instalment_number! - b.instalment_number!)
      .map((payment) => paymentEvent('payment_request.updated', billerClientId, toPaymentResource(payment))),
    scheduleEvent(billerClientId, schedule),
  ]);
  return schedule;
}

function scheduleEvent(billerClientId: string, schedule: ScheduleResource): EventToRecord {
  return { type: 'schedule.updated', billerClientId, resourceType: 'schedule', resourceId: schedule.id, data: schedule };
}

/**
 * POST /payments/{payment_id}/cancel: cancels the payment request (cancelPaymentRequest), and when it
 * was an instalment, settles its schedule in the same transaction: the one the biller has just
 * cancelled may have been the last that could still collect (scheduleOutcome). Here, not in
 * cancelPaymentRequest, because payments may not import schedules (schedules import payments).
 */
export async function cancelPaymentRequestAndSettle(trx: Executor, billerClientId: string, paymentId: string): Promise<PaymentResource> {
  const payment = await cancelPaymentRequest(trx, billerClientId, paymentId);
  if (payment.schedule_id !== null) await settleSchedules(trx, [payment.schedule_id]);
  return payment;
}
