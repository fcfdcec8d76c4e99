import type { Database, Executor } from '../../platform/db/connection.ts';
import { instructionItems } from './instruction-action.ts';
import { instructionFileName, renderInstructionFile, sha256Hex } from './instruction-file.ts';
import {
  findInstructionFileOfSnapshot,
  findSnapshotToInstruct,
  insertInstructionFile,
  listInstructionLines,
  type NewInstructionItem,
  type SnapshotToInstruct,
} from './instruction-repository.ts';

export interface InstructionFileOutcome {
  instructionFileId: string;
  fileName: string;
  sha256: string;
  version: number;
  created: boolean;
}

/**
 * Writes the instruction file of a snapshot just locked, in the transaction that locked it: one item
 * per employee with the action against the previous pay date's instruction. The file's version is
 * the snapshot's, so a re-run's file is the next version. One file per snapshot (a unique key): if
 * the snapshot already has one, that one is returned and nothing is written.
 */
export async function writeInstructionFile(trx: Executor, snapshot: SnapshotToInstruct): Promise<InstructionFileOutcome> {
  const lines = await listInstructionLines(trx, snapshot);
  const byEmployee = new Map(lines.map((line) => [line.employee_id, line]));
  const items: NewInstructionItem[] = instructionItems(
    lines.filter((line) => line.previous_amount !== null).map((line) => ({ employeeId: line.employee_id, amount: line.previous_amount! })),
    lines.filter((line) => line.amount !== null).map((line) => ({ employeeId: line.employee_id, amount: line.amount! })),
  ).map((item) => {
    const line = byEmployee.get(item.employeeId)!;
    return {
      employee_id: item.employeeId,
      payroll_reference: line.payroll_reference,
      amount: item.amount,
      previous_amount: item.previousAmount,
      currency: snapshot.currency,
      payment_reference: line.payment_reference,
      pay_period: snapshot.pay_period,
      action: item.action,
    };
  });
  const version = snapshot.snapshot_version;
  const content = renderInstructionFile(
    {
      employer_name: snapshot.employer_name,
      employer_external_id: snapshot.employer_external_id,
      payroll_name: snapshot.payroll_name,
      payroll_external_id: snapshot.payroll_external_id,
      pay_date: snapshot.pay_date,
      pay_period: snapshot.pay_period,
      currency: snapshot.currency,
      file_version: version,
    },
    items,
  );
  const fileName = instructionFileName({ employerName: snapshot.employer_name, payrollName: snapshot.payroll_name, payDate: snapshot.pay_date, version });
  const sha256 = sha256Hex(content);
  const inserted = await insertInstructionFile(
    trx,
    { snapshot_id: snapshot.id, payroll_id: snapshot.payroll_id, pay_date: snapshot.pay_date, file_version: version, file_name: fileName, content, sha256 },
    items,
    snapshot.api_base_url !== null,
  );
  if (inserted) return { instructionFileId: inserted.id, fileName, sha256, version, created: true };
  return existingFile((await findInstructionFileOfSnapshot(trx, snapshot.id))!);
}

function existingFile(file: { id: string; file_name: string; sha256: string; file_version: number }): InstructionFileOutcome {
  return { instructionFileId: file.id, fileName: file.file_name, sha256: file.sha256, version: file.file_version, created: false };
}

/**
 * The snapshot's instruction file, written now if it has none. Every lock and re-run writes its
 * file with its snapshot; this covers a snapshot that reached the database some other way.
 */
export async function ensureInstructionFile(db: Database | Executor, snapshotId: string): Promise<InstructionFileOutcome> {
  const existing = await findInstructionFileOfSnapshot(db, snapshotId);
  if (existing) return existingFile(existing);
  const snapshot = await findSnapshotToInstruct(db, snapshotId);
  if (!snapshot) throw new Error(`deduction snapshot ${snapshotId} does not exist`);
  return writeInstructionFile(db, snapshot);
}

/** How an instruction file is served wherever it is downloaded: CSV, named, with its SHA-256 digest. */
export function instructionFileHeaders(file: { file_name: string; sha256: string }): Record<string, string> {
  return {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="${file.file_name}"`,
    digest: `sha-256=${Buffer.from(file.sha256, 'hex').toString('base64')}`,
  };
}
