import { sql } from 'kysely';
import type { Executor } from '../db/connection.ts';

export async function findSnapshot(db: Executor, snapshotId: string) {
  return db
    .selectFrom('deduction_snapshots')
    .innerJoin('payrolls', 'payrolls.id', 'deduction_snapshots.payroll_id')
    .innerJoin('payroll_providers', 'payroll_providers.id', 'payrolls.payroll_provider_id')
    .select([
      'deduction_snapshots.id',
      'deduction_snapshots.payroll_id',
      'deduction_snapshots.pay_date',
      'deduction_snapshots.pay_period',
      'deduction_snapshots.snapshot_version',
      'deduction_snapshots.currency',
      'payrolls.external_id as payroll_external_id',
      'payroll_providers.api_base_url',
    ])
    .where('deduction_snapshots.id', '=', snapshotId)
    .executeTakeFirst();
}

export async function findInstructionFileOfSnapshot(db: Executor, snapshotId: string) {
  return db.selectFrom('instruction_files').selectAll().where('snapshot_id', '=', snapshotId).executeTakeFirst();
}

/**
 * What the payroll was told for the previous pay date: the lines of that pay date's current
 * snapshot. Reading the frozen snapshot, not its file, keeps the answer right whichever order
 * the files of two pay dates happen to be written in.
 */
export async function findPreviousInstructionItems(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_lines')
    .innerJoin('deduction_snapshots', 'deduction_snapshots.id', 'deduction_lines.snapshot_id')
    .select(['deduction_lines.employee_id', 'deduction_lines.requested_amount as amount', 'deduction_lines.payroll_reference'])
    .where('deduction_snapshots.payroll_id', '=', payrollId)
    .where('deduction_snapshots.status', '!=', 'superseded')
    .where('deduction_snapshots.pay_date', '=', (eb) =>
      eb
        .selectFrom('deduction_snapshots as previous')
        .select((inner) => inner.fn.max('previous.pay_date').as('pay_date'))
        .where('previous.payroll_id', '=', payrollId)
        .where('previous.pay_date', '<', payDate)
        .where('previous.status', '!=', 'superseded'),
    )
    .execute();
}

export async function nextInstructionFileVersion(db: Executor, payrollId: string, payDate: string): Promise<number> {
  const row = await db
    .selectFrom('instruction_files')
    .select((eb) => eb.fn.coalesce(eb.fn.max('file_version'), eb.lit(0)).as('latest'))
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .executeTakeFirstOrThrow();
  return Number(row.latest) + 1;
}

export async function listLinesForInstruction(db: Executor, snapshotId: string) {
  return db
    .selectFrom('deduction_lines')
    .select(['employee_id', 'payroll_reference', 'requested_amount', 'payment_reference'])
    .where('snapshot_id', '=', snapshotId)
    .execute();
}

export async function payrollReferences(db: Executor, payrollId: string, employeeIds: readonly string[]) {
  if (employeeIds.length === 0) return new Map<string, string>();
  const rows = await db
    .selectFrom('employments')
    .select(['employee_id', 'payroll_reference'])
    .where('payroll_id', '=', payrollId)
    .where('employee_id', 'in', employeeIds)
    .execute();
  return new Map(rows.map((row) => [row.employee_id, row.payroll_reference]));
}

export interface NewInstructionItem {
  employee_id: string;
  payroll_reference: string;
  amount: number;
  previous_amount: number | null;
  currency: string;
  payment_reference: string | null;
  pay_period: string;
  action: 'new' | 'amend' | 'stop' | 'continue';
}

/**
 * Stores the file and its items; returns undefined when the snapshot already has a file (a
 * repeated job), which the unique snapshot_id decides.
 */
export async function insertInstructionFile(
  db: Executor,
  file: { snapshot_id: string; payroll_id: string; pay_date: string; file_version: number; file_name: string; content: Buffer; sha256: string },
  items: readonly NewInstructionItem[],
  pushToProvider: boolean,
) {
  const inserted = await db
    .insertInto('instruction_files')
    .values({ ...file, item_count: items.length })
    .onConflict((oc) => oc.column('snapshot_id').doNothing())
    .returning(['id', 'file_name', 'sha256', 'file_version'])
    .executeTakeFirst();
  if (!inserted || items.length === 0) return inserted;
  const stored = await sql<{ id: string; employee_id: string; action: string }>`
    insert into instruction_items (instruction_file_id, employee_id, payroll_reference, amount, previous_amount, currency, payment_reference, pay_period, action)
    select ${inserted.id}::uuid, i.employee_id, i.payroll_reference, i.amount, i.previous_amount, i.currency, i.payment_reference, i.pay_period, i.action
    from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as i(
      employee_id uuid, payroll_reference text, amount bigint, previous_amount bigint, currency char(3),
      payment_reference text, pay_period text, action text)
    returning id, employee_id, action
  `.execute(db);
  if (pushToProvider) {
    // Only changes travel to a provider's API; `continue` means it already has the right amount.
    const changed = stored.rows.filter((item) => item.action !== 'continue');
    if (changed.length > 0) {
      await db
        .insertInto('employee_deduction_pushes')
        .values(changed.map((item) => ({ instruction_item_id: item.id, payroll_id: file.payroll_id, employee_id: item.employee_id })))
        .onConflict((oc) => oc.column('instruction_item_id').doNothing())
        .execute();
    }
  }
  return inserted;
}

export async function findInstructionFile(db: Executor, payrollId: string, payDate: string, version?: number) {
  let query = db.selectFrom('instruction_files').selectAll().where('payroll_id', '=', payrollId).where('pay_date', '=', payDate);
  if (version !== undefined) query = query.where('file_version', '=', version);
  return query.orderBy('file_version', 'desc').limit(1).executeTakeFirst();
}
