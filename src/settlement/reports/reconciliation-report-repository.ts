import { CompiledQuery, sql, type InferResult } from 'kysely';
import { employmentNameSql } from '../../directory/payrolls/employee-admin-repository.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';

export interface ReconciliationFilter {
  payDate: string;
  payrollId?: string | undefined;
  /** A biller's report holds only its own payment requests; absent for operators (everything). */
  billerClientId?: string | undefined;
}

/** Payrolls of sandbox providers: operators' reports and charts leave them out. */
export function sandboxPayrollIds(db: Executor) {
  return db
    .selectFrom('payrolls')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select('payrolls.id')
    .where('payroll_providers.sandbox', '=', true);
}

/**
 * The reconciliation report's query: one row per payment request per collection attempt of the pay date,
 * in (pay_date, payroll_id, attempt id) order. Only what differs per row: the payroll's and the biller's
 * names come from findReportLabels, since sending and parsing them a million times costs seconds.
 *
 * Shaped to stream: the attempts come in report order from their index and carry their payment's
 * identity, and each row's payouts are looked up by key (a lateral aggregate: a hash join would read
 * every ledger entry before the first row). The employee's name and works number are looked up by key
 * too, on the employment's unique (employee_id, payroll_id) index: the name as that payroll spells it,
 * else the person's (decision 0015). A cursor over it yields its first batch at once, and Postgres
 * produces the next batch while this process writes the previous one.
 */
function reconciliationQuery(db: Executor, filter: ReconciliationFilter) {
  let query = db
    .selectFrom('collection_attempts as ca')
    // An attempt's collection and a later reversal can leave in different payouts, so all are listed.
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('ledger_entries as le')
          // One id per entry, unordered: a DISTINCT ... ORDER BY aggregate starts a sort for every row,
          // seconds over a million rows, for attempts that almost always have one entry. payoutIdsCell
          // dedupes and orders the rare longer lists.
          .select(sql<string | null>`string_agg(le.payout_id::text, ' ')`.as('payout_ids'))
          .whereRef('le.collection_attempt_id', '=', 'ca.id')
          .where('le.payout_id', 'is not', null)
          .as('lp'),
      (join) => join.onTrue(),
    )
    // One employment per employee and payroll (a unique key); `limit 1` keeps it a lookup per row.
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('employments as em')
          // A works number is the employer's own key for its staff: operators and finance see it, a
          // biller's report (its own customers, whom it knows by name) leaves it empty.
          .select([
            employmentNameSql.as('employee_name'),
            filter.billerClientId === undefined ? 'em.payroll_reference' : sql<string | null>`null::text`.as('payroll_reference'),
          ])
          .whereRef('em.employee_id', '=', 'ca.employee_id')
          .whereRef('em.payroll_id', '=', 'ca.payroll_id')
          .limit(1)
          .as('who'),
      (join) => join.onTrue(),
    )
    .select([
      'ca.payroll_id',
      'ca.pay_date',
      'ca.employee_id',
      'ca.mandate_id',
      'ca.payment_request_id as payment_id',
      'ca.biller_client_id',
      'ca.currency',
      'ca.requested_amount',
      'ca.deducted_amount',
      'ca.collected_amount',
      'ca.shortfall_amount',
      'ca.carried_to_pay_date',
      'ca.outcome',
      'ca.push_version',
      'lp.payout_ids',
      'who.employee_name',
      'who.payroll_reference',
    ])
    .where('ca.pay_date', '=', filter.payDate);
  if (filter.payrollId !== undefined) query = query.where('ca.payroll_id', '=', filter.payrollId);
  // A biller's report is its own mode's by construction; the operators' report of the whole pay date
  // leaves sandbox payrolls out (few rows to exclude, so a hashed subplan).
  query = filter.billerClientId !== undefined ? query.where('ca.biller_client_id', '=', filter.billerClientId) : query.where('ca.payroll_id', 'not in', sandboxPayrollIds(db));
  return query.orderBy('ca.pay_date').orderBy('ca.payroll_id').orderBy('ca.id');
}

