import { sql, type RawBuilder } from 'kysely';
import { fixedSql } from '../../platform/db/fixed-sql.ts';
import { fromStatusesSql, statusListSql } from '../../platform/db/status-transitions-sql.ts';
import { timeOrderedUuidSql } from '../../platform/db/time-ordered-uuid-sql.ts';
import { DEDUCTION_REFERENCE_FORMAT, REMITTANCE_REFERENCE_FORMAT } from '../instructions/payment-reference.ts';
import {
  MANDATE_STATUS_COLLECTING,
  MANDATE_STATUSES_ENDING_COLLECTION,
  MANDATE_USAGE_OWED_STATUSES,
  MANDATE_VALIDITY,
} from '../../collections/mandates/mandate-limitations.ts';
import { insertPaymentUpdatedEvents } from '../../collections/payments/payment-event-repository.ts';
import { PAYMENT_REQUEST_LIFECYCLE } from '../../collections/payments/payment-transitions.ts';
import { REQUEST_ORDER } from '../../collections/payments/request-order.ts';
import { scheduleOutcomeOfRefusal } from '../../collections/schedules/schedule-outcome.ts';
import { SCHEDULE_LIFECYCLE } from '../../collections/schedules/schedule-transitions.ts';

// The lock of one payroll pay date as one statement (lockDeductionData runs it), written as the steps
// it takes: each function below is one sub-query (CTE) of the statement, or a small group, named as
// in the SQL, and lockDeductionDataStatement puts them together in the order they run. One statement,
// executed once per pay date: PostgreSQL plans it once per connection (a named prepared statement),
// and every row it reads or writes stays inside it.
//
// The steps, in order:
//   what the lock chooses      settled, queued, chosen, over_limit
//   mandate limitations        settled_per_mandate, candidates, mandate_usage, ordered, capped
//   the snapshot's total       room, admitted, included
//   what it writes             per_employee, snapshot, lines, links, billers, remittance, locked
//   the requests it moves      instructed, refused, released, errored_schedules, changed, events, dequeued
//   what it says               the final select (lockOutcome)
//
// Rules stated in TypeScript elsewhere are rendered here from their definitions where they are data
// (MANDATE_STATUS_COLLECTING, MANDATE_VALIDITY, MANDATE_USAGE_OWED_STATUSES, REQUEST_ORDER, the
// reference formats, the status transition tables); the arithmetic of the mandate caps is written in
// both languages and held together by test/cycle/snapshots/lock-mandate-limitations.test.ts. The statement
// as sent is checked in at src/cycle/snapshots/sql/lock_deduction_data.sql (`npm run sql` refreshes it).

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

/** The one row the lock statement returns. */
export interface LockStatementRow {
  snapshot_version: number;
  total_amount: number;
  employee_count: number;
  payments_instructed: number;
  payments_refused: number;
  payments_held_back: number;
  payments_released: number;
  released_of_ended_mandates: string[];
  errored_schedule_ids: string[];
}

/**
 * The lock statement, its steps in the order they run. Its text is the same on every call (the
 * values are parameters), as a prepared statement's must be.
 */
export function lockDeductionDataStatement(input: LockInput): RawBuilder<LockStatementRow> {
  const steps = [
    // What the lock chooses.
    settled(input),
    queued(input),
    chosen(input),
    overLimit(input),
    // Mandate limitations (src/collections/mandates/mandate-limitations.ts).
    settledPerMandate(),
    candidates(input),
    mandateUsage(),
    ordered(),
    capped(),
    // The snapshot's total.
    room(input),
    admitted(),
    included(),
    // What it writes.
    perEmployee(input),
    snapshot(input),
    lines(input),
    links(input),
    billers(input),
    remittance(input),
    locked(input),
    // The payment requests it moves.
    instructed(),
    refused(input),
    released(input),
    erroredSchedules(),
    changedWithEvents(),
    dequeued(),
  ];
  return sql<LockStatementRow>`
    /* prepared: lock_deduction_data */
    with ${sql.join(steps, sql`,`)}
    ${lockOutcome()}`;
}

// ---- What the lock chooses ----

