import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { InstructionAction } from '../../platform/db/tables.ts';

/** The payroll a return file is imported into: whose it is, how the instruction file named it, its currency. */
export async function findPayrollOfReturn(db: Executor, payrollId: string) {
  return db.selectFrom('payrolls').select(['id', 'payroll_provider_id', 'external_id', 'currency']).where('id', '=', payrollId).executeTakeFirst();
}

/**
 * The instruction file of the pay date's current snapshot (the one a re-run wrote last), with what a
 * confirmation of it needs: the snapshot (the deduction data it answers) and its pay period.
 */
export async function findCurrentInstructionFile(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('instruction_files as f')
    .innerJoin('deduction_snapshots as s', 's.id', 'f.snapshot_id')
    .select(['f.id', 'f.snapshot_id', 'f.file_version', 'f.file_name', 'f.content', 's.pay_period'])
    .where('f.payroll_id', '=', payrollId)
    .where('f.pay_date', '=', payDate)
    .where('s.status', '!=', 'superseded')
    .executeTakeFirst();
}

export async function listInstructionItemsOfFile(db: Executor, instructionFileId: string) {
  return db
    .selectFrom('instruction_items')
    .select(['employee_id', 'payroll_reference', 'payment_reference', 'amount', 'action'])
    .where('instruction_file_id', '=', instructionFileId)
    .execute() as Promise<Array<{ employee_id: string; payroll_reference: string; payment_reference: string | null; amount: number; action: InstructionAction }>>;
}

/** The content hash of each given employee's counting record of the pay date (its latest version not voided). */
export async function listCurrentRecordHashes(db: Executor, payrollId: string, payDate: string, employeeIds: readonly string[]) {
  const result = await sql<{ employee_id: string; content_hash: string }>`
    select distinct on (r.employee_id) r.employee_id, r.content_hash
    from deduction_records r
    where r.payroll_id = ${payrollId}::uuid and r.pay_date = ${payDate}::date and r.void_id is null
      and r.employee_id = any(${employeeIds}::uuid[])
    order by r.employee_id, r.version desc
  `.execute(db);
  return result.rows;
}

/** The last applied import of the same bytes into this payroll pay date. */
export async function findLatestReturnImportOfFile(db: Executor, payrollId: string, payDate: string, sha256: string) {
  return db
    .selectFrom('deduction_return_imports')
    .select(['id', 'imported_at', 'imported_by', 'confirmation_id'])
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .where('file_sha256', '=', sha256)
    .orderBy('imported_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export interface NewReturnImport {
  payroll_id: string;
  pay_date: string;
  instruction_file_id: string;
  confirmation_id: string;
  file_sha256: string;
  partial: boolean;
  rows: number;
  confirmed: number;
  rejected: number;
  error_count: number;
  imported_by: string;
}

export async function insertReturnImport(db: Executor, row: NewReturnImport) {
  return db.insertInto('deduction_return_imports').values(row).returning(['id', 'imported_at']).executeTakeFirstOrThrow();
}

/** A payroll pay date's applied return file imports, newest first. */
export async function listReturnImports(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('deduction_return_imports')
    .selectAll()
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', payDate)
    .orderBy('imported_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}
