import type { Executor } from '../db/connection.ts';

export async function findPayrollForProvider(db: Executor, payrollId: string) {
  return db
    .selectFrom('payrolls')
    .select(['id', 'payroll_provider_id', 'currency', 'external_id', 'name'])
    .where('id', '=', payrollId)
    .executeTakeFirst();
}

export async function findPayDate(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('pay_dates')
    .selectAll()
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .executeTakeFirst();
}

/** The newest snapshot version of a pay date (a re-run supersedes older ones). */
export async function findServedSnapshot(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_snapshots')
    .selectAll()
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .where('status', '!=', 'superseded')
    .executeTakeFirst();
}

export async function listSnapshotLines(db: Executor, snapshotId: string) {
  return db
    .selectFrom('deduction_lines')
    .select(['employee_id', 'payroll_reference', 'requested_amount', 'currency', 'payment_reference'])
    .where('snapshot_id', '=', snapshotId)
    .orderBy('payroll_reference')
    .execute();
}

export async function listRequestedPayments(db: Executor, snapshotId: string) {
  return db
    .selectFrom('requested_payments')
    .selectAll()
    .where('snapshot_id', '=', snapshotId)
    .orderBy('payment_reference')
    .execute();
}
