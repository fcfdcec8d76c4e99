import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { DEFAULT_AMOUNT_LIMITS, type AmountLimits } from '../../collections/payments/amount-limits.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { ensureInstructionFile } from '../instructions/instruction-service.ts';
import { PayDateLockError, relockPayDate, type PayDateFollowUp } from '../snapshots/pay-date-lock-service.ts';
import { payDateStateOf, rerunConfirmationQuestion, rerunNeedsConfirmation, type PayDateState } from './rerun-confirmation.ts';
import { completeRerun, findRerunTarget, insertRerunRequest, listRerunRequests, rowLockRerun, openOrJoinRerun } from './rerun-repository.ts';

export interface RerunRequest {
  payrollId: string;
  payDate: string;
  reason: string;
  /** Who asks: kept as the request's requested_by and as the audit entry's actor (CLI user, console email or API client). */
  actor: Actor;
  /**
   * The asker confirmed re-running a pay date already reconciled or paid out (rerunNeedsConfirmation):
   * the command line's prompt or --force, the API's `force: true`, the console's checkbox.
   */
  force?: boolean;
}

/** The name a re-run request is recorded under: the person, or the API client's id. */
function requesterName(actor: Actor): string {
  return actor.kind === 'client' ? actor.clientId : actor.user;
}

export interface RecordedRerunRequest {
  /** The re-run that will answer this request. */
  id: string;
  requestId: string;
  /** True when the request joined a re-run someone else had asked for and that had not started locking. */
  joined: boolean;
  /** Where the pay date was when asked: a reconciled or paid-out one was re-run because the asker confirmed it. */
  payDateState: PayDateState;
}

/**
 * Records who asks to re-run which pay date and why, against the pay date's open re-run: a request
 * joins the re-run already asked for while its lock has not begun, and opens the next one when it
 * has (the lock could not reflect a change made just before this request). So however many
 * operators ask at once, a pay date gets at most the re-run being locked and one more after it.
 * The job does the work.
 */
export async function requestRerun(db: Database, request: RerunRequest): Promise<RecordedRerunRequest> {
  return db.transaction().execute((trx) => recordRerunRequest(trx, request));
}

function checkRerunRequest(request: RerunRequest): void {
  if (request.reason.trim().length === 0) throw new InvalidError('invalid-value', 'a re-run needs a reason');
  if (!isUuid(request.payrollId)) throw new NotFoundError(`Payroll ${request.payrollId}`);
}

/** Where the pay date is, as a re-run sees it (the console asks before offering one); null for an unknown payroll or pay date. */
export async function payDateStateForRerun(db: Executor, payrollId: string, payDate: string): Promise<PayDateState | null> {
  if (!isUuid(payrollId)) return null;
  const target = await findRerunTarget(db, payrollId, payDate);
  if (!target?.pay_date) return null;
  const status = target.current_snapshot_status === 'superseded' ? null : target.current_snapshot_status;
  return payDateStateOf({ currentSnapshotStatus: status, paidOut: target.paid_out });
}

/**
 * requestRerun in the caller's transaction (the API's, which stores its answer with it). Refused
 * without a write: an unknown payroll or pay date (not found), one never locked (rerun-refused),
 * one reconciled or paid out unless `force` (rerun-confirmation-required, with `pay_date_state`).
 */
