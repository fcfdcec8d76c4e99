import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { sandboxPayrollIds } from '../../settlement/reports/reconciliation-report-repository.ts';

/**
 * Per pay date and currency, for the latest `payDates` pay dates a live payroll reconciled: requested,
 * deducted and collected, summed over collection attempts as the reconciliation summary sums them
 * (src/settlement/reports/reconciliation-report-repository.ts); received, the cash the employers sent
 * as matched to the pay date's remittances; and paid out, the pay date's ledger entries in payouts that
 * have not failed, as the three-way report counts them (three-way-report-repository.ts). The pay dates
 * come from the runs (few rows), so attempts, remittances and entries are read by their pay-date index
 * only for those dates, each summed once.
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
    .with('attempts', (qb) =>
      qb
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
        .groupBy(['ca.pay_date', 'ca.currency']),
    )
    .with('cash', (qb) =>
      qb
        .selectFrom('remittances as r')
        .select(['r.pay_date', 'r.currency', sql<number>`sum(r.received)::bigint`.as('received')])
        .where('r.pay_date', 'in', recent)
        .where('r.payroll_id', 'not in', sandboxPayrollIds(db))
        .groupBy(['r.pay_date', 'r.currency']),
    )
    .with('paid', (qb) =>
      qb
        .selectFrom('ledger_entries as le')
        .innerJoin('collection_attempts as ca', 'ca.id', 'le.collection_attempt_id')
        .leftJoin('payouts as po', 'po.id', 'le.payout_id')
        .select(['le.pay_date', 'le.currency', sql<number>`sum(le.amount)::bigint`.as('paid_out')])
        .where('le.pay_date', 'in', recent)
        .where('le.payout_id', 'is not', null)
        // A failed payout hands its entries back; one being failed does not count in between.
        .where(sql<boolean>`po.status is distinct from 'failed'`)
        .where('ca.payroll_id', 'not in', sandboxPayrollIds(db))
        .groupBy(['le.pay_date', 'le.currency']),
    )
    .selectFrom('attempts as a')
    .leftJoin('cash as c', (join) => join.onRef('c.pay_date', '=', 'a.pay_date').onRef('c.currency', '=', 'a.currency'))
    .leftJoin('paid as p', (join) => join.onRef('p.pay_date', '=', 'a.pay_date').onRef('p.currency', '=', 'a.currency'))
    .select([
      'a.pay_date',
      'a.currency',
      'a.requested',
      'a.deducted',
      'a.collected',
      sql<number>`coalesce(c.received, 0)::bigint`.as('received'),
      sql<number>`coalesce(p.paid_out, 0)::bigint`.as('paid_out'),
    ])
    .orderBy('a.pay_date')
    .orderBy('a.currency')
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
