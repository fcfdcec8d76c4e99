import type { Executor } from '../../platform/db/connection.ts';
import type { EmploymentStatus } from '../../platform/db/tables.ts';
import { recordEvents, type EventToRecord } from '../../platform/events/outbox.ts';
import { findMandatesWithConsumers } from '../mandates/mandate-repository.ts';
import { toMandateResource } from '../mandates/mandate-resource.ts';
import { toPaymentResource } from '../payments/payment-resource.ts';
import { settleSchedulesOfPayments } from '../schedules/schedule-settlement-repository.ts';
import { findEmployeeOnPayroll } from '../../directory/payrolls/directory-repository.ts';
import { employeeUpdateDiffers, toEmployeeUpdatePayload, type EmployeeUpdatePayload } from '../../directory/payrolls/employee-resource.ts';
import { cancelPendingPaymentsOfMandates, listBillersWithLiveMandates, moveMandatesOfEmployment } from './employment-change-repository.ts';
import { endsCollection, mandateMovesForEmploymentStatus } from './mandate-moves.ts';

export interface EmploymentChangeOutcome {
  notifiedBillers: string[];
  movedMandateIds: string[];
  cancelledPaymentIds: string[];
}

/**
 * Follows up a change to one employee's employment that has already been written in `trx`:
 * - billers holding live mandates on it get one employee.updated each, when what that event shows
 *   changed (`before` null: the employment is new, nobody can hold a mandate on it yet);
 * - when the employment status changed, the mandates move (see mandateMovesForEmploymentStatus),
 *   each with its mandate.updated, and mandates that stopped collecting cancel their pending
 *   payment requests, each with its payment_request.updated, settling the schedules that leaves
 *   with nothing to collect (settleSchedules), each with its schedule.updated.
 * Everything happens in the caller's transaction, so the change and its consequences commit together.
 */
export async function followEmploymentChange(
  trx: Executor,
  change: { employeeId: string; payrollId: string; before: EmployeeUpdatePayload | null },
): Promise<EmploymentChangeOutcome> {
  const outcome: EmploymentChangeOutcome = { notifiedBillers: [], movedMandateIds: [], cancelledPaymentIds: [] };
  const { employeeId, payrollId, before } = change;
  if (before === null) return outcome;
  const current = await findEmployeeOnPayroll(trx, employeeId, payrollId);
  if (!current) throw new Error(`employee ${employeeId} is not on payroll ${payrollId}`);
  const after = toEmployeeUpdatePayload(current);
  if (!employeeUpdateDiffers(before, after)) return outcome;

  const events: EventToRecord[] = [];
  // Billers are taken before the mandates move, so a biller whose mandate ends now still hears why.
  outcome.notifiedBillers = await listBillersWithLiveMandates(trx, employeeId, payrollId);
  for (const billerClientId of outcome.notifiedBillers) {
    events.push({ type: 'employee.updated', billerClientId, resourceType: 'employee', resourceId: employeeId, data: after });
  }

  if (before.employment_status !== after.employment_status) {
    const moved = await moveMandates(trx, employeeId, payrollId, after.employment_status);
    outcome.movedMandateIds = moved.all;
    const mandates = await findMandatesWithConsumers(trx, moved.all);
    for (const mandate of mandates) {
      events.push({
        type: 'mandate.updated',
        billerClientId: mandate.biller_client_id,
        resourceType: 'mandate',
        resourceId: mandate.id,
        data: toMandateResource(mandate),
      });
    }
    const cancelled = await cancelPendingPaymentsOfMandates(trx, moved.ended);
    outcome.cancelledPaymentIds = cancelled.map((payment) => payment.id);
    for (const payment of cancelled) {
      events.push({
        type: 'payment_request.updated',
        billerClientId: payment.biller_client_id,
        resourceType: 'payment_request',
        resourceId: payment.id,
        data: toPaymentResource(payment),
      });
    }
  }

  await recordEvents(trx, events);
  // Schedules whose last open instalments were cancelled with their mandate settle now (mandate_ended).
  await settleSchedulesOfPayments(trx, outcome.cancelledPaymentIds);
  return outcome;
}

async function moveMandates(trx: Executor, employeeId: string, payrollId: string, status: EmploymentStatus) {
  const all: string[] = [];
  const ended: string[] = [];
  for (const move of mandateMovesForEmploymentStatus(status)) {
    const ids = await moveMandatesOfEmployment(trx, { employeeId, payrollId, ...move });
    all.push(...ids);
    if (endsCollection(move.to)) ended.push(...ids);
  }
  return { all, ended };
}
