import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';
import { SNAPSHOT_LIFECYCLE } from '../snapshots/snapshot-transitions.ts';

export async function findSnapshot(db: Executor, snapshotId: string) {
  return db
    .selectFrom('deduction_snapshots')
    .select(['id', 'payroll_id', 'pay_date', 'pay_period', 'status', 'currency'])
    .where('id', '=', snapshotId)
    .executeTakeFirst();
}

/** Zero-based positions of the employee ids that have no employment on the payroll. */
export async function findPositionsNotOnPayroll(db: Executor, payrollId: string, employeeIds: readonly string[]): Promise<number[]> {
  const result = await sql<{ position: number }>`
    select (line.ordinality - 1)::int4 as position
    from unnest(${employeeIds}::uuid[]) with ordinality as line (employee_id, ordinality)
    where not exists (
      select 1 from employments e where e.payroll_id = ${payrollId} and e.employee_id = line.employee_id
    )
    order by line.ordinality
  `.execute(db);
  return result.rows.map((row) => row.position);
}

export async function insertConfirmation(
  db: Executor,
  confirmation: {
    payrollId: string;
    payDate: string;
    deductionDataId: string;
    submittedByClientId: string;
    totalAmount: number;
    employeeCount: number;
    currency: string;
  },
) {
  return db
    .insertInto('confirmations')
    .values({
      payroll_id: confirmation.payrollId,
      pay_date: confirmation.payDate,
      deduction_data_id: confirmation.deductionDataId,
      submitted_by_client_id: confirmation.submittedByClientId,
      total_amount: confirmation.totalAmount,
      employee_count: confirmation.employeeCount,
      currency: confirmation.currency,
    })
    .returning(['id', 'received_at'])
    .executeTakeFirstOrThrow();
}

export interface ConfirmationRecords {
  confirmationId: string;
  payrollId: string;
  payPeriod: string;
  payDate: string;
  currency: string;
  receivedByClientId: string;
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
 * One statement for the whole pay date: every line becomes the next version of its employee's
 * record (the highest existing version plus one, or 1), computed in SQL. The caller holds the pay
 * date exclusively, so no push can claim one of these versions meanwhile.
 */
export async function insertConfirmationRecords(db: Executor, records: ConfirmationRecords): Promise<number> {
  const result = await sql`
    with line as (
      select *
      from unnest(${records.employeeIds}::uuid[], ${records.amounts}::int8[], ${records.leavers}::bool[])
        as l (employee_id, deduction_amount, leaver)
    ),
    latest as (
      select employee_id, max(version) as version
      from deduction_records
      where payroll_id = ${records.payrollId}::uuid and pay_period = ${records.payPeriod}::text
      group by employee_id
    )
    insert into deduction_records (
      payroll_id, pay_period, pay_date, employee_id, record_id, version, deduction_amount, currency, leaver,
      requested_payments, content_hash, source, confirmation_id, received_by_client_id
    )
    select ${records.payrollId}::uuid, ${records.payPeriod}::text, ${records.payDate}::date, line.employee_id,
      ${records.confirmationId}::text, coalesce(latest.version, 0) + 1, line.deduction_amount, ${records.currency}::char(3),
      line.leaver, '[]'::jsonb, ${lineContentHash(records.currency)}, 'confirmation', ${records.confirmationId}::uuid, ${records.receivedByClientId}::uuid
    from line left join latest using (employee_id)
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Records are in: a locked snapshot becomes confirmed (later states are left to reconciliation). */
export async function markSnapshotConfirmed(db: Executor, snapshotId: string): Promise<void> {
  await db
    .updateTable('deduction_snapshots')
    .set({ status: 'confirmed' })
    .where('id', '=', snapshotId)
    .where('status', 'in', SNAPSHOT_LIFECYCLE.fromStatuses('confirmed'))
    .execute();
}