export interface ReportLabels {
  /** Per payroll with the pay date: its employer's name, its own name and the pay date's pay period. */
  payrolls: Map<string, { employer: string; payroll: string; payPeriod: string }>;
  /** Per biller: its name. */
  billers: Map<string, string>;
}

/**
 * The names the report prints beside ids. Bounded by the number of payrolls paying on the date and of
 * billers (thousands at most), not by the number of rows.
 */
export async function findReportLabels(db: Executor, filter: ReconciliationFilter): Promise<ReportLabels> {
  let payrollsQuery = db
    .selectFrom('pay_dates as pd')
    .innerJoin('payrolls as p', 'p.id', 'pd.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .select(['pd.payroll_id', 'pd.pay_period', 'e.name', 'p.name as payroll'])
    .where('pd.pay_date', '=', filter.payDate);
  if (filter.payrollId !== undefined) payrollsQuery = payrollsQuery.where('pd.payroll_id', '=', filter.payrollId);
  let billersQuery = db.selectFrom('clients').select(['id', 'name']).where('role', '=', 'biller');
  if (filter.billerClientId !== undefined) billersQuery = billersQuery.where('id', '=', filter.billerClientId);
  const [payrolls, billers] = await Promise.all([payrollsQuery.execute(), billersQuery.execute()]);
  return {
    payrolls: new Map(payrolls.map((row) => [row.payroll_id, { employer: row.name, payroll: row.payroll, payPeriod: row.pay_period }])),
    billers: new Map(billers.map((row) => [row.id, row.name])),
  };
}

export type ReconciliationRow = InferResult<ReturnType<typeof reconciliationQuery>>[number];

/** How long a reader may pause between batches before Postgres gives the cursor's connection back. */
const IDLE_READER_TIMEOUT = '120s';

export interface ReconciliationBatch {
  rows: ReconciliationRow[];
  /** The same object for every batch: read once, in the cursor's snapshot. */
  labels: ReportLabels;
}

/**
 * The report's rows in batches of `batchSize`, read through a server-side cursor (DECLARE / FETCH) in a
 * read-only repeatable-read transaction: Postgres runs the query once and this process holds at most two
 * batches, the one being consumed and the next, whose FETCH is sent before the current batch is handed
 * over so that Postgres reads while the consumer writes. Rows and labels come from one snapshot, so
 * every row has its labels and the totals agree even while reconciliation is running. Stopping early
 * (return() on the iterator, as a destroyed stream does) closes the cursor and releases the connection.
 */
export async function* streamReconciliationRows(db: Database, filter: ReconciliationFilter, batchSize: number): AsyncGenerator<ReconciliationBatch, void, undefined> {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`batch size must be a positive integer, got ${batchSize}`);
  const trx = await db.startTransaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute();
  let finished = false;
  let next: Promise<{ rows: ReconciliationRow[] }> | undefined;
  try {
    await sql`select set_config('idle_in_transaction_session_timeout', ${IDLE_READER_TIMEOUT}, true)`.execute(trx);
    const labels = await findReportLabels(trx, filter);
    const compiled = reconciliationQuery(trx, filter).compile();
    await trx.executeQuery(CompiledQuery.raw(`declare reconciliation_rows no scroll cursor for ${compiled.sql}`, [...compiled.parameters]));
    const fetchBatch = CompiledQuery.raw(`fetch forward ${batchSize} from reconciliation_rows`);
    next = trx.executeQuery<ReconciliationRow>(fetchBatch);
    for (;;) {
      const { rows } = await next;
      next = undefined;
      if (rows.length === 0) break;
      if (rows.length === batchSize) next = trx.executeQuery<ReconciliationRow>(fetchBatch);
      yield { rows, labels };
      if (next === undefined) break;
    }
    finished = true;
  } finally {
    // A prefetch still in flight when the consumer stops must settle before the transaction ends.
    await next?.catch(() => {});
    // Read only: commit and rollback are the same; a connection already lost must not mask the cause.
    await (finished ? trx.commit() : trx.rollback()).execute().catch(() => {});
  }
}

