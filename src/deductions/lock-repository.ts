import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import type { PaymentRequestsTable } from '../db/tables.ts';
import type { Selectable } from 'kysely';

export interface PayDateToLock {
  payroll_id: string;
  pay_date: string;
  pay_period: string;
  lock_date: string;
  locked_at: Date | null;
  currency: string;
}

/**
 * Row-locks the payroll: every lock and re-run of one payroll's pay dates runs one after another,
 * so two pay dates can never both claim the same pending payment request.
 */
export async function lockPayrollRow(db: Executor, payrollId: string): Promise<boolean> {
  const row = await db.selectFrom('payrolls').select('id').where('id', '=', payrollId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** Earlier pay dates of the payroll that are due to lock no later than `lockDate` and are still open. */
export async function findEarlierUnlockedPayDates(db: Executor, payrollId: string, payDate: string, lockDate: string) {
  const result = await sql<PayDateToLock>`
    select pd.payroll_id, pd.pay_date, pd.pay_period, pd.lock_date, pd.locked_at, p.currency
    from pay_dates pd join payrolls p on p.id = pd.payroll_id
    where pd.payroll_id = ${payrollId} and pd.pay_date < ${payDate}::date
      and pd.lock_date <= ${lockDate}::date and pd.locked_at is null
    order by pd.pay_date
  `.execute(db);
  return result.rows;
}

/** Row-locks the pay date so two lock jobs (or a lock and a re-run) for it run one after the other. */
export async function lockPayDateRow(db: Executor, payrollId: string, payDate: string): Promise<PayDateToLock | undefined> {
  const result = await sql<PayDateToLock>`
    select pd.payroll_id, pd.pay_date, pd.pay_period, pd.lock_date, pd.locked_at, p.currency
    from pay_dates pd join payrolls p on p.id = pd.payroll_id
    where pd.payroll_id = ${payrollId} and pd.pay_date = ${payDate}
    for update of pd
  `.execute(db);
  return result.rows[0];
}

export async function findCurrentSnapshot(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_snapshots')
    .selectAll()
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .where('status', '!=', 'superseded')
    .executeTakeFirst();
}

export async function nextSnapshotVersion(db: Executor, payrollId: string, payDate: string): Promise<number> {
  const row = await db
    .selectFrom('deduction_snapshots')
    .select((eb) => eb.fn.coalesce(eb.fn.max('snapshot_version'), eb.lit(0)).as('latest'))
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .executeTakeFirstOrThrow();
  return Number(row.latest) + 1;
}

export async function findActiveCollectionAccount(db: Executor, currency: string) {
  return db.selectFrom('collection_accounts').selectAll().where('currency', '=', currency).where('active', '=', true).executeTakeFirst();
}

export interface FreezeInput {
  snapshotId: string;
  snapshotVersion: number;
  payrollId: string;
  payDate: string;
  payPeriod: string;
  currency: string;
  collectionAccount: { account_number: string; sort_code: string; account_holder_name: string };
  /** Payment requests already instructed for this pay date by the snapshot a re-run replaces. */
  supersededSnapshotId: string | null;
}

/**
 * Freezes one payroll pay date in a single statement: chooses the payment requests due on or
 * before it (new pending ones, plus on a re-run those the superseded snapshot had instructed),
 * applies mandate limitations in due-date order with window sums, aggregates per employee, writes
 * the snapshot, its lines, the line-to-payment links and the requested payment, and moves newly
 * included requests to `instructed`. Returns the payment requests whose state changed.
 */
export async function freezeDeductionData(db: Executor, input: FreezeInput) {
  const result = await sql<Selectable<PaymentRequestsTable>>`
    with chosen as (
      -- Two index-friendly branches rather than one OR: the partial lock index, and the
      -- superseded snapshot's links (only on a re-run).
      select pr.id from payment_requests pr
      where pr.payroll_id = ${input.payrollId} and pr.status = 'pending' and pr.target_pay_date <= ${input.payDate}::date
      union
      select payment_request_id from deduction_line_payments where snapshot_id = ${input.supersededSnapshotId}::uuid
    ),
    candidates as (
      select pr.id, pr.mandate_id, pr.employee_id, pr.status, pr.due_date, pr.created_at,
             pr.amount - pr.collected_amount as remaining,
             m.max_amount_per_pay_date, m.max_total_amount
      from chosen
      join payment_requests pr on pr.id = chosen.id
      join mandates m on m.id = pr.mandate_id
      where m.status = 'active'
        and (m.valid_from is null or m.valid_from <= ${input.payDate}::date)
        and (m.valid_to is null or m.valid_to >= ${input.payDate}::date)
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
             least(coalesce(c.max_amount_per_pay_date, 9223372036854775807),
                   coalesce(c.max_total_amount - coalesce(u.used, 0), 9223372036854775807)) as cap
      from candidates c left join mandate_usage u on u.mandate_id = c.mandate_id
    ),
    included as (
      select id, employee_id, status, least(remaining, greatest(0, cap - ahead))::bigint as requested
      from ordered
      where least(remaining, greatest(0, cap - ahead)) > 0
    ),
    per_employee as (
      select i.employee_id, e.payroll_reference, sum(i.requested)::bigint as requested_amount
      from included i
      join employments e on e.employee_id = i.employee_id and e.payroll_id = ${input.payrollId}
      group by i.employee_id, e.payroll_reference
    ),
    snapshot as (
      insert into deduction_snapshots (id, payroll_id, pay_date, pay_period, snapshot_version, currency, total_amount, employee_count)
      select ${input.snapshotId}::uuid, ${input.payrollId}::uuid, ${input.payDate}::date, ${input.payPeriod},
             ${input.snapshotVersion}, ${input.currency},
             coalesce((select sum(requested_amount) from per_employee), 0)::bigint,
             (select count(*) from per_employee)
      returning id, total_amount
    ),
    lines as (
      insert into deduction_lines (snapshot_id, employee_id, payroll_reference, requested_amount, currency, payment_reference)
      select ${input.snapshotId}::uuid, employee_id, payroll_reference, requested_amount, ${input.currency},
             'SD' || to_char(${input.payDate}::date, 'YYMMDD') || '-' || payroll_reference
      from per_employee
      returning id, employee_id
    ),
    links as (
      insert into deduction_line_payments (snapshot_id, line_id, payment_request_id, requested_amount)
      select ${input.snapshotId}::uuid, l.id, i.id, i.requested
      from included i join lines l on l.employee_id = i.employee_id
    ),
    remittance as (
      insert into requested_payments (snapshot_id, payment_reference, payment_amount, currency, account_number, sort_code, account_holder_name)
      select s.id, 'SDR-' || upper(left(${input.payrollId}, 8)) || '-' || to_char(${input.payDate}::date, 'YYYYMMDD'),
             s.total_amount, ${input.currency}, ${input.collectionAccount.account_number},
             ${input.collectionAccount.sort_code}, ${input.collectionAccount.account_holder_name}
      from snapshot s where s.total_amount > 0
    )
    update payment_requests pr
    set status = 'instructed', attempts = pr.attempts + 1, version = pr.version + 1, updated_at = now()
    from included i
    where pr.id = i.id and i.status = 'pending' and pr.status = 'pending'
    returning pr.*
  `.execute(db);
  return result.rows;
}

export async function markPayDateLocked(db: Executor, payrollId: string, payDate: string): Promise<void> {
  await db
    .updateTable('pay_dates')
    .set({ locked_at: new Date(), updated_at: new Date() as never })
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .execute();
}

/** Retires the current snapshot first: only one snapshot per pay date may be current at a time. */
export async function supersedeSnapshot(db: Executor, snapshotId: string): Promise<void> {
  await db.updateTable('deduction_snapshots').set({ status: 'superseded', superseded_at: new Date() }).where('id', '=', snapshotId).execute();
}

export async function linkSupersededSnapshot(db: Executor, snapshotId: string, supersededBy: string): Promise<void> {
  await db.updateTable('deduction_snapshots').set({ superseded_by: supersededBy }).where('id', '=', snapshotId).execute();
}

/** The (payroll, pay date) pairs whose lock date has arrived and that are not locked yet. */
export async function findPayDatesDueForLock(db: Executor, today: string) {
  return db
    .selectFrom('pay_dates')
    .select(['payroll_id', 'pay_date'])
    .where('lock_date', '<=', today)
    .where('locked_at', 'is', null)
    .orderBy('payroll_id')
    .orderBy('pay_date')
    .execute();
}
