import { employmentNameSql } from '../../directory/payrolls/employee-admin-repository.ts';
import type { Executor } from '../../platform/db/connection.ts';

/**
 * The latest pay date reconciliation has anything for (attempts or held exceptions) on a live payroll:
 * where the reconciliation page opens when no date is asked for. Sandbox payrolls are left out, as
 * the operators' reports leave them out.
 */
export async function findLatestReconciliationPayDate(db: Executor): Promise<string | undefined> {
  const [attempt, exception] = await Promise.all([
    db
      .selectFrom('collection_attempts as ca')
      .innerJoin('payrolls as p', 'p.id', 'ca.payroll_id')
      .innerJoin('payroll_providers as pp', 'pp.id', 'p.payroll_provider_id')
      .select('ca.pay_date')
      .where('pp.sandbox', '=', false)
      .orderBy('ca.pay_date', 'desc')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('reconciliation_exceptions as x')
      .innerJoin('payrolls as p', 'p.id', 'x.payroll_id')
      .innerJoin('payroll_providers as pp', 'pp.id', 'p.payroll_provider_id')
      .select('x.pay_date')
      .where('pp.sandbox', '=', false)
      .where('x.superseded_at', 'is', null)
      .orderBy('x.pay_date', 'desc')
      .limit(1)
      .executeTakeFirst(),
  ]);
  const dates = [attempt?.pay_date, exception?.pay_date].filter((date): date is string => date !== undefined);
  return dates.sort().at(-1);
}

/**
 * The exceptions held now (a later reconciliation supersedes the ones it found different) for a pay
 * date on live payrolls, or on one payroll; with the payroll's and employer's names, and the employee's
 * name (as the payroll spells it, else the person's; decision 0015) and works number, so finance can
 * find the person on the payroll's own records.
 */
export async function listCurrentExceptionsOn(db: Executor, payDate: string, payrollId?: string) {
  let query = db
    .selectFrom('reconciliation_exceptions as x')
    .innerJoin('payrolls as p', 'p.id', 'x.payroll_id')
    .innerJoin('payroll_providers as pp', 'pp.id', 'p.payroll_provider_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .leftJoin('employments as em', (join) => join.onRef('em.employee_id', '=', 'x.employee_id').onRef('em.payroll_id', '=', 'x.payroll_id'))
    .select([
      'x.id',
      'x.payroll_id',
      'p.name as payroll',
      'e.name as employer',
      'x.employee_id',
      employmentNameSql.as('employee_name'),
      'em.payroll_reference',
      'x.kind',
      'x.amount',
      'x.currency',
      'x.record_version',
      'x.detail',
      'x.created_at',
    ])
    .where('x.pay_date', '=', payDate)
    .where('x.superseded_at', 'is', null);
  // One payroll's (the pay date's page), sandbox or not; else every live payroll's.
  query = payrollId === undefined ? query.where('pp.sandbox', '=', false) : query.where('x.payroll_id', '=', payrollId);
  return query.orderBy('x.payroll_id').orderBy('x.kind').orderBy('x.created_at').orderBy('x.id').execute();
}

/** Billers' names by id, for pages listing many billers' payouts. */
export async function findClientNames(db: Executor, clientIds: readonly string[]): Promise<Map<string, string>> {
  if (clientIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('clients')
    .select(['id', 'name'])
    .where('id', 'in', [...new Set(clientIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

/**
 * A payout's items as its page shows them: each payment request's employee (the name as the payroll
 * spells it, else the person's; decision 0015), works number and deduction reference number, the
 * payroll and employer, and the mandate's reference when the biller gave one. In listPayoutItems' order.
 */
export async function listPayoutItemsNamed(db: Executor, payoutId: string) {
  return db
    .selectFrom('payout_items as i')
    .innerJoin('payment_requests as pr', 'pr.id', 'i.payment_request_id')
    .innerJoin('payrolls as p', 'p.id', 'pr.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .innerJoin('mandates as m', 'm.id', 'pr.mandate_id')
    .leftJoin('employments as em', (join) => join.onRef('em.employee_id', '=', 'pr.employee_id').onRef('em.payroll_id', '=', 'pr.payroll_id'))
    .select([
      'i.payment_request_id',
      'i.kind',
      'i.amount',
      'pr.employee_id',
      employmentNameSql.as('employee_name'),
      'em.payroll_reference',
      'em.deduction_reference_number',
      'p.name as payroll_name',
      'e.name as employer_name',
      'm.reference as mandate_reference',
    ])
    .where('i.payout_id', '=', payoutId)
    .orderBy('i.payment_request_id')
    .orderBy('i.kind', 'desc')
    .orderBy('i.id')
    .execute();
}
