import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { timeOrderedUuidSql } from '../../platform/db/time-ordered-uuid-sql.ts';
import { fromStatusesSql } from '../../platform/db/status-transitions-sql.ts';
import type { SnapshotHeader } from '../snapshots/snapshot-repository.ts';
import { SNAPSHOT_LIFECYCLE } from '../snapshots/snapshot-transitions.ts';

/**
 * What a confirmation is checked against, in one round trip: the payroll, the deduction data it
 * answers (any payroll's: the caller compares), and the zero-based positions of its employee ids
 * (UUIDs, as the submission's schema has them) that have no employment on the payroll.
 */
export async function findConfirmationContext(db: Executor, payrollId: string, snapshotId: string, employeeIds: readonly string[]) {
  const result = await sql<{
    id: string | null;
    payroll_provider_id: string | null;
    currency: string | null;
    snapshot_id: string | null;
    snapshot_payroll_id: string | null;
    pay_date: string | null;
    pay_period: string | null;
    status: string | null;
    snapshot_currency: string | null;
    positions_not_on_payroll: number[];
  }>`
    select p.id, p.payroll_provider_id, p.currency,
           s.id as snapshot_id, s.payroll_id as snapshot_payroll_id, s.pay_date, s.pay_period, s.status, s.currency as snapshot_currency,
           array(
             select (line.ordinality - 1)::int4
             from unnest(${employeeIds}::uuid[]) with ordinality as line (employee_id, ordinality)
             where not exists (select 1 from employments e where e.payroll_id = ${payrollId}::uuid and e.employee_id = line.employee_id)
             order by line.ordinality
           ) as positions_not_on_payroll
    from (values (1)) as one (n)
    left join payrolls p on p.id = ${payrollId}::uuid
    left join deduction_snapshots s on s.id = ${snapshotId}::uuid
  `.execute(db);
  const row = result.rows[0]!;
  const payroll = row.id === null ? undefined : { id: row.id, payroll_provider_id: row.payroll_provider_id!, currency: row.currency! };
  const snapshot: SnapshotHeader | undefined =
    row.snapshot_id === null
      ? undefined
      : {
          id: row.snapshot_id,
          payroll_id: row.snapshot_payroll_id!,
          pay_date: row.pay_date!,
          pay_period: row.pay_period!,
          status: row.status!,
          currency: row.snapshot_currency!,
        };
  return { payroll, snapshot, positionsNotOnPayroll: row.positions_not_on_payroll };
}

export interface NewConfirmation {
  payrollId: string;
  payPeriod: string;
  payDate: string;
  deductionDataId: string;
  currency: string;
  /** The provider's client; null when an operator imported the provider's return file (then submittedBy names them). */
  submittedByClientId: string | null;
  submittedBy: string | null;
  totalAmount: number;
  /** Parallel arrays, one entry per line. */
  employeeIds: readonly string[];
  amounts: readonly number[];
  leavers: readonly boolean[];
}

/**
 * deductionContentHash (deduction-content.ts) of a confirmation line, in SQL so 100,000 lines
 * are hashed where they are inserted: the same canonical JSON (keys sorted, amount in minor units,
 * no requested payments), byte for byte. A test holds the two to each other.
 */
const lineContentHash = (currency: string) => sql`encode(sha256(convert_to(format(
  '{"leaver":%s,"requested_payments":[],"salary_deduction":{"currency":"%s","deduction_amount":%s,"employee_id":"%s"}}',
  case when line.leaver then 'true' else 'false' end, ${currency}::text, line.deduction_amount, line.employee_id
), 'UTF8')), 'hex')`;

/**
 * One statement for the whole confirmation: its row; every line as the next version of its employee's
 * record (the highest existing version plus one, or 1, computed in SQL), whose record id is the
 * confirmation's; and the snapshot confirmed. The caller holds the pay date exclusively, so no push
 * can claim one of these versions meanwhile.
 */
export async function recordConfirmation(db: Executor, confirmation: NewConfirmation): Promise<{ id: string; received_at: Date; records: number }> {
  const result = await sql<{ id: string; received_at: Date; records: number }>`
    with confirmation as (
      insert into confirmations (payroll_id, pay_date, deduction_data_id, submitted_by_client_id, submitted_by, total_amount, employee_count, currency)
      values (${confirmation.payrollId}::uuid, ${confirmation.payDate}::date, ${confirmation.deductionDataId}::uuid, ${confirmation.submittedByClientId}::uuid,
              ${confirmation.submittedBy}::text, ${confirmation.totalAmount}::int8, ${confirmation.employeeIds.length}::int4, ${confirmation.currency}::char(3))
      returning id, received_at
    ),
    line as (
      select *
      from unnest(${confirmation.employeeIds}::uuid[], ${confirmation.amounts}::int8[], ${confirmation.leavers}::bool[])
        as l (employee_id, deduction_amount, leaver)
    ),
    latest as (
      select employee_id, max(version) as version
      from deduction_records
      where payroll_id = ${confirmation.payrollId}::uuid and pay_period = ${confirmation.payPeriod}::text
      group by employee_id
    ),
    records as (
      insert into deduction_records (
        id, payroll_id, pay_period, pay_date, employee_id, record_id, version, deduction_amount, currency, leaver,
        requested_payments, content_hash, source, confirmation_id, received_by_client_id
      )
      select ${timeOrderedUuidSql}, ${confirmation.payrollId}::uuid, ${confirmation.payPeriod}::text, ${confirmation.payDate}::date, line.employee_id,
        c.id::text, coalesce(latest.version, 0) + 1, line.deduction_amount, ${confirmation.currency}::char(3),
        line.leaver, '[]'::jsonb, ${lineContentHash(confirmation.currency)}, 'confirmation', c.id, ${confirmation.submittedByClientId}::uuid
      from line left join latest using (employee_id) cross join confirmation c
      returning 1
    ),
    snapshot as (${snapshotConfirmedSql(confirmation.deductionDataId)} returning 1)
    select c.id, c.received_at, (select count(*)::int from records) as records from confirmation c
  `.execute(db);
  return result.rows[0]!;
}

/** Records are in: a locked snapshot becomes confirmed (later states are left to reconciliation). */
const snapshotConfirmedSql = (snapshotId: string) => sql`
  update deduction_snapshots set status = 'confirmed'
  where id = ${snapshotId}::uuid and status in (${fromStatusesSql(SNAPSHOT_LIFECYCLE, 'confirmed')})`;

/** A locked snapshot confirmed on its own (recordConfirmation confirms it with the records). */
export async function markSnapshotConfirmed(db: Executor, snapshotId: string): Promise<void> {
  await snapshotConfirmedSql(snapshotId).execute(db);
}