export async function recordRerunRequest(trx: Executor, request: RerunRequest): Promise<RecordedRerunRequest> {
  checkRerunRequest(request);
  const reason = request.reason.trim();
  const target = await findRerunTarget(trx, request.payrollId, request.payDate);
  if (!target) throw new NotFoundError(`Payroll ${request.payrollId}`);
  if (!target.pay_date) throw new NotFoundError(`Pay date ${request.payDate} of payroll ${request.payrollId}`);
  if (!target.current_snapshot_id || !target.current_snapshot_status || target.current_snapshot_status === 'superseded') {
    throw new ConflictError('rerun-refused', `payroll ${request.payrollId} pay date ${request.payDate} has not been locked; there is nothing to re-run`);
  }
  const state = payDateStateOf({ currentSnapshotStatus: target.current_snapshot_status, paidOut: target.paid_out });
  if (rerunNeedsConfirmation(state) && !request.force) {
    throw new ConflictError('rerun-confirmation-required', rerunConfirmationQuestion(request.payrollId, request.payDate, state as 'reconciled' | 'paid_out'), {
      members: { pay_date_state: state },
    });
  }
  const rerun = await openOrJoinRerun(trx, request.payrollId, request.payDate);
  const recorded = await insertRerunRequest(trx, { rerun_id: rerun.id, reason, requested_by: requesterName(request.actor) });
  // rerun_requests keeps the re-run's own story; the audit log lists it beside every other money action.
  await recordAction(trx, {
    actor: request.actor,
    action: 'rerun.requested',
    resourceType: 'rerun',
    resourceId: rerun.id,
    reason,
    before: { payroll_id: request.payrollId, pay_date: request.payDate, snapshot_id: target.current_snapshot_id, pay_date_state: state },
    after: { rerun_request_id: recorded.id, joined: !rerun.opened, ...(rerunNeedsConfirmation(state) ? { confirmed: true } : {}) },
  });
  return { id: rerun.id, requestId: recorded.id, joined: !rerun.opened, payDateState: state };
}

export interface RerunRequestRecord {
  reason: string;
  requestedBy: string;
  requestedAt: string;
}

export interface RerunOutcome {
  rerunId: string;
  payrollId: string;
  payDate: string;
  previousSnapshotId: string;
  snapshotId: string;
  snapshotVersion: number;
  instructionFile: string;
  /** Every request this re-run answers, first first. */
  requests: RerunRequestRecord[];
  created: boolean;
}

/**
 * Supersedes the pay date's snapshot with a new version and its instruction file. Running the
 * same re-run twice does it once: the re-run row is locked and completed in the same transaction
 * as the new snapshot. Holding that row lock for the whole lock is what makes a late request wait
 * and open the next re-run rather than join one whose data was already read. `followUp` runs in
 * that transaction with the pay date (the job gives the expected remittance, which the new request changes).
 */
export async function performRerun(db: Database, rerunId: string, limits: AmountLimits = DEFAULT_AMOUNT_LIMITS, followUp?: PayDateFollowUp): Promise<RerunOutcome> {
  return db.transaction().execute(async (trx) => {
    const rerun = await rowLockRerun(trx, rerunId);
    if (!rerun) throw new PayDateLockError(`re-run ${rerunId} does not exist`);
    const requests = (await listRerunRequests(trx, rerunId)).map((r) => ({
      reason: r.reason,
      requestedBy: r.requested_by,
      requestedAt: r.requested_at.toISOString(),
    }));
    if (rerun.completed_at && rerun.new_snapshot_id) {
      const file = await ensureInstructionFile(trx, rerun.new_snapshot_id);
      await followUp?.(trx, [{ payrollId: rerun.payroll_id, payDate: rerun.pay_date }]);
      return {
        rerunId,
        payrollId: rerun.payroll_id,
        payDate: rerun.pay_date,
        previousSnapshotId: rerun.previous_snapshot_id!,
        snapshotId: rerun.new_snapshot_id,
        snapshotVersion: file.version,
        instructionFile: file.fileName,
        requests,
        created: false,
      };
    }
    const outcome = await relockPayDate(trx, rerun.payroll_id, rerun.pay_date, limits);
    await completeRerun(trx, rerun.id, { previous: outcome.previousSnapshotId, current: outcome.snapshotId });
    await followUp?.(trx, [{ payrollId: rerun.payroll_id, payDate: rerun.pay_date }]);
    return {
      rerunId,
      payrollId: rerun.payroll_id,
      payDate: rerun.pay_date,
      previousSnapshotId: outcome.previousSnapshotId,
      snapshotId: outcome.snapshotId,
      snapshotVersion: outcome.snapshotVersion,
      instructionFile: outcome.instructionFile.fileName,
      requests,
      created: true,
    };
  });
}
