import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { PayrollLockFacts } from '../../cycle/nightly/go-live-readiness.ts';
import { payrollLockFactColumns } from '../../cycle/nightly/go-live-readiness-repository.ts';
import { findPayrollNames } from '../../directory/payrolls/directory-repository.ts';
import type {
  AttentionRemittanceStatus,
  Counted,
  CreditFact,
  FailedPayDateFact,
  FailedPayoutRunFact,
  FailedReconciliationFact,
  PayrollName,
  PendingPayoutFact,
  RemittanceFact,
  StuckRunFact,
} from './attention.ts';
import type { JobSubjectNames } from './job-subject.ts';

// What the attention list reads: per kind, the oldest rows up to a limit and how many there are in
// all (`count(*) over ()`), names joined in the same statement. Runs are looked for within a window
// of recent days, so the cost follows recent work, not the whole history.

interface Window {
  /** The most rows of a kind to read. */
  limit: number;
  /** Runs started on or after this instant are looked at; older failures have been dealt with or are history. */
  since: Date;
}

type WithTotal<T> = T & { total: number };

function counted<T>(rows: ReadonlyArray<WithTotal<T>>): Counted<T> {
  return { rows: rows.map(({ total: _total, ...row }) => row as T), total: rows[0]?.total ?? 0 };
}

/** Pay dates whose latest nightly attempt failed and that are still not locked. */
export async function listFailedPayDates(db: Executor, window: Window): Promise<Counted<FailedPayDateFact>> {
  const { rows } = await sql<WithTotal<FailedPayDateFact>>`
    select latest.run_id, latest.run_date::text, latest.payroll_id, latest.pay_date::text, latest.failure_reason,
           latest.since, e.name as employer, p.name as payroll, (count(*) over ())::int as total
      from (select distinct on (rp.payroll_id, rp.pay_date)
                   rp.run_id, r.run_date, rp.payroll_id, rp.pay_date, rp.outcome, rp.failure_reason,
                   coalesce(rp.resolved_at, r.started_at) as since
              from nightly_run_pay_dates rp
              join nightly_runs r on r.id = rp.run_id
             where r.started_at >= ${window.since}
             order by rp.payroll_id, rp.pay_date, r.started_at desc) latest
      join pay_dates pd on pd.payroll_id = latest.payroll_id and pd.pay_date = latest.pay_date
      join payrolls p on p.id = latest.payroll_id
      join employers e on e.id = p.employer_id
     where latest.outcome = 'failed' and pd.locked_at is null
     order by latest.since, e.name, p.name
     limit ${window.limit}
  `.execute(db);
  return counted(rows);
}

/** Unfinished nightly runs and reconciliations that have made no progress since `stuckBefore`. */
export async function listStuckRuns(db: Executor, window: Window & { stuckBefore: Date }): Promise<Counted<StuckRunFact>> {
  const { rows } = await sql<{
    kind: 'nightly' | 'reconciliation';
    run_id: string;
    date: string;
    payroll_id: string | null;
    employer: string | null;
    payroll: string | null;
    since: Date;
    started_at: Date;
    total: number;
  }>`
    with stuck as (
      select 'nightly' as kind, r.id as run_id, r.run_date::text as date, null::uuid as payroll_id, r.started_at,
             coalesce((select max(rp.resolved_at) from nightly_run_pay_dates rp where rp.run_id = r.id), r.started_at) as since
        from nightly_runs r
       where r.finished_at is null and r.started_at >= ${window.since}
      union all
      select 'reconciliation', rr.id, rr.pay_date::text, rr.payroll_id, rr.started_at, rr.started_at
        from reconciliation_runs rr
       where rr.finished_at is null and rr.started_at >= ${window.since}
    )
    select stuck.*, e.name as employer, p.name as payroll, (count(*) over ())::int as total
      from stuck
      left join payrolls p on p.id = stuck.payroll_id
      left join employers e on e.id = p.employer_id
     where stuck.since < ${window.stuckBefore}
     order by stuck.since
     limit ${window.limit}
  `.execute(db);
  return {
    rows: rows.map((row) => ({
      kind: row.kind,
      run_id: row.run_id,
      date: row.date,
      payroll: row.payroll_id === null ? null : { payroll_id: row.payroll_id, employer: row.employer ?? '', payroll: row.payroll ?? '' },
      since: row.since,
      started_at: row.started_at,
    })),
    total: rows[0]?.total ?? 0,
  };
}

