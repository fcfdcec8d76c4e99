import { sql } from 'kysely';
import type { Database, Executor } from '../../platform/db/connection.ts';
import type { ReconciliationRunTrigger } from '../../platform/db/tables.ts';

/** Committed on its own before the work starts, so a run killed midway stays visible as unfinished. */
export async function insertReconciliationRun(
  db: Database,
  run: { id: string; payrollId: string; payDate: string; trigger: ReconciliationRunTrigger; triggeredBy: string | null; final: boolean },
): Promise<void> {
  await db
    .insertInto('reconciliation_runs')
    .values({
      id: run.id,
      payroll_id: run.payrollId,
      pay_date: run.payDate,
      trigger: run.trigger,
      triggered_by: run.triggeredBy,
      final: run.final,
    })
    .execute();
}

export interface ReconciliationRunFigures {
  snapshotId: string | null;
  employees: number;
  collected: number;
  exceptions: number;
  ledgerEntries: number;
  paymentsUpdated: number;
}

/** Written in the reconciliation's own transaction: the row says completed only if the work committed. */
export async function completeReconciliationRun(trx: Executor, runId: string, figures: ReconciliationRunFigures): Promise<void> {
  await trx
    .updateTable('reconciliation_runs')
    .set({
      finished_at: sql<Date>`now()`,
      outcome: 'completed',
      snapshot_id: figures.snapshotId,
      employees: figures.employees,
      collected: figures.collected,
      exceptions: figures.exceptions,
      ledger_entries: figures.ledgerEntries,
      payments_updated: figures.paymentsUpdated,
    })
    .where('id', '=', runId)
    .execute();
}

export async function failReconciliationRun(db: Executor, runId: string, reason: string): Promise<void> {
  await db
    .updateTable('reconciliation_runs')
    .set({ finished_at: sql<Date>`now()`, outcome: 'failed', failure_reason: reason })
    .where('id', '=', runId)
    .where('finished_at', 'is', null)
    .execute();
}
