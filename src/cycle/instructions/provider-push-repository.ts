import type { Executor } from '../../platform/db/connection.ts';

/** Pushes still owed for a payroll pay date's newest instruction file, with what a record needs. */
export async function listPendingPushes(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('employee_deduction_pushes as push')
    .innerJoin('instruction_items as item', 'item.id', 'push.instruction_item_id')
    .innerJoin('instruction_files as file', 'file.id', 'item.instruction_file_id')
    .select(['push.id', 'push.employee_id', 'item.id as item_id', 'item.amount', 'item.currency', 'item.pay_period', 'item.payment_reference', 'file.file_version'])
    .where('push.payroll_id', '=', payrollId)
    .where('file.pay_date', '=', payDate)
    .where('push.status', '=', 'pending')
    .orderBy('push.id')
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
