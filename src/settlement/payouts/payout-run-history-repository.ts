import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { PayoutRunTrigger } from '../../platform/db/tables.ts';

/** Committed on its own before any group is paid, so a run killed midway stays visible as unfinished. */
export async function insertPayoutRun(
  db: Executor,
  run: { id: string; runDate: string; trigger: PayoutRunTrigger; triggeredBy: string | null; settledThrough: string },
): Promise<void> {
  await db
    .insertInto('payout_runs')
    .values({ id: run.id, run_date: run.runDate, trigger: run.trigger, triggered_by: run.triggeredBy, settled_through: run.settledThrough })
    .execute();
}

export interface PayoutRunFigures {
  payoutsMade: number;
  failedGroups: number;
  totalsByCurrency: Record<string, number>;
  groups: unknown[];
  failureReason: string | null;
}

/** Each group commits on its own, so the run is finished right after the last one. */
export async function finishPayoutRun(db: Executor, runId: string, figures: PayoutRunFigures): Promise<void> {
  await db
    .updateTable('payout_runs')
    .set({
      finished_at: sql<Date>`now()`,
      outcome: figures.failureReason === null ? 'completed' : 'failed',
      failure_reason: figures.failureReason,
      payouts_made: figures.payoutsMade,
      failed_groups: figures.failedGroups,
      totals_by_currency: JSON.stringify(figures.totalsByCurrency),
      groups: JSON.stringify(figures.groups),
    })
    .where('id', '=', runId)
    .execute();
}
