import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

/**
 * What a re-run request needs to know: whether the payroll and its pay date exist, its current
 * snapshot and that snapshot's status, and whether money of the pay date is in a payout (pending or
 * paid: a failed payout's entries go back to the pool, their payout_id cleared).
 */
export async function findRerunTarget(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('payrolls as p')
    .leftJoin('pay_dates as pd', (join) => join.onRef('pd.payroll_id', '=', 'p.id').on('pd.pay_date', '=', payDate))
    .leftJoin('deduction_snapshots as s', (join) =>
      join.onRef('s.payroll_id', '=', 'pd.payroll_id').onRef('s.pay_date', '=', 'pd.pay_date').on('s.status', '<>', 'superseded'),
    )
    .select([
      'pd.pay_date',
      's.id as current_snapshot_id',
      's.status as current_snapshot_status',
      sql<boolean>`exists (
        select 1 from collection_attempts ca join ledger_entries le on le.collection_attempt_id = ca.id
         where ca.payroll_id = p.id and ca.pay_date = pd.pay_date and le.payout_id is not null)`.as('paid_out'),
    ])
    .where('p.id', '=', payrollId)
    .executeTakeFirst();
}

/**
 * The open re-run of the pay date, opened by this call when there is none. It is returned row-locked:
 * the re-run's lock takes the same row lock first, so a request holding the row lock is reflected in
 * that lock, and a request arriving while the re-run holds it waits for the re-run to commit, finds
 * it completed (no longer open) and opens the next re-run.
 */
export async function openOrJoinRerun(db: Executor, payrollId: string, payDate: string): Promise<{ id: string; opened: boolean }> {
  return (
    db
      .insertInto('reruns')
      .values({ payroll_id: payrollId, pay_date: payDate })
      .onConflict((conflict) =>
        conflict
          .columns(['payroll_id', 'pay_date'])
          .where('completed_at', 'is', null)
          // A no-op update, there for the row lock it takes.
          .doUpdateSet({ payroll_id: (eb) => eb.ref('excluded.payroll_id') }),
      )
      // xmax is 0 on a row version this statement inserted, the transaction id on one it updated.
      .returning(['id', sql<boolean>`xmax = 0`.as('opened')])
      .executeTakeFirstOrThrow()
  );
}

export async function insertRerunRequest(db: Executor, request: { rerun_id: string; reason: string; requested_by: string }) {
  return db.insertInto('rerun_requests').values(request).returning(['id', 'requested_at']).executeTakeFirstOrThrow();
}

/** Every request a re-run answers, first first. */
export async function listRerunRequests(db: Executor, rerunId: string) {
  return db
    .selectFrom('rerun_requests')
    .select(['id', 'reason', 'requested_by', 'requested_at'])
    .where('rerun_id', '=', rerunId)
    .orderBy('requested_at')
    .orderBy('id')
    .execute();
}

/** Row-locks the re-run so two deliveries of its job cannot both supersede the snapshot. */
export async function rowLockRerun(db: Executor, rerunId: string) {
  return db.selectFrom('reruns').selectAll().where('id', '=', rerunId).forUpdate().executeTakeFirst();
}

export async function findRerun(db: Executor, rerunId: string) {
  return db.selectFrom('reruns').selectAll().where('id', '=', rerunId).executeTakeFirst();
}

export async function completeRerun(db: Executor, rerunId: string, snapshots: { previous: string; current: string }): Promise<void> {
  await db
    .updateTable('reruns')
    .set({ previous_snapshot_id: snapshots.previous, new_snapshot_id: snapshots.current, completed_at: new Date() })
    .where('id', '=', rerunId)
    .execute();
}
