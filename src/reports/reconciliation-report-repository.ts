import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';

export interface ReconciliationFilter {
  payDate: string;
  payrollId?: string | undefined;
  /** A biller's report holds only its own payment requests; absent for operators (everything). */
  billerClientId?: string | undefined;
}

/** Keyset position: the last row of the previous page, in (pay_date, payroll_id, attempt id) order. */
export interface ReconciliationPosition {
  payDate: string;
  payrollId: string;
  attemptId: string;
}

/**
 * One page of the reconciliation report: one row per payment request per collection attempt, with
 * everything a finance team needs beside it. Keyset paging keeps memory flat however large the pay
 * date is, and each page is an index range, not an OFFSET that rereads what came before.
 */
export async function findReconciliationPage(
  db: Executor,
  filter: ReconciliationFilter,
  after: ReconciliationPosition | null,
  limit: number,
) {
  let query = db
    .selectFrom('collection_attempts as ca')
    .innerJoin('payment_requests as pr', 'pr.id', 'ca.payment_request_id')
    .innerJoin('payrolls as p', 'p.id', 'ca.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .innerJoin('pay_dates as pd', (join) => join.onRef('pd.payroll_id', '=', 'ca.payroll_id').onRef('pd.pay_date', '=', 'ca.pay_date'))
    .innerJoin('clients as c', 'c.id', 'pr.biller_client_id')
    .select((eb) => [
      'ca.id as attempt_id',
      'ca.payroll_id',
      'e.name as employer',
      'ca.pay_date',
      'pd.pay_period',
      'pr.employee_id',
      'pr.mandate_id',
      'pr.id as payment_id',
      'c.name as biller',
      'pr.currency',
      'ca.requested_amount',
      'ca.deducted_amount',
      'ca.collected_amount',
      'ca.shortfall_amount',
      'ca.carried_to_pay_date',
      'ca.outcome',
      'ca.push_version',
      // An attempt's collection and a later reversal can leave in different payouts.
      eb
        .selectFrom('ledger_entries as le')
        .select(sql<string>`string_agg(distinct le.payout_id::text, ' ' order by le.payout_id::text)`.as('ids'))
        .whereRef('le.collection_attempt_id', '=', 'ca.id')
        .where('le.payout_id', 'is not', null)
        .as('payout_ids'),
    ])
    .where('ca.pay_date', '=', filter.payDate);
  if (filter.payrollId !== undefined) query = query.where('ca.payroll_id', '=', filter.payrollId);
  if (filter.billerClientId !== undefined) query = query.where('pr.biller_client_id', '=', filter.billerClientId);
  if (after) {
    query = query.where((eb) =>
      eb(eb.refTuple('ca.pay_date', 'ca.payroll_id', 'ca.id'), '>', eb.tuple(after.payDate, after.payrollId, after.attemptId)),
    );
  }
  return query.orderBy('ca.pay_date').orderBy('ca.payroll_id').orderBy('ca.id').limit(limit).execute();
}

export type ReconciliationRow = Awaited<ReturnType<typeof findReconciliationPage>>[number];

/**
 * Per payroll (and currency) totals of the same attempts as the detail report, plus the exceptions
 * recorded for the pay date. For operators only: exceptions are about a payroll, not about one biller.
 * One row per payroll, so built in one query.
 */
export async function findReconciliationSummary(db: Executor, filter: Omit<ReconciliationFilter, 'billerClientId'>) {
  const attemptPayroll = filter.payrollId === undefined ? sql`` : sql`and ca.payroll_id = ${filter.payrollId}::uuid`;
  const exceptionPayroll = filter.payrollId === undefined ? sql`` : sql`and payroll_id = ${filter.payrollId}::uuid`;
  const result = await sql<{
    payroll_id: string;
    employer: string;
    pay_date: string;
    currency: string;
    requested: number;
    deducted: number;
    collected: number;
    shortfall: number;
    exceptions: number;
  }>`
    with attempts as (
      select ca.payroll_id, pr.currency,
             sum(ca.requested_amount)::bigint as requested,
             coalesce(sum(ca.deducted_amount), 0)::bigint as deducted,
             sum(ca.collected_amount)::bigint as collected,
             sum(ca.shortfall_amount)::bigint as shortfall
      from collection_attempts ca
      join payment_requests pr on pr.id = ca.payment_request_id
      where ca.pay_date = ${filter.payDate}::date ${attemptPayroll}
      group by ca.payroll_id, pr.currency
    ),
    exceptions as (
      select payroll_id, count(*)::bigint as exceptions
      from reconciliation_exceptions
      where pay_date = ${filter.payDate}::date ${exceptionPayroll}
      group by payroll_id
    )
    select p.id as payroll_id, e.name as employer, ${filter.payDate}::date as pay_date,
           coalesce(a.currency, p.currency) as currency,
           coalesce(a.requested, 0)::bigint as requested, coalesce(a.deducted, 0)::bigint as deducted,
           coalesce(a.collected, 0)::bigint as collected, coalesce(a.shortfall, 0)::bigint as shortfall,
           coalesce(x.exceptions, 0)::bigint as exceptions
    from payrolls p
    join employers e on e.id = p.employer_id
    left join attempts a on a.payroll_id = p.id
    left join exceptions x on x.payroll_id = p.id
    where a.payroll_id is not null or x.payroll_id is not null
    order by p.id, currency
  `.execute(db);
  return result.rows;
}

export type ReconciliationSummaryRow = Awaited<ReturnType<typeof findReconciliationSummary>>[number];