/**
 * On a re-run, what this pay date has already reconciled: payroll was asked for it and answered, so
 * it is history, carried into the new version exactly as it was asked (never re-instructed, never
 * re-capped, never dropped), and the data request, the instruction file and the reconciliation
 * report go on telling the same story. Empty on a first lock.
 */
function settled(input: LockInput) {
  return sql`
    settled as (
      select a.payment_request_id as id, pr.mandate_id, pr.employee_id, pr.biller_client_id, a.requested_amount as requested
      from collection_attempts a join payment_requests pr on pr.id = a.payment_request_id
      where ${input.supersededSnapshotId}::uuid is not null
        and a.payroll_id = ${input.payrollId} and a.pay_date = ${input.payDate}::date
    )`;
}

/**
 * The lock queue's rows for this payroll up to this pay date (pending_payment_requests: every pending
 * request has one; a request that has left pending may still have one), whether the request is still
 * pending (null when it is gone), and the version of the queue row read (the transaction that wrote
 * it), so dequeued deletes only the row version read here.
 */
function queued(input: LockInput) {
  return sql`
    queued as (
      select q.payment_request_id as id, q.xmin as queue_row_version, pr.status = 'pending' as pending
      from pending_payment_requests q
      left join payment_requests pr on pr.id = q.payment_request_id
      where q.payroll_id = ${input.payrollId} and q.target_pay_date <= ${input.payDate}::date
    )`;
}

/**
 * The requests this version may ask for: the pending requests of the lock queue, and on a re-run the
 * superseded snapshot's links not reconciled yet. Two branches rather than one OR; they cannot
 * overlap: every pending request a snapshot includes leaves pending in the same statement, and a
 * re-run asks again only for what is still owed on this pay date, instructed or partly collected
 * (whatever failed, was collected or was cancelled since stays out).
 */
function chosen(input: LockInput) {
  return sql`
    chosen as (
      select pr.id, pr.mandate_id, pr.employee_id, pr.biller_client_id, pr.status, pr.due_date, pr.created_at, pr.amount, pr.collected_amount
      from queued q join payment_requests pr on pr.id = q.id
      where q.pending and pr.id not in (select id from settled)
      union all
      select pr.id, pr.mandate_id, pr.employee_id, pr.biller_client_id, pr.status, pr.due_date, pr.created_at, pr.amount, pr.collected_amount
      from deduction_line_payments lp join payment_requests pr on pr.id = lp.payment_request_id
      where lp.snapshot_id = ${input.supersededSnapshotId}::uuid and pr.status in ('instructed', 'partially_collected')
        and pr.id not in (select id from settled)
    )`;
}

/**
 * Pending requests over the per-request limit (stored before the limit existed or written around the
 * API): payroll is never asked for them, whatever their mandate's state; `refused` fails them. What
 * payroll was already asked for (a re-run's) stays.
 */
function overLimit(input: LockInput) {
  return sql`
    over_limit as (
      select pr.id
      from queued q join payment_requests pr on pr.id = q.id
      where q.pending and ${overPaymentLimitSql('pr', input)}
        and pr.id not in (select id from settled)
    )`;
}

/** paymentAmountsOverLimit (src/collections/payments/amount-limits.ts): an amount over MAX_PAYMENT_AMOUNT_MINOR. */
function overPaymentLimitSql(alias: 'pr' | 'c', input: LockInput) {
  return sql`${sql.raw(alias)}.amount > ${input.maxPaymentAmount}::bigint`;
}

// ---- Mandate limitations (src/collections/mandates/mandate-limitations.ts) ----

/** mandateCapOnPayDate's alreadyAsked: what the pay date's reconciled requests asked of each mandate. */
function settledPerMandate() {
  return sql`
    settled_per_mandate as (
      select mandate_id, sum(requested) as requested from settled group by mandate_id
    )`;
}

/**
 * The chosen requests of collectable mandates (mandateCollectableOn), with what each still owes and
 * its mandate's limits: the per-pay-date one already the lower of the mandate's own and the
 * service's. Requests refused for their amount take no room.
 */
