import type { Executor } from '../../platform/db/connection.ts';
import type { MandateStatus } from '../../platform/db/tables.ts';
import { MANDATE_LIFECYCLE } from '../mandates/mandate-transitions.ts';
import { CANCELLABLE_PAYMENT_STATUSES } from '../payments/payment-transitions.ts';

/** Mandates that still collect or wait to: their billers care about the employee. */
export const LIVE_MANDATE_STATUSES: readonly MandateStatus[] = ['pending_enablement', 'active', 'suspended'];

/** The billers holding live mandates on one employment, each once. */
export async function listBillersWithLiveMandates(db: Executor, employeeId: string, payrollId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mandates')
    .select('biller_client_id')
    .distinct()
    .where('employee_id', '=', employeeId)
    .where('payroll_id', '=', payrollId)
    .where('status', 'in', LIVE_MANDATE_STATUSES)
    .orderBy('biller_client_id')
    .execute();
  return rows.map((row) => row.biller_client_id);
}

/**
 * Moves every mandate of one employment that is in `from` to `to`, in one statement; the row locks
 * it takes (and Postgres re-checking `status` after waiting for them) keep a concurrent revocation
 * or enablement from being overwritten. Gives the ids of the mandates moved.
 */
export async function moveMandatesOfEmployment(
  db: Executor,
  move: { employeeId: string; payrollId: string; from: MandateStatus; to: MandateStatus; reason: string | null },
): Promise<string[]> {
  const rows = await db
    .updateTable('mandates')
    .set((eb) => ({
      status: move.to,
      status_reason: move.reason,
      version: eb('version', '+', 1),
      updated_at: eb.fn<Date>('now'),
    }))
    .where('employee_id', '=', move.employeeId)
    .where('payroll_id', '=', move.payrollId)
    .where('status', 'in', MANDATE_LIFECYCLE.fromStatuses(move.to, [move.from]))
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Cancels the not yet instructed payment requests of mandates that stopped collecting. */
export async function cancelPendingPaymentsOfMandates(db: Executor, mandateIds: readonly string[]) {
  if (mandateIds.length === 0) return [];
  return db
    .updateTable('payment_requests')
    .set((eb) => ({
      status: 'cancelled',
      cancelled_at: eb.fn<Date>('now'),
      updated_at: eb.fn<Date>('now'),
      version: eb('version', '+', 1),
    }))
    .where('mandate_id', 'in', mandateIds)
    .where('status', 'in', CANCELLABLE_PAYMENT_STATUSES)
    .returningAll()
    .execute();
}
