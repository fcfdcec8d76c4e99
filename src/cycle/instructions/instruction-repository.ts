import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import { timeOrderedUuidSql } from '../../platform/db/time-ordered-uuid-sql.ts';

/** The snapshot an instruction file is written for, with what its name and pushes depend on. */
export interface SnapshotToInstruct {
  id: string;
  payroll_id: string;
  pay_date: string;
  pay_period: string;
  snapshot_version: number;
  currency: string;
  payroll_external_id: string;
  payroll_name: string;
  employer_external_id: string;
  employer_name: string;
  api_base_url: string | null;
}

export async function findSnapshotToInstruct(db: Executor, snapshotId: string): Promise<SnapshotToInstruct | undefined> {
  return db
    .selectFrom('deduction_snapshots')
    .innerJoin('payrolls', 'payrolls.id', 'deduction_snapshots.payroll_id')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .innerJoin('employers', 'employers.id', 'payrolls.employer_id')
    .select([
      'deduction_snapshots.id',
      'deduction_snapshots.payroll_id',
      'deduction_snapshots.pay_date',
      'deduction_snapshots.pay_period',
      'deduction_snapshots.snapshot_version',
      'deduction_snapshots.currency',
      'payrolls.external_id as payroll_external_id',
      'payrolls.name as payroll_name',
      'employers.external_id as employer_external_id',
      'employers.name as employer_name',
      // A sandbox provider is simulated and never called, so nothing is queued to push to it.
      sql<string | null>`case when payroll_providers.sandbox then null else payroll_providers.api_base_url end`.as('api_base_url'),
    ])
    .where('deduction_snapshots.id', '=', snapshotId)
    .executeTakeFirst();
}

export async function findInstructionFileOfSnapshot(db: Executor, snapshotId: string) {
  return db.selectFrom('instruction_files').selectAll().where('snapshot_id', '=', snapshotId).executeTakeFirst();
}

export interface InstructionLine {
  employee_id: string;
  payroll_reference: string;
  /** Null when the employee is only on the previous instruction. */
  amount: number | null;
  /** Null when the employee was not on the previous instruction. */
  previous_amount: number | null;
  /** This pay date's line's, or on a stop the previous line's: the reference of the deduction being stopped. */
  payment_reference: string;
}

/**
 * The snapshot's lines beside what the payroll was told for the previous pay date (the lines of
 * that pay date's current snapshot), one row per employee on either. Reading the locked snapshot,
 * not its file, keeps the answer right whichever order the files of two pay dates are written in.
 * An employee only on the previous instruction is named by their current payroll reference.
 */
export async function listInstructionLines(db: Executor, snapshot: Pick<SnapshotToInstruct, 'id' | 'payroll_id' | 'pay_date'>) {
  const result = await sql<InstructionLine>`
    /* prepared: list_instruction_lines */
    with current_lines as (
      select employee_id, payroll_reference, requested_amount, payment_reference
      from deduction_lines where snapshot_id = ${snapshot.id}
    ),
    previous_lines as (
      select l.employee_id, l.requested_amount, l.payment_reference
      from deduction_snapshots s join deduction_lines l on l.snapshot_id = s.id
      where s.payroll_id = ${snapshot.payroll_id} and s.status <> 'superseded'
        and s.pay_date = (select max(pay_date) from deduction_snapshots
                          where payroll_id = ${snapshot.payroll_id} and pay_date < ${snapshot.pay_date}::date and status <> 'superseded')
    )
    select coalesce(c.employee_id, p.employee_id) as employee_id,
           coalesce(c.payroll_reference, e.payroll_reference, '') as payroll_reference,
           c.requested_amount as amount,
           p.requested_amount as previous_amount,
           coalesce(c.payment_reference, p.payment_reference) as payment_reference
    from current_lines c
    full join previous_lines p on p.employee_id = c.employee_id
    left join employments e on c.employee_id is null and e.employee_id = p.employee_id and e.payroll_id = ${snapshot.payroll_id}
  `.execute(db);
  return result.rows;
}

export interface NewInstructionItem {
  employee_id: string;
  payroll_reference: string;
  amount: number;
  previous_amount: number | null;
  currency: string;
  payment_reference: string;
  pay_period: string;
  action: 'new' | 'amend' | 'stop' | 'continue';
}

export interface NewInstructionFile {
  snapshot_id: string;
  payroll_id: string;
  pay_date: string;
  file_version: number;
  file_name: string;
  content: Buffer;
  sha256: string;
}

/**
 * Stores the file, its items and, for a provider with an API, one pending push per changed item,
 * in one statement. Returns undefined when the snapshot already has a file (a repeated job), which
 * the unique snapshot_id decides; nothing else is written then.
 */
export async function insertInstructionFile(db: Executor, file: NewInstructionFile, items: readonly NewInstructionItem[], pushToProvider: boolean) {
  const result = await sql<{ id: string }>`
    /* prepared: insert_instruction_file */
    with file as (
      insert into instruction_files (snapshot_id, payroll_id, pay_date, file_version, file_name, content, sha256, item_count)
      values (${file.snapshot_id}, ${file.payroll_id}, ${file.pay_date}::date, ${file.file_version}, ${file.file_name},
              ${file.content}, ${file.sha256}, ${items.length})
      on conflict (snapshot_id) do nothing
      returning id
    ),
    items as (
      insert into instruction_items (id, instruction_file_id, employee_id, payroll_reference, amount, previous_amount, currency, payment_reference, pay_period, action)
      select ${timeOrderedUuidSql}, file.id, i.employee_id, i.payroll_reference, i.amount, i.previous_amount, i.currency, i.payment_reference, i.pay_period, i.action
      from file, jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as i(
        employee_id uuid, payroll_reference text, amount bigint, previous_amount bigint, currency char(3),
        payment_reference text, pay_period text, action text)
      returning id, employee_id, action
    ),
    pushes as (
      -- Only changes travel to a provider's API; continue means it already has the right amount.
      insert into employee_deduction_pushes (instruction_item_id, payroll_id, employee_id)
      select items.id, ${file.payroll_id}::uuid, items.employee_id
      from items where ${pushToProvider} and items.action <> 'continue'
      on conflict (instruction_item_id) do nothing
    )
    select id from file
  `.execute(db);
  return result.rows[0];
}

export async function findInstructionFile(db: Executor, payrollId: string, payDate: string, version?: number) {
  let query = db.selectFrom('instruction_files').selectAll().where('payroll_id', '=', payrollId).where('pay_date', '=', payDate);
  if (version !== undefined) query = query.where('file_version', '=', version);
  return query.orderBy('file_version', 'desc').limit(1).executeTakeFirst();
}