function candidates(input: LockInput) {
  return sql`
    candidates as (
      select c.id, c.mandate_id, c.employee_id, c.biller_client_id, c.status, c.due_date, c.created_at,
             c.amount - c.collected_amount as remaining,
             -- least() skips nulls: the service's per-pay-date limit applies to every mandate.
             least(m.max_amount_per_pay_date, ${input.maxMandateAmountPerPayDate}::bigint) as max_amount_per_pay_date,
             m.max_total_amount
      from chosen c
      join mandates m on m.id = c.mandate_id
      where ${mandateCollectableOnSql('m', input.payDate)}
        and not (c.status = 'pending' and ${overPaymentLimitSql('c', input)})
    )`;
}

/**
 * mandateCollectableOn (mandate-limitations.ts) of the mandate `alias`, rendered from
 * MANDATE_STATUS_COLLECTING and MANDATE_VALIDITY: collecting, and the pay date within every bound
 * (a null bound is open).
 */
function mandateCollectableOnSql(alias: 'm', payDate: string) {
  const bounds = MANDATE_VALIDITY.map(({ column, holds }) => {
    const bound = sql.raw(`${alias}.${column}`);
    return sql`(${bound} is null or ${bound} ${sql.raw(holds)} ${payDate}::date)`;
  });
  const and = sql.raw('\n        and ');
  return sql`${sql.raw(alias)}.status = ${sql.lit(MANDATE_STATUS_COLLECTING)}${and}${sql.join(bounds, and)}`;
}

/**
 * mandateUsage, for the mandates with a lifetime cap: what was collected, plus what other pay dates
 * have asked (MANDATE_USAGE_OWED_STATUSES) and not settled; the candidates count only what they
 * collected, since what they still owe is what the cap is about to decide.
 */
function mandateUsage() {
  return sql`
    mandate_usage as (
      select pr.mandate_id,
             sum(pr.collected_amount) + coalesce(sum(pr.amount - pr.collected_amount) filter (
               where pr.status in (${statusListSql(MANDATE_USAGE_OWED_STATUSES)}) and pr.id not in (select id from candidates)), 0) as used
      from payment_requests pr
      where pr.mandate_id in (select mandate_id from candidates where max_total_amount is not null)
      group by pr.mandate_id
    )`;
}

/**
 * Each candidate with what its mandate's requests ahead of it (requestOrder) still owe, and its
 * mandate's cap on this pay date (mandateCapOnPayDate): the per-pay-date room less what this pay
 * date has already asked for settled requests, or the lifetime room, whichever is smaller.
 */
function ordered() {
  return sql`
    ordered as (
      select c.*,
             sum(c.remaining) over (partition by c.mandate_id order by ${requestOrderSql()})
               - c.remaining as ahead,
             least(c.max_amount_per_pay_date - coalesce(sm.requested, 0),
                   coalesce(c.max_total_amount - coalesce(u.used, 0), 9223372036854775807)) as cap
      from candidates c
      left join mandate_usage u on u.mandate_id = c.mandate_id
      left join settled_per_mandate sm on sm.mandate_id = c.mandate_id
    )`;
}

/** requestOrder's keys (REQUEST_ORDER) as the window's order, over the candidates (`c`). */
function requestOrderSql() {
  return fixedSql('request order of c', () => sql.join(REQUEST_ORDER.map(({ column, nullable }) => sql.raw(`c.${column}${nullable ? ' nulls last' : ''}`))));
}

/**
 * capMandateRequests: each request is asked for what it still owes while its mandate's cap lasts, the
 * one that reaches the cap for what is left of it; those left with nothing stay pending.
 */
function capped() {
  return sql`
    capped as (
      select id, employee_id, biller_client_id, status, least(remaining, greatest(0, cap - ahead))::bigint as requested
      from ordered
      where least(remaining, greatest(0, cap - ahead)) > 0
    )`;
}

// ---- The snapshot's total ----

/**
 * What the snapshot may still take once its history (a re-run's settled requests) is in, and whether
 * everything capped fits: the usual case, which then needs no sort.
 */
function room(input: LockInput) {
  return sql`
    room as (
      select ${input.maxSnapshotTotal}::bigint - coalesce((select sum(requested) from settled), 0) as left_for_capped,
             coalesce((select sum(requested) from capped), 0) as capped_total
    )`;
}

