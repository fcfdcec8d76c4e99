import type { Executor } from '../../platform/db/connection.ts';

/**
 * Pushes still owed for a payroll pay date's newest instruction file, with what a record needs: the
 * item, and the employee's deduction line in the snapshot the file was written from (none for a
 * stop), which the data request serves for that employee too.
 */
export async function listPendingPushes(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('employee_deduction_pushes as push')
    .innerJoin('instruction_items as item', 'item.id', 'push.instruction_item_id')
    .innerJoin('instruction_files as file', 'file.id', 'item.instruction_file_id')
    .leftJoin('deduction_lines as line', (join) => join.onRef('line.snapshot_id', '=', 'file.snapshot_id').onRef('line.employee_id', '=', 'item.employee_id'))
    .select([
      'push.id',
      'push.employee_id',
      'item.id as item_id',
      'item.amount',
      'item.currency',
      'item.pay_period',
      'item.payment_reference',
      'file.file_version',
      'file.snapshot_id',
      'line.requested_amount as line_requested_amount',
      'line.currency as line_currency',
    ])
    .where('push.payroll_id', '=', payrollId)
    .where('file.pay_date', '=', payDate)
    .where('push.status', '=', 'pending')
    .orderBy('push.id')
    .execute();
}

/** The payments these snapshots ask the employer to make, in one read for every push of a run. */
export async function listRequestedPaymentsOfSnapshots(db: Executor, snapshotIds: readonly string[]) {
  if (snapshotIds.length === 0) return [];
  return db
    .selectFrom('requested_payments')
    .select(['snapshot_id', 'payment_reference', 'payment_amount', 'currency', 'account_number', 'sort_code', 'account_holder_name'])
    .where('snapshot_id', 'in', [...new Set(snapshotIds)])
    .orderBy('snapshot_id')
    .orderBy('payment_reference')
    .execute();
}

/** The live provider a payroll's pushes go to; none for a sandbox payroll, whose provider is simulated and never called. */
export async function findProviderOfPayroll(db: Executor, payrollId: string) {
  return db
    .selectFrom('payrolls')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .selectAll('payroll_providers')
    .where('payrolls.id', '=', payrollId)
    .where('payroll_providers.sandbox', '=', false)
    .executeTakeFirst();
}

export async function markPushSent(db: Executor, pushId: string, response: unknown): Promise<void> {
  await db
    .updateTable('employee_deduction_pushes')
    .set((eb) => ({ status: 'sent', attempts: eb('attempts', '+', 1), sent_at: new Date(), response: JSON.stringify(response), last_error: null }))
    .where('id', '=', pushId)
    .execute();
}

export async function recordPushFailure(db: Executor, pushId: string, error: string, final: boolean): Promise<void> {
  await db
    .updateTable('employee_deduction_pushes')
    .set((eb) => ({ status: final ? 'failed' : 'pending', attempts: eb('attempts', '+', 1), last_error: error.slice(0, 1000) }))
    .where('id', '=', pushId)
    .execute();
}
