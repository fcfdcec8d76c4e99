import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';

/** The latest nightly run that finished with no failed pay date: when it finished and how long it took. */
export async function findLastSuccessfulNightlyRun(db: Executor): Promise<{ finishedAt: Date; durationSeconds: number } | undefined> {
  const row = await db
    .selectFrom('nightly_runs as r')
    .select(['r.finished_at', sql<number>`extract(epoch from (r.finished_at - r.started_at))::float8`.as('duration_seconds')])
    .where('r.finished_at', 'is not', null)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('nightly_run_pay_dates as p').select('p.run_id').whereRef('p.run_id', '=', 'r.id').where('p.outcome', '=', 'failed'))),
    )
    .orderBy('r.finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row?.finished_at) return undefined;
  return { finishedAt: new Date(row.finished_at), durationSeconds: Number(row.duration_seconds) };
}

export type UnfinishedDeliveryStatus = 'pending' | 'failed' | 'abandoned';

/** Webhook deliveries not (yet) delivered, per status; delivered ones are the bulk and are not counted. */
export async function countUnfinishedWebhookDeliveries(db: Executor): Promise<Record<UnfinishedDeliveryStatus, number>> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('status', 'in', ['pending', 'failed', 'abandoned'])
    .groupBy('status')
    .execute();
  const counts: Record<UnfinishedDeliveryStatus, number> = { pending: 0, failed: 0, abandoned: 0 };
  for (const row of rows) counts[row.status as UnfinishedDeliveryStatus] = Number(row.count);
  return counts;
}

export type ReconciliationExceptionKind = 'unexpected_employee' | 'over_deduction' | 'missing_confirmation';

/** Current reconciliation exceptions (those no later reconciliation superseded), per kind. */
export async function countCurrentReconciliationExceptions(db: Executor): Promise<Record<ReconciliationExceptionKind, number>> {
  const rows = await db
    .selectFrom('reconciliation_exceptions')
    .select(['kind', (eb) => eb.fn.countAll<string>().as('count')])
    .where('superseded_at', 'is', null)
    .groupBy('kind')
    .execute();
  const counts: Record<ReconciliationExceptionKind, number> = { unexpected_employee: 0, over_deduction: 0, missing_confirmation: 0 };
  for (const row of rows) counts[row.kind] = Number(row.count);
  return counts;
}