/**
 * The capped requests the snapshot takes: all of them when they fit (the first branch). Past the
 * largest total the data response carries exactly, requests are taken smallest first (those a re-run
 * carries, which payroll was already asked for, before any new one), and the rest stay pending for
 * the next pay date: the outliers wait, every other request goes ahead.
 */
function admitted() {
  return sql`
    admitted as (
      select id, employee_id, biller_client_id, status, requested from capped
      where (select capped_total <= left_for_capped from room)
      union all
      select id, employee_id, biller_client_id, status, requested
      from (select c.*, sum(c.requested) over (order by c.status = 'pending', c.requested, c.id) as running from capped c) w
      where (select capped_total > left_for_capped from room)
        and w.running <= (select left_for_capped from room)
    )`;
}

/** Everything the new version asks for: what it admitted, and a re-run's settled requests as they were asked. */
function included() {
  return sql`
    included as (
      select id, employee_id, biller_client_id, status, requested from admitted
      union all
      select id, employee_id, biller_client_id, 'settled', requested from settled where requested > 0
    )`;
}

// ---- What it writes ----

/** One line per employee: what the included requests ask of them, with the employment's references. */
function perEmployee(input: LockInput) {
  return sql`
    per_employee as (
      select i.employee_id, e.payroll_reference, e.deduction_reference_number, sum(i.requested)::bigint as requested_amount
      from included i
      join employments e on e.employee_id = i.employee_id and e.payroll_id = ${input.payrollId}
      group by i.employee_id, e.payroll_reference, e.deduction_reference_number
    )`;
}

/** The snapshot: the pay date's next version, with its total and employee count. */
function snapshot(input: LockInput) {
  return sql`
    snapshot as (
      insert into deduction_snapshots (id, payroll_id, pay_date, pay_period, snapshot_version, currency, total_amount, employee_count)
      select ${input.snapshotId}::uuid, ${input.payrollId}::uuid, ${input.payDate}::date, ${input.payPeriod},
             (select coalesce(max(snapshot_version), 0) + 1 from deduction_snapshots
              where payroll_id = ${input.payrollId} and pay_date = ${input.payDate}::date),
             ${input.currency},
             coalesce((select sum(requested_amount) from per_employee), 0)::bigint,
             (select count(*) from per_employee)
      returning id, snapshot_version, total_amount, employee_count
    )`;
}

/** Its lines, each with the employee's deduction reference (deductionPaymentReference). */
function lines(input: LockInput) {
  return sql`
    lines as (
      insert into deduction_lines (id, snapshot_id, employee_id, payroll_reference, requested_amount, currency, payment_reference)
      select ${timeOrderedUuidSql}, ${input.snapshotId}::uuid, employee_id, payroll_reference, requested_amount, ${input.currency},
             ${deductionPaymentReferenceSql()}
      from per_employee
      returning id, employee_id
    )`;
}

/**
 * deductionPaymentReference (src/cycle/instructions/payment-reference.ts), from DEDUCTION_REFERENCE_FORMAT:
 * the prefix and the number, zero-padded to at least minDigits (greatest() keeps lpad from cutting).
 */
function deductionPaymentReferenceSql() {
  const { prefix, minDigits } = DEDUCTION_REFERENCE_FORMAT;
  return fixedSql('deduction payment reference', () => sql`${sql.lit(prefix)} || ${zeroPaddedSql(sql.raw('deduction_reference_number'), minDigits)}`);
}

/** A number as text, zero-padded to at least `minDigits` digits and never cut (padStart's behaviour). */
function zeroPaddedSql(number: RawBuilder<unknown>, minDigits: number) {
  return sql`lpad(${number}::text, greatest(${sql.lit(minDigits)}, length(${number}::text)), '0')`;
}

/** Which request each line asks for, and how much of it. */
function links(input: LockInput) {
  return sql`
    links as (
      insert into deduction_line_payments (snapshot_id, line_id, payment_request_id, requested_amount)
      select ${input.snapshotId}::uuid, l.id, i.id, i.requested
      from included i join lines l on l.employee_id = i.employee_id
    )`;
}

