import type { Database } from '../db/connection.ts';
import { ensureInstructionFile } from './instruction-service.ts';
import { findCurrentSnapshot } from './lock-repository.ts';
import { LockError, relockPayDate } from './lock-service.ts';
import { completeRerun, insertRerun, lockRerun } from './rerun-repository.ts';

export interface RerunRequest {
  payrollId: string;
  payDate: string;
  reason: string;
  requestedBy: string;
}

/** Records who asks to re-run which pay date and why; the job does the work. */
export async function requestRerun(db: Database, request: RerunRequest) {
  if (request.reason.trim().length === 0) throw new LockError('a re-run needs a reason');
  const current = await findCurrentSnapshot(db, request.payrollId, request.payDate);
  if (!current) throw new LockError(`payroll ${request.payrollId} pay date ${request.payDate} has not been locked; there is nothing to re-run`);
  return insertRerun(db, {
    payroll_id: request.payrollId,
    pay_date: request.payDate,
    reason: request.reason.trim(),
    requested_by: request.requestedBy,
    previous_snapshot_id: current.id,
  });
}

export interface RerunOutcome {
  rerunId: string;
  payrollId: string;
  payDate: string;
  previousSnapshotId: string;
  snapshotId: string;
  snapshotVersion: number;
  instructionFile: string;
  created: boolean;
}

/**
 * Supersedes the pay date's snapshot with a new version and its instruction file. Running the
 * same re-run twice does it once: the re-run row is locked and completed in the same transaction
 * as the new snapshot.
 */
export async function performRerun(db: Database, rerunId: string): Promise<RerunOutcome> {
  return db.transaction().execute(async (trx) => {
    const rerun = await lockRerun(trx, rerunId);
    if (!rerun) throw new LockError(`re-run ${rerunId} does not exist`);
    if (rerun.completed_at && rerun.new_snapshot_id) {
      const file = await ensureInstructionFile(trx, rerun.new_snapshot_id);
      return {
        rerunId,
        payrollId: rerun.payroll_id,
        payDate: rerun.pay_date,
        previousSnapshotId: rerun.previous_snapshot_id!,
        snapshotId: rerun.new_snapshot_id,
        snapshotVersion: file.version,
        instructionFile: file.fileName,
        created: false,
      };
    }
    const outcome = await relockPayDate(trx, rerun.payroll_id, rerun.pay_date);
    await completeRerun(trx, rerun.id, outcome.snapshotId);
    return {
      rerunId,
      payrollId: rerun.payroll_id,
      payDate: rerun.pay_date,
      previousSnapshotId: outcome.previousSnapshotId,
      snapshotId: outcome.snapshotId,
      snapshotVersion: outcome.snapshotVersion,
      instructionFile: outcome.instructionFile.fileName,
      created: true,
    };
  });
}
