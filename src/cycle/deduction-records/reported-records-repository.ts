import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';

/**
 * What the current records of a payroll pay date add up to, leaving out the given employees (whose
 * records the caller is about to replace): exact, as a BigInt, however large stored values are.
 * Voided records never count.
 */
export async function reportedTotalOfOthers(db: Executor, payrollId: string, payDate: string, exceptEmployeeIds: readonly string[]): Promise<bigint> {
  const result = await sql<{ total: bigint }>`
    select coalesce(sum(latest.deduction_amount), 0) as total
    from (
      select distinct on (r.employee_id) r.deduction_amount
      from deduction_records r
      where r.payroll_id = ${payrollId}::uuid and r.pay_date = ${payDate}::date and r.void_id is null
        and r.employee_id <> all(${exceptEmployeeIds}::uuid[])
      order by r.employee_id, r.version desc
    ) latest
  `.execute(db);
  return result.rows[0]!.total;
}

/**
 * The payroll pay date with its payroll's currency; with `forVoid`, row-locked exclusively, as a
 * confirmation takes it, so pushes and confirmations wait for the void.
 */
export async function findPayDateWithCurrency(db: Executor, payrollId: string, payDate: string, options: { forVoid: boolean }) {
  const lock = options.forVoid ? sql`for no key update of d` : sql``;
  const result = await sql<{ currency: string }>`
    select p.currency from pay_dates d join payrolls p on p.id = d.payroll_id
    where d.payroll_id = ${payrollId}::uuid and d.pay_date = ${payDate}::date
    ${lock}
  `.execute(db);
  return result.rows[0];
}

export interface NewVoid {
  id: string;
  payrollId: string;
  payDate: string;
  reason: string;
  voidedBy: string;
}

/**
 * Voids every counting record of the payroll pay date in one statement: the void row (with how many
 * records and their total, exact) and each record pointing at it. Null when none counted.
 */
export async function voidReportedRecords(db: Executor, input: NewVoid) {
  const result = await sql<{ id: string; records: number; total_amount: bigint; voided_at: Date }>`
    with counting as (
      select id, deduction_amount from deduction_records
      where payroll_id = ${input.payrollId}::uuid and pay_date = ${input.payDate}::date and void_id is null
      for update
    ),
    void as (
      insert into deduction_record_voids (id, payroll_id, pay_date, reason, voided_by, records, total_amount)
      select ${input.id}::uuid, ${input.payrollId}::uuid, ${input.payDate}::date, ${input.reason}, ${input.voidedBy},
             count(*)::int4, coalesce(sum(deduction_amount), 0)
      from counting
      having count(*) > 0
      returning id, records, total_amount, voided_at
    ),
    marked as (
      update deduction_records r set void_id = v.id
      from void v, counting c
      where r.id = c.id
      returning 1
    )
    select id, records, total_amount, voided_at, (select count(*) from marked)::int4 as marked from void
  `.execute(db);
  return result.rows[0] ?? null;
}

/** A payroll pay date's voids, newest first. */
export async function listVoids(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_record_voids')
    .selectAll()
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .orderBy('voided_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}