/**
 * Per payroll (and currency) totals of the same attempts as the detail report, what payroll reported it
 * deducted (the latest record per employee) and what is held as current exceptions, so finance can check
 * that collected + held = reported. For operators only: exceptions are about a payroll, not about one
 * biller; sandbox payrolls are left out. One row per payroll, so built in one query.
 */
export async function findReconciliationSummary(db: Executor, filter: Omit<ReconciliationFilter, 'billerClientId'>) {
  const attemptPayroll = filter.payrollId === undefined ? sql`` : sql`and ca.payroll_id = ${filter.payrollId}::uuid`;
  const exceptionPayroll = filter.payrollId === undefined ? sql`` : sql`and payroll_id = ${filter.payrollId}::uuid`;
  const recordPayroll = filter.payrollId === undefined ? sql`` : sql`and r.payroll_id = ${filter.payrollId}::uuid`;
  const result = await sql<{
    payroll_id: string;
    /** The payroll's name, for pages; the summary CSV's columns do not carry it. */
    payroll: string;
    employer: string;
    pay_date: string;
    currency: string;
    requested: bigint;
    deducted: bigint;
    collected: bigint;
    shortfall: bigint;
    exceptions: number;
    reported: bigint;
    held_over_deductions: bigint;
    held_unexpected_employees: bigint;
  }>`
    with attempts as (
      select ca.payroll_id, ca.currency,
             sum(ca.requested_amount) as requested,
             coalesce(sum(ca.deducted_amount), 0) as deducted,
             sum(ca.collected_amount) as collected,
             sum(ca.shortfall_amount) as shortfall
      from collection_attempts ca
      where ca.pay_date = ${filter.payDate}::date ${attemptPayroll}
      group by ca.payroll_id, ca.currency
    ),
    exceptions as (
      select payroll_id, count(*)::bigint as exceptions,
             coalesce(sum(amount) filter (where kind = 'over_deduction'), 0) as held_over_deductions,
             coalesce(sum(amount) filter (where kind = 'unexpected_employee'), 0) as held_unexpected_employees
      from reconciliation_exceptions
      where pay_date = ${filter.payDate}::date and superseded_at is null ${exceptionPayroll}
      group by payroll_id
    ),
    reported as (
      select latest.payroll_id, sum(latest.deduction_amount) as reported
      from (
        select distinct on (r.payroll_id, r.employee_id) r.payroll_id, r.deduction_amount
        from deduction_records r
        where r.pay_date = ${filter.payDate}::date and r.void_id is null ${recordPayroll}
        order by r.payroll_id, r.employee_id, r.version desc
      ) latest
      group by latest.payroll_id
    )
    select p.id as payroll_id, p.name as payroll, e.name as employer, ${filter.payDate}::date as pay_date,
           coalesce(a.currency, p.currency) as currency,
           coalesce(a.requested, 0)::numeric as requested, coalesce(a.deducted, 0)::numeric as deducted,
           coalesce(a.collected, 0)::numeric as collected, coalesce(a.shortfall, 0)::numeric as shortfall,
           coalesce(x.exceptions, 0)::bigint as exceptions,
           coalesce(r.reported, 0)::numeric as reported,
           coalesce(x.held_over_deductions, 0)::numeric as held_over_deductions,
           coalesce(x.held_unexpected_employees, 0)::numeric as held_unexpected_employees
    from payrolls p
    join employers e on e.id = p.employer_id
    join payroll_providers pp on pp.id = p.payroll_provider_id and not pp.sandbox
    left join attempts a on a.payroll_id = p.id
    left join exceptions x on x.payroll_id = p.id
    left join reported r on r.payroll_id = p.id
    where a.payroll_id is not null or x.payroll_id is not null or r.payroll_id is not null
    order by p.id, currency
  `.execute(db);
  return result.rows;
}

export type ReconciliationSummaryRow = Awaited<ReturnType<typeof findReconciliationSummary>>[number];
