import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import { insertPaymentUpdatedEvents } from '../payments/payment-event-repository.ts';
import { MANDATE_STATUSES_ENDING_COLLECTION } from '../mandates/mandate-limitations.ts';
import { PAYMENT_REQUEST_LIFECYCLE } from '../payments/payment-transitions.ts';
import { SCHEDULE_LIFECYCLE } from '../schedules/schedule-transitions.ts';
import { fromStatusesSql, statusListSql } from '../db/status-transitions-sql.ts';
import { SNAPSHOT_LIFECYCLE } from './snapshot-transitions.ts';
import { timeOrderedUuidSql } from '../db/time-ordered-uuid-sql.ts';

export async function payrollExists(db: Executor, payrollId: string): Promise<boolean> {
  return (await db.selectFrom('payrolls').select('id').where('id', '=', payrollId).executeTakeFirst()) !== undefined;
}

export interface LockContext {
  current: { id: string; snapshot_version: number; employee_count: number; total_amount: number; currency: string } | null;
  collectionAccount: { account_number: string; sort_code: string; account_holder_name: string } | null;
}

/** What a lock needs to know besides the pay date, in one round trip: the current snapshot and where payroll pays the money. */
export async function findLockContext(db: Executor, payrollId: string, payDate: string, currency: string): Promise<LockContext> {
  const result = await sql<{
    id: string | null;
    snapshot_version: number | null;
    employee_count: number | null;
    total_amount: number | null;
    currency: string | null;
    account_number: string | null;
    sort_code: string | null;
    account_holder_name: string | null;
  }>`
    /* prepared: find_lock_context */
    select s.id, s.snapshot_version, s.employee_count, s.total_amount, s.currency,
           a.account_number, a.sort_code, a.account_holder_name
    from (values (1)) as one (n)
    left join deduction_snapshots s on s.payroll_id = ${payrollId} and s.pay_date = ${payDate}::date and s.status <> 'superseded'
    left join collection_accounts a on a.currency = ${currency} and a.active
  `.execute(db);
  const row = result.rows[0]!;
  return {
    current:
      row.id === null
        ? null
        : { id: row.id, snapshot_version: row.snapshot_version!, employee_count: row.employee_count!, total_amount: row.total_amount!, currency: row.currency! },
    collectionAccount:
      row.account_number === null ? null : { account_number: row.account_number, sort_code: row.sort_code!, account_holder_name: row.account_holder_name! },
  };
}

export interface LockInput {
  snapshotId: string;
  payrollId: string;
  payDate: string;
  payPeriod: string;
  currency: string;
  collectionAccount: { account_number: string; sort_code: string; account_holder_name: string };
  /** Payment requests already instructed for this pay date by the snapshot a re-run replaces. */
  supersededSnapshotId: string | null;
  /** MAX_PAYMENT_AMOUNT_MINOR: a pending request over it is refused (failed) rather than asked of payroll. */
  maxPaymentAmount: number;
  /** MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR: caps what one mandate asks on this pay date, like a mandate's own limit. */
  maxMandateAmountPerPayDate: number;
  /** The largest total the snapshot may have: what is left out beyond it waits for the next pay date. */
  maxSnapshotTotal: number;
  /** status_reason of a request refused for its amount. */
  refusalReason: string;
}

export interface LockedSnapshotHeader {
  snapshotVersion: number;
  totalAmount: number;
  employeeCount: number;
  /** How many payment requests this lock moved to `instructed` (each with its event). */
  paymentsInstructed: number;
  /**
   * Pending requests refused for an amount over the per-request limit: moved to `failed` (or
   * `partially_collected` when an earlier attempt collected some), each with its event.
   */
  paymentsRefused: number;
  /** Pending requests left pending because the snapshot total would otherwise pass its largest. */
  paymentsHeldBack: number;
  /**
   * On a re-run, requests the superseded snapshot had instructed (and this pay date has not
   * reconciled) that the new snapshot no longer asks for: moved back to `pending`, each with its event.
   */
  paymentsReleased: number;
  /** Of those released, the ones whose mandate has ended: cancelReleasedPayments cancels them next. */
  releasedOfEndedMandates: string[];
}

