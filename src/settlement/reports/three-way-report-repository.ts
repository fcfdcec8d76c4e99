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
  /**
   * Of `held_back`, the payment requests netting more than zero that the cash received and not yet
   * used funds at the next payout run: whole requests, oldest first, as far as the cash goes
   * (fundableEntries, funding-order.ts).
   */
  fundable: number;
  /** Of `held_back`, the payment requests netting zero or less (reversals): funded at the next payout run whatever the cash. */
  netting: number;
  /** What the first held-back payment request the unused cash does not cover nets; 0 when none waits. */
  next_request: number;
}

/**
 * One row per remittance of the pay date (every payroll pay date that requested a payment has one)
 * with its ledger entries' totals: funded, paid out (in a payout that has not failed) and held back
 * (collected but neither funded nor paid). Sandbox payrolls are left out: their money is simulated.
 * Of what is held back, what the next payout run funds from the cash already received, as the funding
 * run decides it (funding-order.ts, funding-repository.ts), so the explanation can say where every
 * penny of the cash received is: funded, to be funded, or waiting for the next whole payment request.
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
             coalesce(sum(le.amount) filter (where le.funded_at is null and le.payout_id is null), 0)::bigint as held_back,
             -- The cash funding counts as used (payDatesAwaitingFundingSql, funding-repository.ts): a
             -- reversal riding in a payout the bank has not yet paid frees none.
             coalesce(sum(le.amount) filter (where le.funded_at is not null and (le.amount >= 0 or le.payout_id is null or po.status = 'paid')), 0) as cash_used
      from collection_attempts ca
      join ledger_entries le on le.collection_attempt_id = ca.id
      left join payouts po on po.id = le.payout_id
      where ca.pay_date = ${payDate}::date
      group by ca.payroll_id
    ),
    -- The held-back entries per payment request, netted: funding takes a request's entries together.
    held as (
      select ca.payroll_id, le.payment_request_id, pr.created_at, sum(le.amount) as net
      from collection_attempts ca
      join ledger_entries le on le.collection_attempt_id = ca.id
      join payment_requests pr on pr.id = le.payment_request_id
      where ca.pay_date = ${payDate}::date and le.funded_at is null and le.payout_id is null
      group by ca.payroll_id, le.payment_request_id, pr.created_at
    ),
    -- fundableEntries in SQL: the requests netting zero or less first, whatever the cash; then the others
    -- oldest first (creation, then id), each funded while the running total stays within the unused cash.
    -- Their nets are above zero, so the running total only climbs: those within it are a prefix.
    queue as (
      select h.payroll_id, h.payment_request_id, h.created_at, h.net,
             coalesce(sum(h.net) filter (where h.net <= 0) over (partition by h.payroll_id), 0)
               + sum(h.net) filter (where h.net > 0) over (partition by h.payroll_id order by h.created_at, h.payment_request_id) as running,
             r.received - coalesce(x.cash_used, 0) as unused
      from held h
      join remittances r on r.payroll_id = h.payroll_id and r.pay_date = ${payDate}::date
      left join entries x on x.payroll_id = h.payroll_id
    ),
    outlook as (
      select payroll_id,
             coalesce(sum(net) filter (where net > 0 and running <= unused), 0)::bigint as fundable,
             coalesce(sum(net) filter (where net <= 0), 0)::bigint as netting,
             coalesce((array_agg(net order by created_at, payment_request_id) filter (where net > 0 and running > unused))[1], 0)::bigint as next_request
      from queue
      group by payroll_id
    )
    select r.payroll_id, e.name as employer, p.name as payroll, to_char(r.pay_date, 'YYYY-MM-DD') as pay_date,
           r.currency, r.payment_reference, r.requested, r.deducted, r.expected, r.received,
           r.status as remittance_status, to_char(r.due_date, 'YYYY-MM-DD') as due_date,
           coalesce(x.funded, 0)::bigint as funded, coalesce(x.paid_out, 0)::bigint as paid_out,
           coalesce(x.held_back, 0)::bigint as held_back, r.shortfall,
           coalesce(o.fundable, 0)::bigint as fundable, coalesce(o.netting, 0)::bigint as netting,
           coalesce(o.next_request, 0)::bigint as next_request
    from remittances r
    join payrolls p on p.id = r.payroll_id
    join employers e on e.id = r.employer_id
    join payroll_providers pp on pp.id = p.payroll_provider_id and not pp.sandbox
    left join entries x on x.payroll_id = r.payroll_id
    left join outlook o on o.payroll_id = r.payroll_id
    where r.pay_date = ${payDate}::date
    order by e.name, p.name, r.payroll_id
  `.execute(db);
  return result.rows;
}
