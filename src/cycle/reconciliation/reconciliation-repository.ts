import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { AttemptOutcome, BankHolidayRegion } from '../../platform/db/tables.ts';
import { ledgerEntriesInsert, type NewLedgerEntry } from '../ledger/ledger-repository.ts';
import { insertPaymentUpdatedEvents } from '../../collections/payments/payment-event-repository.ts';
import { PAYMENT_REQUEST_LIFECYCLE, type PaymentStatus } from '../../collections/payments/payment-transitions.ts';
import { fixedSql } from '../../platform/db/fixed-sql.ts';
import { statusChangeAllowedSql } from '../../platform/db/status-transitions-sql.ts';
import { SNAPSHOT_LIFECYCLE } from '../snapshots/snapshot-transitions.ts';
import type { AttemptWrite, CurrentException, ExceptionDraft, PaymentWrite } from './reconciliation-plan.ts';

export interface PaymentToReconcileRow {
  id: string;
  employee_id: string;
  mandate_id: string;
  biller_client_id: string;
  schedule_id: string | null;
  currency: string;
  amount: number;
  collected_amount: number;
  paid_out_amount: number;
  status: PaymentStatus;
  version: number;
  attempts: number;
  due_date: string | null;
  created_at: Date;
  allow_post_due_date_deduction: boolean;
  target_pay_date: string;
  mandate_active: boolean;
  snapshot_requested: number | null;
  attempt_id: string | null;
  attempt_number: number | null;
  attempt_requested: number | null;
  attempt_deducted: number | null;
  attempt_collected: number | null;
  attempt_shortfall: number | null;
  attempt_outcome: AttemptOutcome | null;
  attempt_carried_to: string | null;
  attempt_push_version: number | null;
  attempt_revision: number | null;
  highest_attempt_number: number | null;
  claimed_by_pay_date: string | null;
  /** Text, not date[]: pg's array parser would turn the dates into Date objects. */
  earlier_attempt_pay_dates: string[] | null;
}

/**
 * Every payment request this pay date concerns, in one query: those the current snapshot asks for,
 * plus those an earlier snapshot asked for and a reconciliation already attempted (a re-run drops
 * requests it finds fully collected, but their attempt still stands), with the stored attempt.
 * Prepared once per connection: planning it cost a third of its execution.
 */
export async function loadPaymentsToReconcile(db: Executor, input: { snapshotId: string; payrollId: string; payDate: string }) {
  const result = await sql<PaymentToReconcileRow>`
    /* prepared: load_payments_to_reconcile */
    with asked as (
      select payment_request_id, requested_amount from deduction_line_payments where snapshot_id = ${input.snapshotId}
    ),
    attempted as (
      select * from collection_attempts where payroll_id = ${input.payrollId} and pay_date = ${input.payDate}
    ),
    involved as (
      select coalesce(asked.payment_request_id, a.payment_request_id) as payment_request_id,
             asked.requested_amount as snapshot_requested,
             a.id as attempt_id, a.attempt_number, a.requested_amount as attempt_requested,
             a.deducted_amount as attempt_deducted, a.collected_amount as attempt_collected,
             a.shortfall_amount as attempt_shortfall, a.outcome as attempt_outcome,
             a.carried_to_pay_date as attempt_carried_to, a.push_version as attempt_push_version,
             a.revision as attempt_revision
      from asked full join attempted a on a.payment_request_id = asked.payment_request_id
    )
    select pr.id, pr.employee_id, pr.mandate_id, pr.biller_client_id, pr.schedule_id, pr.currency, pr.amount, pr.collected_amount,
           pr.paid_out_amount, pr.status, pr.version, pr.attempts, pr.due_date, pr.created_at,
           pr.allow_post_due_date_deduction, pr.target_pay_date, m.status = 'active' as mandate_active,
           i.snapshot_requested, i.attempt_id, i.attempt_number, i.attempt_requested, i.attempt_deducted,
           i.attempt_collected, i.attempt_shortfall, i.attempt_outcome, i.attempt_carried_to,
           i.attempt_push_version, i.attempt_revision,
           history.highest_attempt_number,
           least(history.attempted_later_on,
                 (select min(s.pay_date) from deduction_snapshots s
                  join deduction_line_payments l on l.snapshot_id = s.id and l.payment_request_id = pr.id
                  where s.payroll_id = ${input.payrollId} and s.pay_date > ${input.payDate}::date and s.status <> 'superseded'))
             as claimed_by_pay_date,
           history.earlier_attempt_pay_dates
    from involved i
    join payment_requests pr on pr.id = i.payment_request_id
    join mandates m on m.id = pr.mandate_id
    -- One probe of the payment's attempts answers every question about its other pay dates.
    cross join lateral (
      select max(x.attempt_number) as highest_attempt_number, min(x.pay_date) filter (where x.pay_date > ${input.payDate}::date) as attempted_later_on,
             array_agg(x.pay_date::text order by x.pay_date) filter (where x.pay_date < ${input.payDate}::date) as earlier_attempt_pay_dates
      from collection_attempts x where x.payment_request_id = pr.id
    ) history
  `.execute(db);
  return result.rows;
}