/**
 * Locks one payroll pay date in a single statement: chooses the payment requests due on or
 * before it (new pending ones, plus on a re-run those the superseded snapshot had instructed and
 * those already reconciled, which keep what they were asked), refuses pending ones whose amount is
 * over the per-request limit, applies mandate limitations (the mandate's own and the service's
 * per-pay-date one) in due-date order with window sums, keeps the snapshot total within what the
 * data response carries exactly, aggregates per employee, writes
 * the snapshot (the next version), its lines, the line-to-payment links and the requested payment,
 * moves newly included requests to `instructed` and refused ones to `failed` (erroring their
 * schedules), and on a re-run moves back to `pending` the instructed requests the new version no
 * longer asks for (released), all with their payment_request.updated events, and marks the pay
 * date locked.
 *
 * One request's bad amount never fails the statement: every sum is numeric until it is known to
 * fit a bigint, and no total it returns or stores can pass `maxSnapshotTotal`.
 */
export async function lockDeductionData(db: Executor, input: LockInput): Promise<LockedSnapshotHeader> {
  const result = await sql<{
    snapshot_version: number;
    total_amount: number;
    employee_count: number;
    payments_instructed: number;
    payments_refused: number;
    payments_held_back: number;
    payments_released: number;
    released_of_ended_mandates: string[];
  }>`
    /* prepared: lock_deduction_data */
    with settled as (
      -- On a re-run, what this pay date has already reconciled: payroll was asked for it and answered,
      -- so it is history, carried into the new version exactly as it was asked (never re-instructed,
      -- never re-capped, never dropped), and the data request, the instruction file and the
      -- reconciliation report go on telling the same story.
      select a.payment_request_id as id, pr.mandate_id, pr.employee_id, pr.biller_client_id, a.requested_amount as requested
      from collection_attempts a join payment_requests pr on pr.id = a.payment_request_id
      where ${input.supersededSnapshotId}::uuid is not null
        and a.payroll_id = ${input.payrollId} and a.pay_date = ${input.payDate}::date
    ),
    queued as (
      -- The lock queue's rows for this payroll up to this pay date (pending_payment_requests: every
      -- pending request has one; a request that has left pending may still have one), whether the request
      -- is still pending (null when it is gone), and the version of the queue row read (the transaction
      -- that wrote it).
      select q.payment_request_id as id, q.xmin as queue_row_version, pr.status = 'pending' as pending
      from pending_payment_requests q
      left join payment_requests pr on pr.id = q.payment_request_id
      where q.payroll_id = ${input.payrollId} and q.target_pay_date <= ${input.payDate}::date
    ),
    chosen as (
      -- Two branches rather than one OR: the pending requests of the lock queue, and on a re-run the
      -- superseded snapshot's links not reconciled yet. They cannot overlap: every pending request a
      -- snapshot includes leaves pending in the same statement, and a re-run asks again only for what
      -- is still owed on this pay date, instructed or partly collected (whatever failed, was collected
      -- or was cancelled since stays out).
      select pr.id, pr.mandate_id, pr.employee_id, pr.biller_client_id, pr.status, pr.due_date, pr.created_at, pr.amount, pr.collected_amount
      from queued q join payment_requests pr on pr.id = q.id
      where q.pending and pr.id not in (select id from settled)
      union all
      select pr.id, pr.mandate_id, pr.employee_id, pr.biller_client_id, pr.status, pr.due_date, pr.created_at, pr.amount, pr.collected_amount
      from deduction_line_payments lp join payment_requests pr on pr.id = lp.payment_request_id
      where lp.snapshot_id = ${input.supersededSnapshotId}::uuid and pr.status in ('instructed', 'partially_collected')
        and pr.id not in (select id from settled)
    ),
    over_limit as (
      -- Stored before the limit existed or written around the API: payroll is never asked for it,
      -- whatever its mandate's state. What payroll was already asked for (a re-run's) stays.
      select pr.id
      from queued q join payment_requests pr on pr.id = q.id
      where q.pending and pr.amount > ${input.maxPaymentAmount}::bigint
        and pr.id not in (select id from settled)
    ),
    settled_per_mandate as (
      select mandate_id, sum(requested) as requested from settled group by mandate_id
    ),
    candidates as (
      select c.id, c.mandate_id, c.employee_id, c.biller_client_id, c.status, c.due_date, c.created_at,
             c.amount - c.collected_amount as remaining,
             -- least() skips nulls: the service's per-pay-date limit applies to every mandate.
             least(m.max_amount_per_pay_date, ${input.maxMandateAmountPerPayDate}::bigint) as max_amount_per_pay_date,
             m.max_total_amount
      from chosen c
      join mandates m on m.id = c.mandate_id
      where m.status = 'active'
        and (m.valid_from is null or m.valid_from <= ${input.payDate}::date)
        and (m.valid_to is null or m.valid_to >= ${input.payDate}::date)
        and not (c.status = 'pending' and c.amount > ${input.maxPaymentAmount}::bigint)
    ),
    mandate_usage as (
      -- Lifetime caps count what was collected plus what other pay dates have instructed and not settled.
      select pr.mandate_id,
             sum(pr.collected_amount) + coalesce(sum(pr.amount - pr.collected_amount) filter (
               where pr.status = 'instructed' and pr.id not in (select id from candidates)), 0) as used
      from payment_requests pr
      where pr.mandate_id in (select mandate_id from candidates where max_total_amount is not null)
      group by pr.mandate_id
    ),
    ordered as (
      select c.*,
             sum(c.remaining) over (partition by c.mandate_id order by c.due_date nulls last, c.created_at, c.id)
               - c.remaining as ahead,
             -- What this pay date already asked of the mandate for settled requests counts against its cap.
             least(c.max_amount_per_pay_date - coalesce(sm.requested, 0),
                   coalesce(c.max_total_amount - coalesce(u.used, 0), 9223372036854775807)) as cap
      from candidates c
      left join mandate_usage u on u.mandate_id = c.mandate_id
      left join settled_per_mandate sm on sm.mandate_id = c.mandate_id
    ),
    capped as (
      select id, employee_id, biller_client_id, status, least(remaining, greatest(0, cap - ahead))::bigint as requested
      from ordered
      where least(remaining, greatest(0, cap - ahead)) > 0
    ),
    room as (
      -- What the snapshot may still take once its history (a re-run's settled requests) is in, and
      -- whether everything capped fits: the usual case, which then needs no sort.
      select ${input.maxSnapshotTotal}::bigint - coalesce((select sum(requested) from settled), 0) as left_for_capped,
             coalesce((select sum(requested) from capped), 0) as capped_total
    ),
    admitted as (
      select id, employee_id, biller_client_id, status, requested from capped
      where (select capped_total <= left_for_capped from room)
      union all
      -- Past the largest total the data response carries exactly, requests are taken smallest first
      -- (those a re-run carries, which payroll was already asked for, before any new one), and the
      -- rest stay pending for the next pay date: the outliers wait, every other request goes ahead.
      select id, employee_id, biller_client_id, status, requested
      from (select c.*, sum(c.requested) over (order by c.status = 'pending', c.requested, c.id) as running from capped c) w
      where (select capped_total > left_for_capped from room)
        and w.running <= (select left_for_capped from room)
    ),
    included as (
      select id, employee_id, biller_client_id, status, requested from admitted
      union all
      select id, employee_id, biller_client_id, 'settled', requested from settled where requested > 0
    ),
    per_employee as (
      select i.employee_id, e.payroll_reference, e.deduction_reference_number, sum(i.requested)::bigint as requested_amount
      from included i
      join employments e on e.employee_id = i.employee_id and e.payroll_id = ${input.payrollId}
      group by i.employee_id, e.payroll_reference, e.deduction_reference_number
    ),
    snapshot as (
      insert into deduction_snapshots (id, payroll_id, pay_date, pay_period, snapshot_version, currency, total_amount, employee_count)
      select ${input.snapshotId}::uuid, ${input.payrollId}::uuid, ${input.payDate}::date, ${input.payPeriod},
             (select coalesce(max(snapshot_version), 0) + 1 from deduction_snapshots
              where payroll_id = ${input.payrollId} and pay_date = ${input.payDate}::date),
             ${input.currency},
             coalesce((select sum(requested_amount) from per_employee), 0)::bigint,
             (select count(*) from per_employee)
      returning id, snapshot_version, total_amount, employee_count
    ),
    lines as (
      insert into deduction_lines (id, snapshot_id, employee_id, payroll_reference, requested_amount, currency, payment_reference)
      -- deductionPaymentReference (src/instructions/payment-reference.ts): 'SD' and the number, at least 8 digits.
      select ${timeOrderedUuidSql}, ${input.snapshotId}::uuid, employee_id, payroll_reference, requested_amount, ${input.currency},
             'SD' || lpad(deduction_reference_number::text, greatest(8, length(deduction_reference_number::text)), '0')
      from per_employee
      returning id, employee_id
    ),
    links as (
      insert into deduction_line_payments (snapshot_id, line_id, payment_request_id, requested_amount)
      select ${input.snapshotId}::uuid, l.id, i.id, i.requested
      from included i join lines l on l.employee_id = i.employee_id
    ),
    billers as (
      -- Who hears of this pay date's remittance (listBillersOfPayDates): the billers of the links above.
      insert into snapshot_billers (snapshot_id, biller_client_id)
      select distinct ${input.snapshotId}::uuid, i.biller_client_id
      from included i join lines l on l.employee_id = i.employee_id
    ),
    remittance as (
      insert into requested_payments (snapshot_id, payment_reference, payment_amount, currency, account_number, sort_code, account_holder_name)
      -- The reference an earlier snapshot version of this pay date gave the employer, when one did
      -- (a re-run, including of a pay date locked before references were zero-padded): the employer
      -- may already have paid with it. Otherwise remittancePaymentReference
      -- (src/instructions/payment-reference.ts): 'SDR', YYMMDD, 'P' and the payroll's number, 8 digits
      -- (the identity column's maxvalue keeps it within 8; greatest() would never cut a longer one).
      select s.id,
             coalesce(
               (select earlier.payment_reference
                from deduction_snapshots prior join requested_payments earlier on earlier.snapshot_id = prior.id
                where prior.payroll_id = ${input.payrollId} and prior.pay_date = ${input.payDate}::date
                order by prior.snapshot_version desc limit 1),
               'SDR' || to_char(${input.payDate}::date, 'YYMMDD') || 'P'
                 || lpad(p.remittance_reference_number::text, greatest(8, length(p.remittance_reference_number::text)), '0')),
             s.total_amount, ${input.currency}, ${input.collectionAccount.account_number},
             ${input.collectionAccount.sort_code}, ${input.collectionAccount.account_holder_name}
      from snapshot s join payrolls p on p.id = ${input.payrollId} where s.total_amount > 0
    ),
    locked as (
      update pay_dates set locked_at = now(), updated_at = now()
      where payroll_id = ${input.payrollId} and pay_date = ${input.payDate}::date
    ),
    instructed as (
      update payment_requests pr
      set status = 'instructed', attempts = pr.attempts + 1, version = pr.version + 1, updated_at = now()
      from included i
      where pr.id = i.id and i.status = 'pending' and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, 'instructed')})
      returning pr.*
    ),
    refused as (
      -- What an earlier attempt collected of a carried request stays collected: that one ends partly so.
      update payment_requests pr
      set status = case when pr.collected_amount > 0 then 'partially_collected' else 'failed' end,
          status_reason = ${input.refusalReason}, version = pr.version + 1, updated_at = now()
      -- An array of ids, not a join: whatever the statistics say, the (usually empty) refused set
      -- drives the lookup and the pay date's requests are never scanned once per refused row.
      where pr.id = any(array(select id from over_limit))
        and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, ['partially_collected', 'failed'], ['pending'])})
      returning pr.*
    ),
    released as (
      -- statusLeftOutOfRerun (mandate-limitations.ts). On a re-run, what the superseded snapshot
      -- instructed for this pay date and the new version no longer asks for (its mandate stopped
      -- collecting, or has no room left under a cap or the total): payroll will not be asked for it,
      -- so it must not stay instructed, where nothing would ever settle it and lifetime caps would go
      -- on counting it. It goes back to pending, as a carried shortfall does, for its next pay date;
      -- the instruction withdrawn before any answer is not counted as an attempt. Partly collected
      -- ones are carried, and what this pay date reconciled (settled) is kept as it was asked.
      update payment_requests pr
      set status = 'pending', attempts = greatest(pr.attempts - 1, 0), version = pr.version + 1, updated_at = now()
      from deduction_line_payments lp
      where lp.snapshot_id = ${input.supersededSnapshotId}::uuid and pr.id = lp.payment_request_id
        and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, 'pending', ['instructed'])})
        and pr.id not in (select id from settled)
        and pr.id not in (select id from admitted)
      returning pr.*
    ),
    errored_schedules as (
      -- A schedule with a failed instalment is errored, as when reconciliation fails one. Driven
      -- by the refused rows (usually none), so schedules are looked up by key, never scanned.
      update schedules s set status = 'errored', version = s.version + 1, updated_at = now()
      from (select distinct schedule_id from refused where schedule_id is not null) r
      where s.id = r.schedule_id and s.status in (${fromStatusesSql(SCHEDULE_LIFECYCLE, 'errored')})
    ),
    changed as (select * from instructed union all select * from refused union all select * from released),
    events as (${insertPaymentUpdatedEvents('changed')}),
    dequeued as (
      -- Queue rows of the requests that leave pending here, and of those that had left it already (or
      -- are gone). Those left pending (held back, mandate not collecting, no room under a cap) stay
      -- queued. Released requests are queued again by the database's trigger. Only the row version this
      -- statement read: a request another transaction has just brought back to pending re-wrote its row
      -- (the trigger), and the delete, rechecking the newer version, leaves it.
      delete from pending_payment_requests q
      using queued x
      where q.payment_request_id = x.id and q.xmin = x.queue_row_version
        and (not coalesce(x.pending, false)
             or x.id in (select id from instructed) or x.id in (select id from refused))
    )
    select s.snapshot_version, s.total_amount, s.employee_count,
           (select count(*) from instructed)::int as payments_instructed,
           (select count(*) from refused)::int as payments_refused,
           (select count(*) from capped)::int - (select count(*) from admitted)::int as payments_held_back,
           (select count(*) from released)::int as payments_released,
           -- statusLeftOutOfRerun: those whose mandate has ended are cancelled next (cancelReleasedPayments).
           array(select r.id from released r join mandates m on m.id = r.mandate_id
                 where m.status in (${statusListSql(MANDATE_STATUSES_ENDING_COLLECTION)}) order by r.id)::text[] as released_of_ended_mandates
    from snapshot s
  `.execute(db);
  const row = result.rows[0]!;
  return {
    snapshotVersion: row.snapshot_version,
    totalAmount: row.total_amount,
    employeeCount: row.employee_count,
    paymentsInstructed: row.payments_instructed,
    paymentsRefused: row.payments_refused,
    paymentsHeldBack: row.payments_held_back,
    paymentsReleased: row.payments_released,
    releasedOfEndedMandates: row.released_of_ended_mandates,
  };
}

