import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

// What the console's pay date page reads that no area asks for: one payroll pay date seen across
// snapshots, instruction files, provider pushes, confirmations and reconciliation.

export async function findPayDateHeading(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('pay_dates as d')
    .innerJoin('payrolls as p', 'p.id', 'd.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .select([
      'p.id as payroll_id',
      'p.name as payroll_name',
      'p.external_id as payroll_external_id',
      'e.name as employer_name',
      'd.pay_date',
      'd.pay_period',
      'd.lock_date',
      'd.first_locked_at',
      'd.locked_at',
    ])
    .where('d.payroll_id', '=', payrollId)
    .where('d.pay_date', '=', payDate)
    .executeTakeFirst();
}

/**
 * Every snapshot version, newest first, with what made it (the re-run that produced it, else the
 * nightly run that locked it) and its instruction file.
 */
export async function listSnapshotVersions(db: Executor, payrollId: string, payDate: string) {
  return (
    db
      .selectFrom('deduction_snapshots as s')
      .leftJoin('reruns as r', 'r.new_snapshot_id', 's.id')
      .leftJoin('nightly_run_pay_dates as n', 'n.snapshot_id', 's.id')
      .leftJoin('nightly_runs as nr', 'nr.id', 'n.run_id')
      .leftJoin('instruction_files as f', 'f.snapshot_id', 's.id')
      .select([
        's.id',
        's.snapshot_version',
        's.status',
        's.locked_at',
        's.employee_count',
        's.total_amount',
        's.currency',
        'r.id as rerun_id',
        'nr.id as nightly_run_id',
        'nr.trigger as nightly_trigger',
        'nr.triggered_by as nightly_triggered_by',
        'f.file_version',
        'f.file_name',
        'f.item_count',
      ])
      .where('s.payroll_id', '=', payrollId)
      .where('s.pay_date', '=', payDate)
      // A later nightly run can list a pay date already locked: the first run to see the snapshot made it.
      .distinctOn('s.snapshot_version')
      .orderBy('s.snapshot_version', 'desc')
      .orderBy('nr.started_at')
      .execute()
  );
}

/** A snapshot's requested amounts per currency, summed from its lines (the amounts asked of the payroll). */
export async function listSnapshotTotals(db: Executor, snapshotIds: readonly string[]) {
  if (snapshotIds.length === 0) return [];
  return db
    .selectFrom('deduction_lines')
    .select(['snapshot_id', 'currency', sql<string>`sum(requested_amount)::text`.as('total')])
    .where('snapshot_id', 'in', snapshotIds)
    .groupBy(['snapshot_id', 'currency'])
    .orderBy('snapshot_id')
    .orderBy('currency')
    .execute();
}

/** Provider pushes of each instruction file version of the pay date, counted by status. */
export async function countProviderPushes(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('employee_deduction_pushes as push')
    .innerJoin('instruction_items as item', 'item.id', 'push.instruction_item_id')
    .innerJoin('instruction_files as file', 'file.id', 'item.instruction_file_id')
    .select([
      'file.file_version',
      'push.status',
      sql<number>`count(*)::int`.as('pushes'),
      sql<Date | null>`max(push.sent_at)`.as('last_sent_at'),
      sql<string | null>`max(push.last_error)`.as('last_error'),
    ])
    .where('push.payroll_id', '=', payrollId)
    .where('file.pay_date', '=', payDate)
    .groupBy(['file.file_version', 'push.status'])
    .orderBy('file.file_version', 'desc')
    .orderBy('push.status')
    .execute();
}

/** With the name of the provider's client that submitted each one (null for an operator's import of the return file). */
export async function listConfirmations(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('confirmations as c')
    .leftJoin('clients as cl', 'cl.id', 'c.submitted_by_client_id')
    .select(['c.id', 'c.submitted_by_client_id', 'cl.name as submitted_by_client_name', 'c.submitted_by', 'c.employee_count', 'c.total_amount', 'c.currency', 'c.received_at'])
    .where('c.payroll_id', '=', payrollId)
    .where('c.pay_date', '=', payDate)
    .orderBy('c.received_at', 'desc')
    .execute();
}

/** Deduction records received for the pay date, by how they came (pushed per employee, or in a confirmation). */
export async function countDeductionRecords(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_records')
    .select([
      'source',
      sql<number>`count(*)::int`.as('records'),
      sql<number>`count(distinct employee_id)::int`.as('employees'),
      sql<number>`(count(*) filter (where void_id is not null))::int`.as('voided'),
      sql<Date | null>`max(received_at)`.as('last_received_at'),
    ])
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .groupBy('source')
    .orderBy('source')
    .execute();
}

export async function findLatestReconciliationRun(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('reconciliation_runs')
    .selectAll()
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Requested against deducted against collected, per currency, over the pay date's collection attempts. */
export async function sumCollectionAttempts(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('collection_attempts')
    .select([
      'currency',
      sql<number>`count(*)::int`.as('attempts'),
      sql<string>`coalesce(sum(requested_amount), 0)::text`.as('requested'),
      sql<string>`coalesce(sum(deducted_amount), 0)::text`.as('deducted'),
      sql<string>`coalesce(sum(collected_amount), 0)::text`.as('collected'),
      sql<string>`coalesce(sum(shortfall_amount), 0)::text`.as('shortfall'),
    ])
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .groupBy('currency')
    .orderBy('currency')
    .execute();
}

export async function listRerunsOfPayDate(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('reruns as r')
    .leftJoin('deduction_snapshots as s', 's.id', 'r.new_snapshot_id')
    .leftJoin('rerun_requests as q', 'q.rerun_id', 'r.id')
    .select([
      'r.id',
      'r.requested_at',
      'r.completed_at',
      's.snapshot_version as new_version',
      sql<number>`count(q.id)::int`.as('requests'),
      sql<string>`coalesce(string_agg(q.reason, '; ' order by q.requested_at), '')`.as('reasons'),
    ])
    .where('r.payroll_id', '=', payrollId)
    .where('r.pay_date', '=', payDate)
    .groupBy(['r.id', 's.snapshot_version'])
    .orderBy('r.requested_at', 'desc')
    .execute();
}

/** The snapshot version a re-run produced, for its progress page. */
export async function findSnapshotVersion(db: Executor, snapshotId: string) {
  return db.selectFrom('deduction_snapshots').select(['snapshot_version', 'employee_count', 'total_amount', 'currency']).where('id', '=', snapshotId).executeTakeFirst();
}
