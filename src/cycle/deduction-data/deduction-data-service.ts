import { DateTime } from 'luxon';
import type { Executor } from '../../platform/db/connection.ts';
import type { Caller } from '../../platform/shared/caller.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { toDeductionDataResponse, type DeductionDataResponse } from './deduction-data-resource.ts';
import { findPayDate, findPayrollForProvider, findCurrentSnapshot, listRequestedPayments, listSnapshotLines } from '../snapshots/snapshot-repository.ts';
import { isUuid } from '../../platform/shared/schemas.ts';

/**
 * The data request's `pay_date` is an ISO 8601 timestamp or a plain date; either way it names a
 * calendar date in the service time zone (2026-11-26T23:30:00Z is 27 November in London in BST).
 */
export function calendarDateOf(value: string, timeZone: string): string | null {
  const parsed = /^\d{4}-\d{2}-\d{2}$/.test(value) ? DateTime.fromISO(value, { zone: timeZone }) : DateTime.fromISO(value, { setZone: true });
  if (!parsed.isValid) return null;
  return parsed.setZone(timeZone).toISODate();
}

/** Only the provider that runs a payroll may read its deduction data; others see nothing there. */
export async function requireProvidersPayroll(db: Executor, caller: Caller, payrollId: string) {
  if (!isUuid(payrollId)) throw new NotFoundError(`Payroll ${payrollId}`);
  return providersPayroll(caller, payrollId, await findPayrollForProvider(db, payrollId));
}

/** The payroll found by id, if it is the calling provider's: another provider's is as good as missing. */
export function providersPayroll<Payroll extends { payroll_provider_id: string }>(caller: Caller, payrollId: string, payroll: Payroll | undefined): Payroll {
  if (!payroll || payroll.payroll_provider_id !== caller.payrollProviderId) throw new NotFoundError(`Payroll ${payrollId}`);
  return payroll;
}

export async function getDeductionData(
  db: Executor,
  caller: Caller,
  request: { payrollId: string; payDate: string; payPeriod?: string | undefined },
  timeZone: string,
): Promise<DeductionDataResponse> {
  await requireProvidersPayroll(db, caller, request.payrollId);
  const payDate = calendarDateOf(request.payDate, timeZone);
  if (!payDate) {
    throw new InvalidError('validation-failed', 'pay_date must be an ISO 8601 date or timestamp', {
      errors: [{ pointer: '/query/pay_date', detail: 'is not an ISO 8601 date or timestamp' }],
    });
  }
  const calendarEntry = await findPayDate(db, request.payrollId, payDate);
  if (!calendarEntry) throw new NotFoundError(`Pay date ${payDate} on payroll ${request.payrollId}`);
  if (request.payPeriod !== undefined && request.payPeriod !== calendarEntry.pay_period) {
    throw new InvalidError('pay-period-mismatch', `Pay period ${request.payPeriod} does not match pay date ${payDate}, whose pay period is ${calendarEntry.pay_period}`, {
      errors: [{ pointer: '/query/pay_period', detail: `must be ${calendarEntry.pay_period} for pay date ${payDate}` }],
    });
  }
  const snapshot = await findCurrentSnapshot(db, request.payrollId, payDate);
  if (!snapshot) {
    throw new ConflictError(
      'deduction-data-not-final',
      `Deduction data for ${payDate} is not final yet: it is locked on ${calendarEntry.lock_date}, ahead of the payroll cut-off on ${calendarEntry.payroll_cutoff_date}`,
      { members: { lock_date: calendarEntry.lock_date, payroll_cutoff_date: calendarEntry.payroll_cutoff_date } },
    );
  }
  const [lines, requested] = await Promise.all([listSnapshotLines(db, snapshot.id), listRequestedPayments(db, snapshot.id)]);
  return toDeductionDataResponse(snapshot, lines, requested, timeZone);
}