/** Who hears of this pay date's remittance (listBillersOfPayDates): the billers of the links above. */
function billers(input: LockInput) {
  return sql`
    billers as (
      insert into snapshot_billers (snapshot_id, biller_client_id)
      select distinct ${input.snapshotId}::uuid, i.biller_client_id
      from included i join lines l on l.employee_id = i.employee_id
    )`;
}

/**
 * The payment the employer is asked to make to the collection account, when there is anything to pay,
 * with its reference: the one an earlier snapshot version of this pay date gave the employer, when one
 * did (a re-run, including of a pay date locked before references were zero-padded), since the
 * employer may already have paid with it; otherwise remittancePaymentReference.
 */
function remittance(input: LockInput) {
  return sql`
    remittance as (
      insert into requested_payments (snapshot_id, payment_reference, payment_amount, currency, account_number, sort_code, account_holder_name)
      select s.id,
             coalesce(
               (select earlier.payment_reference
                from deduction_snapshots prior join requested_payments earlier on earlier.snapshot_id = prior.id
                where prior.payroll_id = ${input.payrollId} and prior.pay_date = ${input.payDate}::date
                order by prior.snapshot_version desc limit 1),
               ${remittancePaymentReferenceSql(input.payDate)}),
             s.total_amount, ${input.currency}, ${input.collectionAccount.account_number},
             ${input.collectionAccount.sort_code}, ${input.collectionAccount.account_holder_name}
      from snapshot s join payrolls p on p.id = ${input.payrollId} where s.total_amount > 0
    )`;
}

/**
 * remittancePaymentReference (src/cycle/instructions/payment-reference.ts), from REMITTANCE_REFERENCE_FORMAT:
 * the prefix, the pay date as YYMMDD, the payroll's mark and its number (`p`), zero-padded (the
 * identity column's maxvalue keeps it within minDigits; greatest() would never cut a longer one).
 */
function remittancePaymentReferenceSql(payDate: string) {
  const { prefix, payrollMark, minDigits } = REMITTANCE_REFERENCE_FORMAT;
  return sql`${sql.lit(prefix)} || to_char(${payDate}::date, 'YYMMDD') || ${sql.lit(payrollMark)}
                 || ${zeroPaddedSql(sql.raw('p.remittance_reference_number'), minDigits)}`;
}

/** The pay date is locked: the nightly run and a repeated job find it so. A re-run keeps the first lock's time. */
function locked(input: LockInput) {
  return sql`
    locked as (
      update pay_dates set locked_at = now(), first_locked_at = coalesce(first_locked_at, now()), updated_at = now()
      where payroll_id = ${input.payrollId} and pay_date = ${input.payDate}::date
    )`;
}

// ---- The payment requests it moves (each with its payment_request.updated event) ----

/** Newly included pending requests are instructed: one attempt more. */
function instructed() {
  return sql`
    instructed as (
      update payment_requests pr
      set status = 'instructed', attempts = pr.attempts + 1, version = pr.version + 1, updated_at = now()
      from included i
      where pr.id = i.id and i.status = 'pending' and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, 'instructed')})
      returning pr.*
    )`;
}

/**
 * Requests over the per-request limit fail; what an earlier attempt collected of a carried request
 * stays collected, so that one ends partly collected.
 */
function refused(input: LockInput) {
  return sql`
    refused as (
      update payment_requests pr
      set status = case when pr.collected_amount > 0 then 'partially_collected' else 'failed' end,
          status_reason = ${input.refusalReason}, version = pr.version + 1, updated_at = now()
      -- An array of ids, not a join: whatever the statistics say, the (usually empty) refused set
      -- drives the lookup and the pay date's requests are never scanned once per refused row.
      where pr.id = any(array(select id from over_limit))
        and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, ['partially_collected', 'failed'], ['pending'])})
      returning pr.*
    )`;
}