export interface LatestRecordRow {
  employee_id: string;
  version: number;
  deduction_amount: number;
  currency: string;
}

/**
 * The highest version per employee for the pay date's pay period: the truth about what was deducted.
 * Records an operator voided are not: an employee whose records were all voided has none.
 */
export async function loadLatestRecords(db: Executor, payrollId: string, payDate: string, payPeriod: string) {
  const result = await sql<LatestRecordRow>`
    select distinct on (employee_id) employee_id, version, deduction_amount, currency
    from deduction_records
    where payroll_id = ${payrollId} and pay_date = ${payDate} and pay_period = ${payPeriod} and void_id is null
    order by employee_id, version desc
  `.execute(db);
  return result.rows;
}

/** The pay date's exceptions no later reconciliation superseded: what is held now, per employee and kind. */
export async function loadCurrentExceptions(db: Executor, payrollId: string, payDate: string): Promise<CurrentException[]> {
  const rows = await db
    .selectFrom('reconciliation_exceptions')
    .select(['id', 'employee_id', 'kind', 'amount', 'currency', 'record_version'])
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .where('superseded_at', 'is', null)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    employeeId: row.employee_id!,
    kind: row.kind,
    amount: row.amount ?? 0,
    currency: row.currency ?? '',
    recordVersion: row.record_version,
  }));
}

/**
 * Its own statement, before the new exceptions go in: within one statement the order of the parts is
 * not defined, and the new row would meet the old one in the index of current exceptions.
 */
export async function supersedeExceptions(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('reconciliation_exceptions')
    .set({ superseded_at: sql`now()` })
    .where('id', 'in', ids)
    .where('superseded_at', 'is', null)
    .execute();
}

export interface ReconciliationWrites {
  payrollId: string;
  payDate: string;
  attempts: readonly AttemptWrite[];
  ledgerEntries: readonly NewLedgerEntry[];
  payments: readonly PaymentWrite[];
  exceptions: readonly ExceptionDraft[];
  /** The current snapshot and the status it moves forward to; null when it stays. */
  snapshot: { id: string; status: 'confirmed' | 'reconciled' } | null;
}

/**
 * Everything a reconciliation writes, in one statement (one round trip, one plan):
 * - attempts: new ones inserted with their payment's identity, changed ones rewritten (one per payment
 *   request per pay date);
 * - ledger entries (ledgerEntriesInsert);
 * - payments: collected amount, status and target pay date, each only to the row version that was
 *   read and only along the payment request lifecycle, with a payment_request.updated event per
 *   payment built next to the row. The caller compares the count, so a concurrent change (a payout, a
 *   lock of another pay date) fails the transaction for a retry instead of being overwritten;
 * - exceptions: the new current ones (supersedeExceptions has retired those they replace); the index of
 *   current exceptions refuses a second one per employee and kind rather than let held money count twice;
 * - the snapshot status, forward only (locked -> confirmed -> reconciled, as the snapshot lifecycle
 *   allows): a re-run's superseding is not ours to undo.
 * No part reads what another writes, so the one snapshot of the statement serves them all. Its text
 * is the same for every pay date (values are array parameters), so each connection plans it once.
 */
