import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { RemittanceStatus } from '../../platform/db/tables.ts';

/** One payroll pay date's figures, in minor units of `currency`. */
export interface ThreeWayRow {
  payroll_id: string;
  employer: string;
  payroll: string;
  pay_date: string;
  currency: string;
  payment_reference: string;
  requested: number;
  /** What payroll reported it deducted; null until it has reported. */
  deducted: number | null;
  expected: number;
  received: number;
  remittance_status: RemittanceStatus;
  due_date: string;
  /** Ledger entries made payable (by cash received, or by trust in the employer). */
  funded: number;
  /** Ledger entries in payouts that have not failed (a failed payout releases its entries). */
  paid_out: number;
  /** Ledger entries collected but not yet funded: waiting for the employer's cash. */
  held_back: number;
  /** Paid out beyond what was received, after the bank reversed a credit already paid out: owed back. */
  shortfall: number;
}

/**
 * One row per remittance of the pay date (every payroll pay date that requested a payment has one)
 * with its ledger entries' totals: funded, paid out (in a payout that has not failed) and held back
 * (collected but neither funded nor paid). Sandbox payrolls are left out: their money is simulated.
 * One set-based query: the entries of the pay date are aggregated once, not per payroll.
 */
export async function findThreeWayRows(db: Executor, payDate: string): Promise<ThreeWayRow[]> {
  const result = await sql<ThreeWayRow>`
    with entries as (
      select ca.payroll_id,
             coalesce(sum(le.amount) filter (where le.funded_at is not null), 0)::bigint as funded,
             -- A failed payout hands its entries back (payout_id cleared); the status check keeps a
             -- payout being failed from counting as paid out in between. A payout still being assembled
             -- has no row yet: its entries count as paid out, as its payments already show.
             coalesce(sum(le.amount) filter (where le.payout_id is not null and po.status is distinct from 'failed'), 0)::bigint as paid_out,
             coalesce(sum(le.amount) filter (where le.funded_at is null and le.payout_id is null), 0)::bigint as held_back
      from collection_attempts ca
      join ledger_entries le on le.collection_attempt_id = ca.id
      left join payouts po on po.id = le.payout_id
      where ca.pay_date = ${payDate}::date
      group by ca.payroll_id
    )
    select r.payroll_id, e.name as employer, p.name as payroll, to_char(r.pay_date, 'YYYY-MM-DD') as pay_date,
           r.currency, r.payment_reference, r.requested, r.deducted, r.expected, r.received,
           r.status as remittance_status, to_char(r.due_date, 'YYYY-MM-DD') as due_date,
           coalesce(x.funded, 0)::bigint as funded, coalesce(x.paid_out, 0)::bigint as paid_out,
           coalesce(x.held_back, 0)::bigint as held_back, r.shortfall
    from remittances r
    join payrolls p on p.id = r.payroll_id
    join employers e on e.id = r.employer_id
    join payroll_providers pp on pp.id = p.payroll_provider_id and not pp.sandbox
    left join entries x on x.payroll_id = r.payroll_id
    where r.pay_date = ${payDate}::date
    order by e.name, p.name, r.payroll_id
  `.execute(db);
  return result.rows;
}
