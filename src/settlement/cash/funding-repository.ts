import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { PayoutFunding } from '../../platform/db/tables.ts';

/**
 * Funds at once every unfunded, unpaid, settled entry whose employer is trusted (payout funding
 * `deducted`, its own or the installation's) or whose payroll is a sandbox's (its money is simulated).
 */
export async function fundTrustedEntries(db: Executor, cutoff: string, defaultFunding: PayoutFunding): Promise<number> {
  const result = await sql`
    update ledger_entries le set funded_at = now()
    from collection_attempts ca
    join payrolls p on p.id = ca.payroll_id
    join employers e on e.id = p.employer_id
    join payroll_providers pp on pp.id = p.payroll_provider_id
    where le.collection_attempt_id = ca.id
      and le.funded_at is null and le.payout_id is null and le.pay_date <= ${cutoff}::date
      and (pp.sandbox or coalesce(e.payout_funding, ${defaultFunding}) = 'deducted')
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Payroll pay dates of employers funded by cash that have unfunded, unpaid, settled entries, with what
 * their remittance has received and what of it is already funded (a reversal counting only once it is
 * not riding in an unpaid payout): a select of (payroll_id, pay_date, received, funded).
 */
function payDatesAwaitingFundingSql(cutoff: string, defaultFunding: PayoutFunding) {
  return sql`
    select w.payroll_id, w.pay_date, coalesce(r.received, 0)::numeric as received,
           -- A reversal in a payout the bank has not yet paid frees no cash: if that payout fails, the reversal
           -- is released, and a collection funded against it meanwhile would be paid beyond what was received.
           coalesce((select sum(le.amount) from ledger_entries le join collection_attempts ca on ca.id = le.collection_attempt_id
                     left join payouts po on po.id = le.payout_id
                     where ca.payroll_id = w.payroll_id and ca.pay_date = w.pay_date and le.funded_at is not null
                       and (le.amount >= 0 or le.payout_id is null or po.status = 'paid')), 0) as funded
    from (
      select distinct ca.payroll_id, ca.pay_date
      from ledger_entries le
      join collection_attempts ca on ca.id = le.collection_attempt_id
      join payrolls p on p.id = ca.payroll_id
      join employers e on e.id = p.employer_id
      join payroll_providers pp on pp.id = p.payroll_provider_id and not pp.sandbox
      where le.funded_at is null and le.payout_id is null and le.pay_date <= ${cutoff}::date
        and coalesce(e.payout_funding, ${defaultFunding}) = 'received'
    ) w
    left join remittances r on r.payroll_id = w.payroll_id and r.pay_date = w.pay_date
  `;
}

/** Amounts exact (numeric, read as BigInt): the caller judges each pay date's on its own. */
export interface PayDateAwaitingFunding {
  payroll_id: string;
  pay_date: string;
  received: bigint;
  funded: bigint;
}

/**
 * Funds at once every unfunded, unpaid, settled entry of the cash-funded payroll pay dates whose unused
 * received cash covers them all: fundsEveryEntry (funding-order.ts), in SQL, over what each payment
 * request's entries net. Returns how many entries it funded, and the pay dates it left (cash short),
 * with what they received and have funded, for listUnfundedEntries and fundableEntries to fund in order.
 */
export async function fundCoveredPayDates(db: Executor, cutoff: string, defaultFunding: PayoutFunding): Promise<{ entriesFunded: number; short: PayDateAwaitingFunding[] }> {
  const result = await sql<PayDateAwaitingFunding & { entries_funded: number }>`
    with awaiting as (${payDatesAwaitingFundingSql(cutoff, defaultFunding)}),
    unfunded as (
      select a.payroll_id, a.pay_date, le.id, le.payment_request_id, le.amount
      from awaiting a
      join collection_attempts ca on ca.payroll_id = a.payroll_id and ca.pay_date = a.pay_date
      join ledger_entries le on le.collection_attempt_id = ca.id
      where le.funded_at is null and le.payout_id is null and le.pay_date <= ${cutoff}::date
    ),
    request_nets as (
      select payroll_id, pay_date, payment_request_id, sum(amount) as net
      from unfunded group by payroll_id, pay_date, payment_request_id
    ),
    verdicts as (
      select a.payroll_id, a.pay_date, a.received, a.funded,
             not bool_or(n.net > 0) or sum(n.net) <= a.received - a.funded as covered
      from request_nets n join awaiting a on a.payroll_id = n.payroll_id and a.pay_date = n.pay_date
      group by a.payroll_id, a.pay_date, a.received, a.funded
    ),
    funded_now as (
      update ledger_entries le set funded_at = now()
      from unfunded u join verdicts v on v.payroll_id = u.payroll_id and v.pay_date = u.pay_date and v.covered
      where le.id = u.id and le.funded_at is null and le.payout_id is null
      returning 1
    )
    -- One row at least, to carry the count when no pay date is short.
    select v.payroll_id, to_char(v.pay_date, 'YYYY-MM-DD') as pay_date, v.received, v.funded,
           (select count(*) from funded_now)::int as entries_funded
    from (select 1) one left join verdicts v on not v.covered
    order by v.payroll_id, v.pay_date
  `.execute(db);
  return {
    entriesFunded: result.rows[0]?.entries_funded ?? 0,
    short: result.rows.filter((row) => row.payroll_id !== null).map(({ entries_funded: _, ...payDate }) => payDate),
  };
}

/**
 * The unfunded, unpaid entries of some payroll pay dates, settled by the cutoff, each with its payment
 * request's rank by age within its pay date: one reconciliation writes all of a pay date's entries at
 * once, so the request's creation is what tells which collection came first. Ranked here, to the
 * microsecond (a JavaScript Date keeps milliseconds, and requests made within one would tie). Many pay
 * dates in one statement: the pay dates short of cash (fundCoveredPayDates funds the others whole).
 */
export async function listUnfundedEntries(db: Executor, payDates: ReadonlyArray<{ payroll_id: string; pay_date: string }>, cutoff: string) {
  if (payDates.length === 0) return [];
  const result = await sql<{ payroll_id: string; pay_date: string; id: string; payment_request_id: string; amount: number; request_order: number }>`
    select ca.payroll_id, to_char(ca.pay_date, 'YYYY-MM-DD') as pay_date, le.id, le.payment_request_id, le.amount,
           (dense_rank() over (partition by ca.payroll_id, ca.pay_date order by pr.created_at, pr.id))::int as request_order
    from unnest(${payDates.map((p) => p.payroll_id)}::uuid[], ${payDates.map((p) => p.pay_date)}::date[]) as k(payroll_id, pay_date)
    join collection_attempts ca on ca.payroll_id = k.payroll_id and ca.pay_date = k.pay_date
    join ledger_entries le on le.collection_attempt_id = ca.id
    join payment_requests pr on pr.id = le.payment_request_id
    where le.funded_at is null and le.payout_id is null and le.pay_date <= ${cutoff}::date
  `.execute(db);
  return result.rows;
}

export async function markFunded(db: Executor, entryIds: readonly string[]): Promise<void> {
  if (entryIds.length === 0) return;
  await sql`update ledger_entries set funded_at = now() where id = any(${entryIds}::uuid[]) and funded_at is null`.execute(db);
}

/**
 * What a payroll pay date's entries add up to: funded, and paid out (attached to a payout, not
 * released). A reversal in a payout the bank has not yet confirmed does not lower what is paid out: if
 * that payout fails, the reversal is released while the collections it was netted against stay paid.
 */
export async function fundedAndPaidOut(db: Executor, payrollId: string, payDate: string) {
  const result = await sql<{ funded: number; paid_out: number }>`
    select coalesce(sum(le.amount) filter (where le.funded_at is not null), 0)::bigint as funded,
           coalesce(sum(le.amount) filter (where le.payout_id is not null and (le.amount >= 0 or po.status = 'paid')), 0)::bigint as paid_out
    from ledger_entries le join collection_attempts ca on ca.id = le.collection_attempt_id
    left join payouts po on po.id = le.payout_id
    where ca.payroll_id = ${payrollId}::uuid and ca.pay_date = ${payDate}::date
  `.execute(db);
  return result.rows[0]!;
}

/**
 * Takes funding back from entries not yet paid out, newest funded first, until what stays funded is
 * within `limit`: after an unmatch, cash no longer there must not be paid.
 */
export async function unfundDownTo(db: Executor, payrollId: string, payDate: string, limit: number): Promise<number> {
  const result = await sql`
    with entries as (
      select le.id, le.amount, le.payout_id,
             sum(le.amount) over (order by (le.payout_id is null), le.funded_at, le.id) as running
      from ledger_entries le join collection_attempts ca on ca.id = le.collection_attempt_id
      where ca.payroll_id = ${payrollId}::uuid and ca.pay_date = ${payDate}::date and le.funded_at is not null
    )
    update ledger_entries le set funded_at = null
    from entries e
    where le.id = e.id and e.payout_id is null and e.running > ${limit}
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The payroll pay dates whose entries a payout held (released ones included): what its failure changes. */
export async function listPayDatesOfPayout(db: Executor, payoutId: string): Promise<Array<{ payrollId: string; payDate: string }>> {
  const result = await sql<{ payroll_id: string; pay_date: string }>`
    select distinct ca.payroll_id, to_char(ca.pay_date, 'YYYY-MM-DD') as pay_date
    from payout_items i
    join ledger_entries le on le.id = i.ledger_entry_id
    join collection_attempts ca on ca.id = le.collection_attempt_id
    where i.payout_id = ${payoutId}::uuid
  `.execute(db);
  return result.rows.map((row) => ({ payrollId: row.payroll_id, payDate: row.pay_date }));
}