export async function writeReconciliation(db: Executor, w: ReconciliationWrites): Promise<{ paymentsUpdated: number; exceptions: number }> {
  const { attempts, payments, exceptions } = w;
  const snapshotFrom = w.snapshot ? SNAPSHOT_LIFECYCLE.fromStatuses(w.snapshot.status) : [];
  const result = await sql<{ payments_updated: number; exceptions: number }>`
    /* prepared: write_reconciliation */
    with attempts as (
      insert into collection_attempts (id, payment_request_id, employee_id, mandate_id, biller_client_id, currency, payroll_id,
        pay_date, attempt_number, requested_amount, deducted_amount, collected_amount, shortfall_amount, carried_to_pay_date,
        outcome, push_version, revision, reconciled_at)
      select a.id, a.payment_request_id, a.employee_id, a.mandate_id, a.biller_client_id, a.currency, ${w.payrollId}::uuid,
             ${w.payDate}::date, a.attempt_number, a.requested_amount, a.deducted_amount, a.collected_amount, a.shortfall_amount,
             a.carried_to_pay_date, a.outcome, a.push_version, a.revision, now()
      from unnest(
        ${attempts.map((a) => a.id)}::uuid[],
        ${attempts.map((a) => a.paymentRequestId)}::uuid[],
        ${attempts.map((a) => a.employeeId)}::uuid[],
        ${attempts.map((a) => a.mandateId)}::uuid[],
        ${attempts.map((a) => a.billerClientId)}::uuid[],
        ${attempts.map((a) => a.currency)}::char(3)[],
        ${attempts.map((a) => a.attemptNumber)}::int[],
        ${attempts.map((a) => a.requestedAmount)}::bigint[],
        ${attempts.map((a) => a.deductedAmount)}::bigint[],
        ${attempts.map((a) => a.collectedAmount)}::bigint[],
        ${attempts.map((a) => a.shortfallAmount)}::bigint[],
        ${attempts.map((a) => a.carriedToPayDate)}::date[],
        ${attempts.map((a) => a.outcome)}::text[],
        ${attempts.map((a) => a.pushVersion)}::bigint[],
        ${attempts.map((a) => a.revision)}::int[]
      ) as a(id, payment_request_id, employee_id, mandate_id, biller_client_id, currency, attempt_number, requested_amount,
             deducted_amount, collected_amount, shortfall_amount, carried_to_pay_date, outcome, push_version, revision)
      on conflict (payment_request_id, pay_date) do update
        set deducted_amount = excluded.deducted_amount,
            collected_amount = excluded.collected_amount,
            shortfall_amount = excluded.shortfall_amount,
            carried_to_pay_date = excluded.carried_to_pay_date,
            outcome = excluded.outcome,
            push_version = excluded.push_version,
            revision = excluded.revision,
            reconciled_at = now()
    ),
    ledger as (${ledgerEntriesInsert(w.ledgerEntries)}),
    payments as (
      update payment_requests pr
      set collected_amount = p.collected_amount,
          status = p.status,
          target_pay_date = p.target_pay_date,
          version = pr.version + 1,
          updated_at = now()
      from unnest(
        ${payments.map((p) => p.id)}::uuid[],
        ${payments.map((p) => p.expectedVersion)}::int[],
        ${payments.map((p) => p.collectedAmount)}::bigint[],
        ${payments.map((p) => p.status)}::text[],
        ${payments.map((p) => p.targetPayDate)}::date[]
      ) as p(id, expected_version, collected_amount, status, target_pay_date)
      where pr.id = p.id and pr.version = p.expected_version
        and ${fixedSql('payment_requests lifecycle: pr.status may move to p.status', () => statusChangeAllowedSql(PAYMENT_REQUEST_LIFECYCLE, sql`pr.status`, sql`p.status`))}
      returning pr.*
    ),
    events as (${insertPaymentUpdatedEvents('payments')}),
    exceptions as (
      insert into reconciliation_exceptions (payroll_id, pay_date, employee_id, kind, amount, currency, record_version, detail)
      select ${w.payrollId}::uuid, ${w.payDate}::date, e.employee_id, e.kind, e.amount, e.currency, e.record_version, e.detail
      from unnest(
        ${exceptions.map((e) => e.employeeId)}::uuid[],
        ${exceptions.map((e) => e.kind)}::text[],
        ${exceptions.map((e) => e.amount)}::bigint[],
        ${exceptions.map((e) => e.currency)}::char(3)[],
        ${exceptions.map((e) => e.recordVersion)}::bigint[],
        ${exceptions.map((e) => e.detail)}::text[]
      ) as e(employee_id, kind, amount, currency, record_version, detail)
      returning 1
    ),
    snapshot as (
      update deduction_snapshots set status = ${w.snapshot?.status ?? null}::text
      where id = ${w.snapshot?.id ?? null}::uuid and status = any(${snapshotFrom}::text[])
    )
    select (select count(*) from payments)::int as payments_updated, (select count(*) from exceptions)::int as exceptions
  `.execute(db);
  const row = result.rows[0]!;
  return { paymentsUpdated: row.payments_updated, exceptions: row.exceptions };
}

