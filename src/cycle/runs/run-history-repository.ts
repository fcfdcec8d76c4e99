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

export async function listNightlyRunPayDates(db: Executor, runId: string) {
  return db.selectFrom('nightly_run_pay_dates').selectAll().where('run_id', '=', runId).orderBy('payroll_id').orderBy('pay_date').execute();
}

export async function listReruns(db: Executor, limit: number) {
  return db
    .selectFrom('reruns as r')
    .leftJoin('rerun_requests as q', 'q.rerun_id', 'r.id')
    .select([
      'r.id',
      'r.payroll_id',
      'r.pay_date',
      'r.requested_at',
      'r.previous_snapshot_id',
      'r.new_snapshot_id',
      'r.completed_at',
      sql<number>`count(q.id)::int`.as('requests'),
    ])
    .groupBy('r.id')
    .orderBy('r.requested_at', 'desc')
    .limit(limit)
    .execute();
}

export async function findRerun(db: Executor, rerunId: string) {
  return db.selectFrom('reruns').selectAll().where('id', '=', rerunId).executeTakeFirst();
}

export async function listRerunRequests(db: Executor, rerunId: string) {
  return db.selectFrom('rerun_requests').selectAll().where('rerun_id', '=', rerunId).orderBy('requested_at').execute();
}

/** With the payroll's currency, which the collected figure is in. */
export async function listReconciliationRuns(db: Executor, limit: number) {
  return db
    .selectFrom('reconciliation_runs as r')
    .innerJoin('payrolls as p', 'p.id', 'r.payroll_id')
    .selectAll('r')
    .select('p.currency')
    .orderBy('r.started_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(limit)
    .execute();
}

export async function findReconciliationRun(db: Executor, runId: string) {
  return db.selectFrom('reconciliation_runs').selectAll().where('id', '=', runId).executeTakeFirst();
}

export async function listPayoutRuns(db: Executor, limit: number) {
  return db.selectFrom('payout_runs').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function findPayoutRun(db: Executor, runId: string) {
  return db.selectFrom('payout_runs').selectAll().where('id', '=', runId).executeTakeFirst();
}

export async function listPayoutsByIds(db: Executor, payoutIds: readonly string[]) {
  if (payoutIds.length === 0) return [];
  return db
    .selectFrom('payouts')
    .select(['id', 'biller_client_id', 'currency', 'amount', 'reference', 'status', 'payout_date'])
    .where('id', 'in', payoutIds)
    .orderBy('biller_client_id')
    .orderBy('currency')
    .execute();
}