/** Payroll pay dates whose latest reconciliation failed. */
export async function listFailedReconciliations(db: Executor, window: Window): Promise<Counted<FailedReconciliationFact>> {
  const { rows } = await sql<WithTotal<FailedReconciliationFact>>`
    select latest.id as run_id, latest.payroll_id, latest.pay_date::text, latest.failure_reason, latest.since,
           e.name as employer, p.name as payroll, (count(*) over ())::int as total
      from (select distinct on (payroll_id, pay_date) id, payroll_id, pay_date, outcome, failure_reason,
                   coalesce(finished_at, started_at) as since
              from reconciliation_runs
             where started_at >= ${window.since} and finished_at is not null
             order by payroll_id, pay_date, started_at desc) latest
      join payrolls p on p.id = latest.payroll_id
      join employers e on e.id = p.employer_id
     where latest.outcome = 'failed'
     order by latest.since, e.name, p.name
     limit ${window.limit}
  `.execute(db);
  return counted(rows);
}

/** The latest finished payout run, when it failed or could not pay some billers; a later good run clears it. */
export async function findFailedLatestPayoutRun(db: Executor, window: Pick<Window, 'since'>): Promise<FailedPayoutRunFact | null> {
  const row = await db
    .selectFrom('payout_runs')
    .select(['id as run_id', sql<string>`run_date::text`.as('run_date'), 'failure_reason', 'failed_groups', 'outcome', 'finished_at', 'started_at'])
    .where('finished_at', 'is not', null)
    .where('started_at', '>=', window.since)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row || (row.outcome !== 'failed' && (row.failed_groups ?? 0) === 0)) return null;
  return { run_id: row.run_id, run_date: row.run_date, failure_reason: row.failure_reason, failed_groups: row.failed_groups ?? 0, since: row.finished_at ?? row.started_at };
}

export interface DuePayDateLockFacts extends PayrollName, PayrollLockFacts {
  pay_date: string;
  lock_date: string;
}

/**
 * Unlocked pay dates from their payroll's go-live date on, with lock dates from `from` through
 * `through`, of payrolls lacking what locking needs (the facts lockHoldReasons reads, narrowed here
 * so a night of thousands of ready payrolls reads nothing).
 */
export async function listDuePayDatesOfPayrollsNotReady(db: Executor, range: { from: string; through: string; limit: number }): Promise<Counted<DuePayDateLockFacts>> {
  const { rows } = await sql<WithTotal<DuePayDateLockFacts>>`
    select due.*, (count(*) over ())::int as total from (
      select pd.pay_date::text, pd.lock_date::text, p.id as payroll_id, e.name as employer, p.name as payroll, ${payrollLockFactColumns}
        from pay_dates pd
        join payrolls p on p.id = pd.payroll_id
        join employers e on e.id = p.employer_id
        join payroll_providers pp on pp.id = p.payroll_provider_id
       where pd.locked_at is null and not pp.sandbox
         and p.go_live_date is not null and pd.pay_date >= p.go_live_date
         and pd.lock_date between ${range.from}::date and ${range.through}::date
    ) due
     where not (due."hasActiveCollectionAccount" and due."employerOptIn" = 'opted_in')
     order by due.lock_date, due.employer, due.payroll
     limit ${range.limit}
  `.execute(db);
  return counted(rows);
}

/** Credits with money not yet matched, open or held for a person; the oldest import first. */
export async function listUnmatchedCreditsOldestFirst(db: Executor, limit: number): Promise<Counted<CreditFact>> {
  const { rows } = await sql<WithTotal<CreditFact>>`
    select id, (amount - matched_amount)::int8 as unmatched, amount, currency, debtor_name, remittance_information,
           booking_date::text, state, created_at as since, (count(*) over ())::int as total
      from bank_credits
     where matched_amount < amount and state in ('open', 'held')
     order by created_at, booking_date, id
     limit ${limit}
  `.execute(db);
  return counted(rows);
}

