import type { Database } from '../db/connection.ts';
import { instructionItems } from './instruction-action.ts';
import { instructionFileName, renderInstructionFile, sha256Hex } from './instruction-file.ts';
import {
  findInstructionFileOfSnapshot,
  findPreviousInstructionItems,
  findSnapshot,
  insertInstructionFile,
  listLinesForInstruction,
  nextInstructionFileVersion,
  payrollReferences,
  type NewInstructionItem,
} from './instruction-repository.ts';

export interface InstructionFileOutcome {
  instructionFileId: string;
  fileName: string;
  sha256: string;
  version: number;
  created: boolean;
}

/**
 * Writes the instruction file of a locked snapshot: one item per employee with the action against
 * the previous pay date's instruction. One file per snapshot (a unique key), so a repeated job
 * returns the file that exists.
 */
export async function writeInstructionFile(db: Database, snapshotId: string): Promise<InstructionFileOutcome> {
  return db.transaction().execute(async (trx) => {
    const existing = await findInstructionFileOfSnapshot(trx, snapshotId);
    if (existing) {
      return { instructionFileId: existing.id, fileName: existing.file_name, sha256: existing.sha256, version: existing.file_version, created: false };
    }
    const snapshot = await findSnapshot(trx, snapshotId);
    if (!snapshot) throw new Error(`deduction snapshot ${snapshotId} does not exist`);
    const [lines, previous] = await Promise.all([
      listLinesForInstruction(trx, snapshotId),
      findPreviousInstructionItems(trx, snapshot.payroll_id, snapshot.pay_date),
    ]);
    const currentById = new Map(lines.map((line) => [line.employee_id, line]));
    const stoppedReferences = await payrollReferences(
      trx,
      snapshot.payroll_id,
      previous.filter((p) => !currentById.has(p.employee_id)).map((p) => p.employee_id),
    );
    const items: NewInstructionItem[] = instructionItems(
      previous.map((p) => ({ employeeId: p.employee_id, amount: p.amount })),
      lines.map((line) => ({ employeeId: line.employee_id, amount: line.requested_amount })),
    ).map((item) => {
      const line = currentById.get(item.employeeId);
      return {
        employee_id: item.employeeId,
        payroll_reference: line?.payroll_reference ?? stoppedReferences.get(item.employeeId) ?? '',
        amount: item.amount,
        previous_amount: item.previousAmount,
        currency: snapshot.currency,
        payment_reference: line?.payment_reference ?? null,
        pay_period: snapshot.pay_period,
        action: item.action,
      };
    });
    const content = renderInstructionFile(items);
    const version = await nextInstructionFileVersion(trx, snapshot.payroll_id, snapshot.pay_date);
    const fileName = instructionFileName(snapshot.payroll_external_id, snapshot.pay_date, version);
    const sha256 = sha256Hex(content);
    const inserted = await insertInstructionFile(
      trx,
      { snapshot_id: snapshotId, payroll_id: snapshot.payroll_id, pay_date: snapshot.pay_date, file_version: version, file_name: fileName, content, sha256 },
      items,
      snapshot.api_base_url !== null,
    );
    return { instructionFileId: inserted!.id, fileName, sha256, version, created: true };
  });
}
