import type { Executor } from '../../platform/db/connection.ts';
import type { StoredRequestedPayment } from './deduction-content.ts';

export async function isEmployeeOnPayroll(db: Executor, payrollId: string, employeeId: string): Promise<boolean> {
  const row = await db.selectFrom('employments').select('id').where('payroll_id', '=', payrollId).where('employee_id', '=', employeeId).executeTakeFirst();
  return row !== undefined;
}

/** The highest version of an employee's record for a pay period, whatever its source, voided or not (versions never go back). */
export async function findLatestRecord(db: Executor, payrollId: string, payPeriod: string, employeeId: string) {
  return db
    .selectFrom('deduction_records')
    .select(['version', 'content_hash', 'void_id'])
    .where('payroll_id', '=', payrollId)
    .where('pay_period', '=', payPeriod)
    .where('employee_id', '=', employeeId)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export interface NewPushRecord {
  payrollId: string;
  payPeriod: string;
  payDate: string;
  employeeId: string;
  recordId: string;
  version: number;
  deductionAmount: number;
  currency: string;
  requestedPayments: readonly StoredRequestedPayment[];
  contentHash: string;
  receivedByClientId: string;
}

/**
 * Inserts the version unless that version already exists. A concurrent insert of the same version
 * makes this wait for the other transaction and then do nothing (false), without aborting ours,
 * so the caller can re-read and decide again.
 */
export async function insertPushRecord(db: Executor, record: NewPushRecord): Promise<boolean> {
  const inserted = await db
    .insertInto('deduction_records')
    .values({
      payroll_id: record.payrollId,
      pay_period: record.payPeriod,
      pay_date: record.payDate,
      employee_id: record.employeeId,
      record_id: record.recordId,
      version: record.version,
      deduction_amount: record.deductionAmount,
      currency: record.currency,
      leaver: false,
      requested_payments: JSON.stringify(record.requestedPayments),
      content_hash: record.contentHash,
      source: 'push',
      received_by_client_id: record.receivedByClientId,
    })
    .onConflict((oc) => oc.columns(['payroll_id', 'pay_period', 'employee_id', 'version']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}