/**
 * Remittances short, over, late or in shortfall: the oldest `limit` of each status, and each status's
 * total. A late one is late from the day after its due date; the others since they last changed.
 */
export async function listRemittancesNeedingAttention(
  db: Executor,
  limit: number,
): Promise<{ rows: RemittanceFact[]; totals: Partial<Record<AttentionRemittanceStatus, number>> }> {
  const { rows } = await sql<WithTotal<RemittanceFact> & { position: number }>`
    select * from (
      select r.payroll_id, r.pay_date::text, r.currency, r.status, r.expected, r.received, r.shortfall, r.due_date::text,
             r.payment_reference, e.name as employer, p.name as payroll,
             case when r.status = 'late' then coalesce(r.overdue_at, (r.due_date + 1)::timestamptz) else r.updated_at end as since,
             (count(*) over (partition by r.status))::int as total,
             row_number() over (partition by r.status order by r.pay_date, r.updated_at) as position
        from remittances r
        join payrolls p on p.id = r.payroll_id
        join employers e on e.id = p.employer_id
       where r.status in ('short', 'over', 'late', 'shortfall')
    ) ranked
     where position <= ${limit}
     order by since
  `.execute(db);
  const totals: Partial<Record<AttentionRemittanceStatus, number>> = {};
  for (const row of rows) totals[row.status] = row.total;
  return { rows: rows.map(({ total: _total, position: _position, ...row }) => row), totals };
}

/** Payouts made and not yet marked paid or failed: the bank has not answered for them. */
export async function listPayoutsAwaitingBank(db: Executor, limit: number): Promise<Counted<PendingPayoutFact>> {
  const { rows } = await sql<WithTotal<PendingPayoutFact>>`
    select o.id, c.name as biller, o.amount, o.currency, o.payout_date::text, o.reference, f.sequence as payment_file_sequence,
           o.created_at as since, (count(*) over ())::int as total
      from payouts o
      join clients c on c.id = o.biller_client_id
      left join payment_file_payouts fp on fp.payout_id = o.id
      left join payment_files f on f.id = fp.payment_file_id
     where o.status = 'pending'
     order by o.created_at, c.name
     limit ${limit}
  `.execute(db);
  return counted(rows);
}

/** The names failed jobs' payloads point at, read in three statements whatever the number of jobs. */
export async function findJobSubjectNames(
  db: Executor,
  ids: { payrollIds: readonly string[]; rerunIds: readonly string[]; deliveryIds: readonly string[] },
): Promise<JobSubjectNames> {
  const [reruns, deliveries] = await Promise.all([
    ids.rerunIds.length === 0
      ? []
      : db
          .selectFrom('reruns')
          .select(['id', 'payroll_id', sql<string>`pay_date::text`.as('pay_date')])
          .where('id', 'in', ids.rerunIds)
          .execute(),
    ids.deliveryIds.length === 0
      ? []
      : db
          .selectFrom('webhook_deliveries as d')
          .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
          .innerJoin('clients as c', 'c.id', 'w.biller_client_id')
          .innerJoin('events as ev', 'ev.id', 'd.event_id')
          .select(['d.id', 'c.name as biller', 'w.url', 'ev.type as event_type'])
          .where('d.id', 'in', ids.deliveryIds)
          .execute(),
  ]);
  const payrolls = await findPayrollNames(db, [...ids.payrollIds, ...reruns.map((rerun) => rerun.payroll_id)]);
  return {
    payrolls,
    reruns: new Map(reruns.map((row) => [row.id, { payroll_id: row.payroll_id, pay_date: row.pay_date }])),
    deliveries: new Map(deliveries.map((row) => [row.id, { biller: row.biller, url: row.url, event_type: row.event_type }])),
  };
}
