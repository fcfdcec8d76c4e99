import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

// Each kind of run keeps its own table; history reads the newest of each and merges them in the service.

export async function listNightlyRuns(db: Executor, limit: number) {
  return db
    .selectFrom('nightly_runs as r')
    .leftJoin('nightly_run_pay_dates as d', 'd.run_id', 'r.id')
    .select([
      'r.id',
      'r.run_date',
      'r.trigger',
      'r.triggered_by',
      'r.pay_dates_due',
      'r.started_at',
      'r.finished_at',
      sql<number>`count(d.run_id) filter (where d.outcome = 'locked')::int`.as('locked'),
      sql<number>`count(d.run_id) filter (where d.outcome = 'already_locked')::int`.as('already_locked'),
      sql<number>`count(d.run_id) filter (where d.outcome = 'failed')::int`.as('failed'),
      sql<number>`count(d.run_id) filter (where d.outcome = 'skipped')::int`.as('skipped'),
      sql<number>`count(d.run_id) filter (where d.outcome = 'pending')::int`.as('pending'),
    ])
    .groupBy('r.id')
    .orderBy('r.started_at', 'desc')
    .limit(limit)
    .execute();
}

/** With each payroll's name and its employer's, which people read (the id stays for support). */
export async function listNightlyRunPayDates(db: Executor, runId: string) {
  return db
    .selectFrom('nightly_run_pay_dates as d')
    .innerJoin('payrolls as p', 'p.id', 'd.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .selectAll('d')
    .select(['p.name as payroll_name', 'e.name as employer_name'])
    .where('d.run_id', '=', runId)
    .orderBy('d.payroll_id')
    .orderBy('d.pay_date')
    .execute();
}

/** With the payroll's and its employer's names, and the snapshot versions the re-run went from and to. */
export async function listReruns(db: Executor, limit: number) {
  return db
    .selectFrom('reruns as r')
    .innerJoin('payrolls as p', 'p.id', 'r.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .leftJoin('deduction_snapshots as previous', 'previous.id', 'r.previous_snapshot_id')
    .leftJoin('deduction_snapshots as created', 'created.id', 'r.new_snapshot_id')
    .leftJoin('rerun_requests as q', 'q.rerun_id', 'r.id')
    .select([
      'r.id',
      'r.payroll_id',
      'p.name as payroll_name',
      'e.name as employer_name',
      'r.pay_date',
      'r.requested_at',
      'r.previous_snapshot_id',
      'previous.snapshot_version as previous_snapshot_version',
      'r.new_snapshot_id',
      'created.snapshot_version as new_snapshot_version',
      'r.completed_at',
      sql<number>`count(q.id)::int`.as('requests'),
    ])
    .groupBy(['r.id', 'p.name', 'e.name', 'previous.snapshot_version', 'created.snapshot_version'])
    .orderBy('r.requested_at', 'desc')
    .limit(limit)
    .execute();
}

export async function findRerun(db: Executor, rerunId: string) {
  return db
    .selectFrom('reruns as r')
    .innerJoin('payrolls as p', 'p.id', 'r.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .selectAll('r')
    .select(['p.name as payroll_name', 'e.name as employer_name'])
    .where('r.id', '=', rerunId)
    .executeTakeFirst();
}

export async function listRerunRequests(db: Executor, rerunId: string) {
  return db.selectFrom('rerun_requests').selectAll().where('rerun_id', '=', rerunId).orderBy('requested_at').execute();
}

/** With the payroll's currency, which the collected figure is in, and the payroll's and its employer's names. */
export async function listReconciliationRuns(db: Executor, limit: number) {
  return db
    .selectFrom('reconciliation_runs as r')
    .innerJoin('payrolls as p', 'p.id', 'r.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .selectAll('r')
    .select(['p.currency', 'p.name as payroll_name', 'e.name as employer_name'])
    .orderBy('r.started_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(limit)
    .execute();
}

export async function findReconciliationRun(db: Executor, runId: string) {
  return db
    .selectFrom('reconciliation_runs as r')
    .innerJoin('payrolls as p', 'p.id', 'r.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .selectAll('r')
    .select(['p.name as payroll_name', 'e.name as employer_name'])
    .where('r.id', '=', runId)
    .executeTakeFirst();
}

export async function listPayoutRuns(db: Executor, limit: number) {
  return db.selectFrom('payout_runs').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function findPayoutRun(db: Executor, runId: string) {
  return db.selectFrom('payout_runs').selectAll().where('id', '=', runId).executeTakeFirst();
}

/** With each biller's name, which people read (the id stays for support). */
export async function listPayoutsByIds(db: Executor, payoutIds: readonly string[]) {
  if (payoutIds.length === 0) return [];
  return db
    .selectFrom('payouts as o')
    .innerJoin('clients as c', 'c.id', 'o.biller_client_id')
    .select(['o.id', 'o.biller_client_id', 'c.name as biller_name', 'o.currency', 'o.amount', 'o.reference', 'o.status', 'o.payout_date'])
    .where('o.id', 'in', payoutIds)
    .orderBy('o.biller_client_id')
    .orderBy('o.currency')
    .execute();
}