/**
 * statusLeftOutOfRerun (mandate-limitations.ts). On a re-run, what the superseded snapshot instructed
 * for this pay date and the new version no longer asks for (its mandate stopped collecting, or has no
 * room left under a cap or the total): payroll will not be asked for it, so it must not stay
 * instructed, where nothing would ever settle it and lifetime caps would go on counting it. It goes
 * back to pending, as a carried shortfall does, for its next pay date; the instruction withdrawn
 * before any answer is not counted as an attempt. Partly collected ones are carried, and what this
 * pay date reconciled (settled) is kept as it was asked. Those of ended mandates are cancelled next
 * (lockOutcome names them).
 */
function released(input: LockInput) {
  return sql`
    released as (
      update payment_requests pr
      set status = 'pending', attempts = greatest(pr.attempts - 1, 0), version = pr.version + 1, updated_at = now()
      from deduction_line_payments lp
      where lp.snapshot_id = ${input.supersededSnapshotId}::uuid and pr.id = lp.payment_request_id
        and pr.status in (${fromStatusesSql(PAYMENT_REQUEST_LIFECYCLE, 'pending', ['instructed'])})
        and pr.id not in (select id from settled)
        and pr.id not in (select id from admitted)
      returning pr.*
    )`;
}

/**
 * scheduleOutcomeOfRefusal (schedule-outcome.ts): the active schedule of a refused instalment is
 * errored, `instalment_refused`, even when that instalment ends partly collected. Driven by the refused
 * rows (usually none), so schedules are looked up by key, never scanned. Their schedule.updated events
 * are written after the statement (lockOutcome names the schedules): within it, the instalments still
 * read as they were before it.
 */
function erroredSchedules() {
  const outcome = scheduleOutcomeOfRefusal('active')!;
  return sql`
    errored_schedules as (
      update schedules s set status = ${sql.lit(outcome.status)}, status_reason = ${sql.lit(outcome.reason)}, version = s.version + 1, updated_at = now()
      from (select distinct schedule_id from refused where schedule_id is not null) r
      where s.id = r.schedule_id and s.status in (${fromStatusesSql(SCHEDULE_LIFECYCLE, outcome.status, ['active'])})
      returning s.id
    )`;
}

/** Every request the statement moved, and its payment_request.updated event (insertPaymentUpdatedEvents). */
function changedWithEvents() {
  return sql`
    changed as (select * from instructed union all select * from refused union all select * from released),
    events as (${insertPaymentUpdatedEvents('changed')})`;
}

/**
 * Queue rows of the requests that leave pending here, and of those that had left it already (or are
 * gone). Those left pending (held back, mandate not collecting, no room under a cap) stay queued.
 * Released requests are queued again by the database's trigger. Only the row version this statement
 * read: a request another transaction has just brought back to pending re-wrote its row (the
 * trigger), and the delete, rechecking the newer version, leaves it.
 */
function dequeued() {
  return sql`
    dequeued as (
      delete from pending_payment_requests q
      using queued x
      where q.payment_request_id = x.id and q.xmin = x.queue_row_version
        and (not coalesce(x.pending, false)
             or x.id in (select id from instructed) or x.id in (select id from refused))
    )`;
}

// ---- What it says ----

/**
 * The snapshot's header and what the lock did: counts of the moves (held back: capped, not
 * admitted), the released requests whose mandate has ended (MANDATE_STATUSES_ENDING_COLLECTION,
 * as statusLeftOutOfRerun decides), which cancelReleasedPayments cancels next, and the schedules it
 * errored, whose events recordScheduleUpdatedEvents writes next.
 */
function lockOutcome() {
  return sql`
    select s.snapshot_version, s.total_amount, s.employee_count,
           (select count(*) from instructed)::int as payments_instructed,
           (select count(*) from refused)::int as payments_refused,
           (select count(*) from capped)::int - (select count(*) from admitted)::int as payments_held_back,
           (select count(*) from released)::int as payments_released,
           array(select r.id from released r join mandates m on m.id = r.mandate_id
                 where m.status in (${statusListSql(MANDATE_STATUSES_ENDING_COLLECTION)}) order by r.id)::text[] as released_of_ended_mandates,
           array(select e.id from errored_schedules e order by e.id)::text[] as errored_schedule_ids
    from snapshot s`;
}
