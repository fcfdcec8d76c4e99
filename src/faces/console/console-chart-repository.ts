import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { sandboxPayrollIds } from '../../settlement/reports/reconciliation-report-repository.ts';

/**
 * Requested, deducted and collected per pay date and currency, summed over collection attempts as the
 * reconciliation summary sums them (src/settlement/reports/reconciliation-report-repository.ts), for the latest
 * `payDates` pay dates a live payroll reconciled. The pay dates come from the runs (few rows), so the
 * attempts are read by their pay-date index only for those dates.
 */
export async function listPayDateTotals(db: Executor, payDates: number) {
  const recent = db
    .selectFrom('reconciliation_runs')
    .select('pay_date')
    .distinct()
    .where('outcome', '=', 'completed')
    .where('payroll_id', 'not in', sandboxPayrollIds(db))
    .orderBy('pay_date', 'desc')
    .limit(payDates);
  return db
    .selectFrom('collection_attempts as ca')
    .select([
      'ca.pay_date',
      'ca.currency',
      sql<number>`sum(ca.requested_amount)::bigint`.as('requested'),
      sql<number>`coalesce(sum(ca.deducted_amount), 0)::bigint`.as('deducted'),
      sql<number>`sum(ca.collected_amount)::bigint`.as('collected'),
    ])
    .where('ca.pay_date', 'in', recent)
    .where('ca.payroll_id', 'not in', sandboxPayrollIds(db))
    .groupBy(['ca.pay_date', 'ca.currency'])
    .orderBy('ca.pay_date')
    .orderBy('ca.currency')
    .execute();
}

/** The latest finished nightly runs, oldest first, with their duration in whole milliseconds. */
export async function listNightlyRunDurations(db: Executor, runs: number) {
  const latest = await db
    .selectFrom('nightly_runs')
    .select(['id', 'run_date', 'started_at', sql<number>`(extract(epoch from finished_at - started_at) * 1000)::bigint`.as('duration_ms')])
    .where('finished_at', 'is not', null)
    .orderBy('started_at', 'desc')
    .limit(runs)
    .execute();
  return latest.reverse();
}

/** The live payrolls with the most current reconciliation exceptions raised since `since`, most first. */
export async function listPayrollsByExceptions(db: Executor, since: Date, payrolls: number) {
  return db
    .selectFrom('reconciliation_exceptions as x')
    .innerJoin('payrolls as p', 'p.id', 'x.payroll_id')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .select(['p.id as payroll_id', 'p.name as payroll_name', 'e.name as employer_name', (eb) => eb.fn.countAll<number>().as('exceptions')])
    .where('x.superseded_at', 'is', null)
    .where('x.created_at', '>=', since)
    .where('x.payroll_id', 'not in', sandboxPayrollIds(db))
    .groupBy(['p.id', 'p.name', 'e.name'])
    .orderBy('exceptions', 'desc')
    .orderBy('p.name')
    .limit(payrolls)
    .execute();
}
