import type { MandateStatus, PaymentStatus, ScheduleStatus, ScheduleStatusReason } from '../../platform/db/tables.ts';

// How a schedule settles once its instalments (payment requests) move. Every path that ends an
// instalment settles its schedule in the same transaction, set-based in SQL (settleSchedules in
// src/collections/schedules/schedule-settlement-repository.ts): reconciliation, the biller's cancel of
// one payment request, a mandate's revocation, a mandate ended by an employment change, a re-run's
// cancel of released requests. test/collections/schedules/settle-schedules.test.ts holds the statement
// to this rule. The lock has a rule of its own (scheduleOutcomeOfRefusal), and the biller's cancel of
// the whole schedule another (scheduleOutcomeOfBillerCancel).

/**
 * Instalments that may still collect money: not yet asked of payroll, or asked and not yet answered.
 * Every other status is an answer (collected, paid out, failed, partly collected) or an end (cancelled).
 * A later push can still correct an answer, but that is a correction of what was collected, not an
 * instalment the schedule waits for.
 */
export const INSTALMENT_STATUSES_STILL_COLLECTING = ['pending', 'instructed'] as const satisfies readonly PaymentStatus[];

/** Collected in full: the money is the biller's (paid_out: and it has been paid out). */
export const INSTALMENT_STATUSES_COLLECTED_IN_FULL = ['collected', 'paid_out'] as const satisfies readonly PaymentStatus[];

/**
 * Mandates that will never collect again (the terminal statuses of the mandate lifecycle; a test holds
 * the list to MANDATE_STATUSES_ENDING_COLLECTION, which this area cannot import: mandates import schedules).
 */
export const ENDED_MANDATE_STATUSES = ['revoked', 'cancelled', 'expired', 'failed'] as const satisfies readonly MandateStatus[];

/** The status each reason goes with: a reason is never given to another status. */
export const SCHEDULE_STATUS_OF_REASON = {
  all_instalments_collected: 'completed',
  instalment_failed: 'errored',
  instalment_refused: 'errored',
  instalments_not_collected_in_full: 'errored',
  instalments_cancelled: 'cancelled',
  mandate_revoked: 'cancelled',
  mandate_ended: 'cancelled',
  cancelled_by_biller: 'cancelled',
} as const satisfies Record<ScheduleStatusReason, Exclude<ScheduleStatus, 'active'>>;

/** Where a schedule goes, and why. */
export interface ScheduleOutcome {
  status: Exclude<ScheduleStatus, 'active'>;
  reason: ScheduleStatusReason;
}

function outcomeOf(reason: ScheduleStatusReason): ScheduleOutcome {
  return { status: SCHEDULE_STATUS_OF_REASON[reason], reason };
}

export function instalmentStillCollecting(status: PaymentStatus): boolean {
  return (INSTALMENT_STATUSES_STILL_COLLECTING as readonly PaymentStatus[]).includes(status);
}

/**
 * Where an active schedule goes, given its mandate's status and the statuses of all its instalments,
 * or null while it stays active. In this order:
 *  - errored, `instalment_failed`, as soon as any instalment has failed (whatever the others are);
 *  - stays active while any instalment is pending or instructed: it may still collect;
 *  - completed, `all_instalments_collected`, when every instalment is collected or paid out;
 *  - errored, `instalments_not_collected_in_full`, when one or more ended partly collected (the rest
 *    collected or cancelled): money was asked for and not all of it came;
 *  - cancelled otherwise (one or more cancelled, the rest collected in full), its reason the mandate's
 *    when it has ended: `mandate_revoked`, `mandate_ended` (expired with the employment, failed,
 *    cancelled), else `instalments_cancelled` (the biller cancelled them one by one). Cancelled, not
 *    errored, even when some were collected: as when the biller cancels the whole schedule, nothing
 *    went wrong, the rest was called off, and what was collected stays collected.
 * So an active schedule with instalments settles exactly when none of them can collect any more (or
 * one failed). Only an active schedule settles: completed, errored and cancelled ones are never moved
 * by it, and a schedule without instalments has nothing to settle.
 */
export function scheduleOutcome(schedule: { status: ScheduleStatus; mandateStatus: MandateStatus; instalments: ReadonlyArray<PaymentStatus> }): ScheduleOutcome | null {
  const { status, mandateStatus, instalments } = schedule;
  if (status !== 'active' || instalments.length === 0) return null;
  if (instalments.includes('failed')) return outcomeOf('instalment_failed');
  if (instalments.some(instalmentStillCollecting)) return null;
  if (instalments.every((s) => (INSTALMENT_STATUSES_COLLECTED_IN_FULL as readonly PaymentStatus[]).includes(s))) return outcomeOf('all_instalments_collected');
  if (instalments.includes('partially_collected')) return outcomeOf('instalments_not_collected_in_full');
  if (mandateStatus === 'revoked') return outcomeOf('mandate_revoked');
  if ((ENDED_MANDATE_STATUSES as readonly MandateStatus[]).includes(mandateStatus)) return outcomeOf('mandate_ended');
  return outcomeOf('instalments_cancelled');
}

/**
 * The lock's rule: it errors the active schedule of every instalment it refuses for its amount (over
 * the most a payment request may be), at once, even when the refused instalment ends partly collected
 * and others are still to come: the biller must look at the plan, since that instalment can never be
 * asked of payroll as it stands.
 */
export function scheduleOutcomeOfRefusal(status: ScheduleStatus): ScheduleOutcome | null {
  return status === 'active' ? outcomeOf('instalment_refused') : null;
}

/**
 * The biller's cancel of the whole schedule (POST /schedules/{id}/cancel): an active or errored
 * schedule is cancelled, `cancelled_by_biller` (schedule-transitions.ts decides which may be).
 */
export function scheduleOutcomeOfBillerCancel(): ScheduleOutcome {
  return outcomeOf('cancelled_by_biller');
}