export interface PayDateDueForReconciliation {
  payroll_id: string;
  pay_date: string;
  final: boolean;
}

/**
 * Pay dates the nightly sweep should reconcile:
 *  - final: the current snapshot is not reconciled and the pay date is on or before `finalOnOrBefore`
 *    (its settlement window is over: whoever has not reported is taken as deducted 0);
 *  - not final: the snapshot is not reconciled yet and has records (a re-run's new snapshot, or
 *    records whose debounced job was lost), or a record arrived after the pay date's last
 *    reconciliation wrote anything (within `lateRecordsSince`, to keep the scan bounded).
 */
export async function findPayDatesDueForReconciliation(db: Executor, finalOnOrBefore: ReadonlyArray<{ region: BankHolidayRegion; date: string }>, lateRecordsSince: string) {
  // The settlement window ends on a different day per bank-holiday region.
  const result = await sql<PayDateDueForReconciliation>`
    with windows(region, final_on_or_before) as (
      select * from unnest(${finalOnOrBefore.map((w) => w.region)}::text[], ${finalOnOrBefore.map((w) => w.date)}::date[])
    )
    select s.payroll_id, s.pay_date, s.pay_date <= w.final_on_or_before as final
    from deduction_snapshots s
    join payrolls p on p.id = s.payroll_id
    join windows w on w.region = p.bank_holiday_region
    where s.status in ('locked', 'confirmed')
      and (s.pay_date <= w.final_on_or_before
           or exists (select 1 from deduction_records r where r.payroll_id = s.payroll_id and r.pay_date = s.pay_date and r.void_id is null))
    union all
    select s.payroll_id, s.pay_date, false
    from deduction_snapshots s
    where s.status = 'reconciled' and s.pay_date >= ${lateRecordsSince}::date
      -- Records that arrived, or were voided, since it was last reconciled.
      and greatest(
            (select max(r.received_at) from deduction_records r where r.payroll_id = s.payroll_id and r.pay_date = s.pay_date),
            (select max(v.voided_at) from deduction_record_voids v where v.payroll_id = s.payroll_id and v.pay_date = s.pay_date))
          > greatest(
              (select max(a.reconciled_at) from collection_attempts a where a.payroll_id = s.payroll_id and a.pay_date = s.pay_date),
              (select max(e.created_at) from reconciliation_exceptions e where e.payroll_id = s.payroll_id and e.pay_date = s.pay_date),
              s.locked_at)
    order by 1, 2
  `.execute(db);
  return result.rows;
}

/**
 * Reconciled pay dates that hold back money for an employee (a current over-deduction) while one of
 * the employee's payments there collected less than it asked and is still short overall: what that pay
 * date may take of the payment grew when another pay date's collection of it fell, and the follow-up
 * reconciliation the change asked for never ran (a crash between commit and ask). Reconciled as they
 * stand, each takes what it can; at rest none is found. Driven by current over-deductions, which are few.
 */
export async function findPayDatesThatCanTakeMore(db: Executor, since: string, payrollId: string | null = null) {
  const result = await sql<{ payroll_id: string; pay_date: string }>`
    select distinct e.payroll_id, e.pay_date
    from reconciliation_exceptions e
    join deduction_snapshots s on s.payroll_id = e.payroll_id and s.pay_date = e.pay_date and s.status = 'reconciled'
    join collection_attempts a on a.payroll_id = e.payroll_id and a.pay_date = e.pay_date and a.employee_id = e.employee_id
    join payment_requests pr on pr.id = a.payment_request_id
    where e.kind = 'over_deduction' and e.superseded_at is null and e.pay_date >= ${since}::date
      and (${payrollId}::uuid is null or e.payroll_id = ${payrollId}::uuid)
      and a.collected_amount < a.requested_amount
      and pr.collected_amount < pr.amount and pr.status <> 'cancelled'
    order by 1, 2
  `.execute(db);
  return result.rows;
}
