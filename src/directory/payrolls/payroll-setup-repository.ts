import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { PayrollsTable } from '../../platform/db/tables.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';

const payrollColumns = [
  'id',
  'employer_id',
  'payroll_provider_id',
  'external_id',
  'name',
  'payment_run_frequency',
  'currency',
  'bank_holiday_region',
  'go_live_date',
  'calendar_synced_at',
  'created_at',
] as const;

/** Undefined when the id or the provider's external id is taken (the caller tells which). */
export async function insertPayroll(db: Executor, payroll: Insertable<PayrollsTable>) {
  return db
    .insertInto('payrolls')
    .values(payroll)
    .onConflict((oc) => oc.doNothing())
    .returning(payrollColumns)
    .executeTakeFirst();
}

export async function findPayroll(db: Executor, payrollId: string, options: { rowLock?: boolean } = {}) {
  const query = db.selectFrom('payrolls').select(payrollColumns).where('id', '=', payrollId);
  return (options.rowLock ? query.forUpdate() : query).executeTakeFirst();
}

export async function updatePayroll(db: Executor, payrollId: string, fields: Pick<Updateable<PayrollsTable>, 'name' | 'payment_run_frequency' | 'bank_holiday_region'>) {
  return db.updateTable('payrolls').set(fields).where('id', '=', payrollId).returning(payrollColumns).executeTakeFirstOrThrow();
}

export async function findPayrollByExternalId(db: Executor, providerId: string, externalId: string) {
  return db.selectFrom('payrolls').select(['id']).where('payroll_provider_id', '=', providerId).where('external_id', '=', externalId).executeTakeFirst();
}

export async function listPayrolls(db: Executor, filters: { employerId?: string | undefined; payrollProviderId?: string | undefined }, paging: PagingQuery) {
  let query = db.selectFrom('payrolls').select(payrollColumns);
  if (filters.employerId) query = query.where('employer_id', '=', filters.employerId);
  if (filters.payrollProviderId) query = query.where('payroll_provider_id', '=', filters.payrollProviderId);
  return applyPaging(query, 'payrolls', paging).execute();
}
