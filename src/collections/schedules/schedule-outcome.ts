import type { PaymentStatus, ScheduleStatus } from '../../platform/db/tables.ts';

// How a schedule settles once its instalments (payment requests) move. Reconciliation executes this
// set-based in SQL over the schedules it touched (settleSchedules in
// src/cycle/reconciliation/reconciliation-repository.ts); test/collections/schedules/settle-schedules.test.ts checks the
// statement against it. (The lock has a rule of its own: it errors the active schedule of every
// instalment it refuses for its amount, including one that ends partially_collected.)

/**
 * The status an active schedule moves to, given the statuses of all its instalments, or null when it
 * stays as it is:
 *  - errored as soon as any instalment has failed (whatever the others are);
 *  - completed when every instalment is collected or paid out;
 *  - otherwise still running (an instalment pending, instructed, partly collected or cancelled keeps
 *    it active), and a schedule without instalments has nothing to settle.
 * Only an active schedule settles: completed, errored and cancelled ones are never moved by it.
 */
export function scheduleOutcome(scheduleStatus: ScheduleStatus, instalmentStatuses: ReadonlyArray<PaymentStatus>): ScheduleStatus | null {
  if (scheduleStatus !== 'active' || instalmentStatuses.length === 0) return null;
  if (instalmentStatuses.includes('failed')) return 'errored';
  if (instalmentStatuses.every((status) => status === 'collected' || status === 'paid_out')) return 'completed';
  return null;
}