/**
 * Cancels requests a re-run has just released to pending (lockDeductionData's releasedOfEndedMandates)
 * because their mandate has ended, as the mandate's ending cancelled its other pending requests: one
 * statement, each with its payment_request.updated event. Its own statement, after the lock: a row
 * cannot change twice in one, and each change (instructed -> pending -> cancelled) is its own version.
 */
export async function cancelReleasedPayments(db: Executor, paymentIds: readonly string[]): Promise<number> {
  if (paymentIds.length === 0) return 0;
  const result = await sql<{ cancelled: number }>`
    with cancelled as (
      update payment_requests pr
      set status = 'cancelled', cancelled_at = now(), version = pr.version + 1, updated_at = now()
      where pr.id = any(${[...paymentIds]}::uuid[])
        and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, 'cancelled', ['pending'])})
      returning pr.*
    ),
    events as (${insertPaymentUpdatedEvents('cancelled')})
    select count(*)::int as cancelled from cancelled
  `.execute(db);
  return result.rows[0]!.cancelled;
}

/** Retires the current snapshot first: only one snapshot per pay date may be current at a time. */
export async function supersedeSnapshot(db: Executor, snapshotId: string): Promise<void> {
  await db
    .updateTable('deduction_snapshots')
    .set({ status: 'superseded', superseded_at: new Date() })
    .where('id', '=', snapshotId)
    .where('status', 'in', SNAPSHOT_LIFECYCLE.fromStatuses('superseded'))
    .execute();
}

export async function linkSupersededSnapshot(db: Executor, snapshotId: string, supersededBy: string): Promise<void> {
  await db.updateTable('deduction_snapshots').set({ superseded_by: supersededBy }).where('id', '=', snapshotId).execute();
}
