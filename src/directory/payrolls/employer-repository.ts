import type { Insertable } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { applyPaging } from '../../platform/db/keyset-paging.ts';
import type { EmployerOptInChangesTable, EmployersTable } from '../../platform/db/tables.ts';
import type { PagingQuery } from '../../platform/shared/paging.ts';

/** Null when the provider already has an employer with this external id. */
export async function insertEmployer(db: Executor, employer: Insertable<EmployersTable>) {
  return db
    .insertInto('employers')
    .values(employer)
    .onConflict((oc) => oc.columns(['payroll_provider_id', 'external_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findEmployer(db: Executor, employerId: string, options: { rowLock?: boolean } = {}) {
  let query = db.selectFrom('employers').selectAll().where('id', '=', employerId);
  if (options.rowLock) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function listEmployers(db: Executor, filters: { payrollProviderId?: string | undefined }, paging: PagingQuery) {
  let query = db.selectFrom('employers').selectAll();
  if (filters.payrollProviderId) query = query.where('payroll_provider_id', '=', filters.payrollProviderId);
  return applyPaging(query, 'employers', paging).execute();
}

export async function setEmployerOptInStatus(db: Executor, employerId: string, status: 'pending' | 'opted_in' | 'opted_out') {
  return db
    .updateTable('employers')
    .set((eb) => ({ salary_deduction_opt_in_status: status, updated_at: eb.fn<Date>('now') }))
    .where('id', '=', employerId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setEmployerPayoutFunding(db: Executor, employerId: string, funding: 'received' | 'deducted' | null) {
  return db
    .updateTable('employers')
    .set((eb) => ({ payout_funding: funding, updated_at: eb.fn<Date>('now') }))
    .where('id', '=', employerId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertOptInChange(db: Executor, change: Insertable<EmployerOptInChangesTable>) {
  return db.insertInto('employer_opt_in_changes').values(change).returningAll().executeTakeFirstOrThrow();
}

/** Oldest first: the order the status moved in. */
export async function listOptInChanges(db: Executor, employerId: string) {
  return db.selectFrom('employer_opt_in_changes').selectAll().where('employer_id', '=', employerId).orderBy('changed_at').orderBy('id').execute();
}
