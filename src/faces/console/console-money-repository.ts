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
 * The exceptions held now (none superseded) for a pay date on live payrolls, with the employer and
 * the employee's payroll reference so finance can find the person on the payroll's own records.
 */
export async function listCurrentExceptionsOn(db: Executor, payDate: string) {
  return db
    .selectFrom('reconciliation_exceptions as x')
    .innerJoin('payrolls as p', 'p.id', 'x.payroll_id')
    .innerJoin('payroll_providers as pp', 'pp.id', 'p.payroll_provider_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .select((eb) => [
      'x.id',
      'x.payroll_id',
      'e.name as employer',
      'x.employee_id',
      eb
        .selectFrom('employments as em')
        .select('em.payroll_reference')
        .whereRef('em.employee_id', '=', 'x.employee_id')
        .whereRef('em.payroll_id', '=', 'x.payroll_id')
        .orderBy('em.created_at', 'desc')
        .limit(1)
        .as('payroll_reference'),
      'x.kind',
      'x.amount',
      'x.currency',
      'x.detail',
      'x.created_at',
    ])
    .where('x.pay_date', '=', payDate)
    .where('x.superseded_at', 'is', null)
    .where('pp.sandbox', '=', false)
    .orderBy('x.payroll_id')
    .orderBy('x.kind')
    .orderBy('x.created_at')
    .execute();
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
