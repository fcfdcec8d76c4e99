import type { Database, Executor } from '../../platform/db/connection.ts';
import { MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { DEFAULT_AMOUNT_LIMITS, PAYMENT_LIMIT_NAME, type AmountLimits } from '../../collections/payments/amount-limits.ts';
import { ensureInstructionFile, writeInstructionFile, type InstructionFileOutcome } from '../instructions/instruction-service.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { cancelReleasedPayments, findLockContext, lockDeductionData, linkSupersededSnapshot, payrollExists, supersedeSnapshot } from './pay-date-lock-repository.ts';
import { collectsPayDate } from '../../directory/calendars/go-live.ts';
import { recordScheduleUpdatedEvents } from '../../collections/schedules/schedule-event-repository.ts';
import { settleSchedulesOfPayments } from '../../collections/schedules/schedule-settlement-repository.ts';
import { rowLockPayDatesToLock, type PayDateToLock } from './snapshot-repository.ts';

export interface PayDateLockOutcome {
  payrollId: string;
  payDate: string;
  snapshotId: string;
  snapshotVersion: number;
  /** False when the pay date was already locked and nothing was written (a repeated job). */
  created: boolean;
  employeeCount: number;
  totalAmount: number;
  currency: string;
  paymentsInstructed: number;
  /** Pending requests refused for an amount over MAX_PAYMENT_AMOUNT_MINOR: failed, with their events. */
  paymentsRefused: number;
  /** Pending requests left for the next pay date because the snapshot total would pass MAX_EXACT_MINOR_UNITS. */
  paymentsHeldBack: number;
  /**
   * Re-runs only: requests the superseded snapshot had instructed that the new version no longer asks
   * for (mandate no longer collecting, or no room under a cap), moved back to pending with their events.
   */
  paymentsReleased: number;
  /** Of those released, the ones whose mandate has ended (revoked, expired...): then cancelled, with their events. */
  paymentsCancelled: number;
  instructionFile: InstructionFileOutcome;
  /** Earlier pay dates of the payroll this job had to lock first (their own jobs then find them locked). */
  earlier?: PayDateLockOutcome[];
}

export class PayDateLockError extends Error {}

/**
 * What must change with a payroll pay date's deduction data, in the transaction that changes it: the
 * lock, a re-run and a reconciliation call it with the pay dates they locked or reconciled. A district
 * above hands it over (the job processors give the expected remittances of src/settlement/cash, which
 * the cycle never imports); it must be safe to run twice, as everything it follows is.
 */
export type PayDateFollowUp = (trx: Executor, payDates: ReadonlyArray<{ payrollId: string; payDate: string }>) => Promise<void>;

/** The pay dates a lock outcome covers: the earlier ones it had to lock first, then its own. */
export function payDatesOfLock(outcome: PayDateLockOutcome): Array<{ payrollId: string; payDate: string }> {
  return [...(outcome.earlier ?? []), outcome].map((o) => ({ payrollId: o.payrollId, payDate: o.payDate }));
}

/**
 * Why a request the lock refused failed: said in the payroll's currency, with the limit's name, since
 * the biller reads it on the payment and an operator finds the setting by it.
 */
export function refusalReason(limits: AmountLimits, currency: string): string {
  return `amount over ${formatMoney(limits.maxPaymentAmount, currency)}, the most a payment request may be (${PAYMENT_LIMIT_NAME}); payroll was not asked for it`;
}

/**
 * Locks one pay date and writes its instruction file, in the caller's transaction: the snapshot,
 * the state change of every payment request it instructs with that change's event (written by the
 * lock statement itself), and the file that tells payroll about it commit together or not at all.
 */
async function lock(trx: Executor, payDate: PayDateToLock, supersede: { snapshotId: string } | null, limits: AmountLimits): Promise<PayDateLockOutcome> {
  const { collectionAccount } = await findLockContext(trx, payDate.payroll_id, payDate.pay_date, payDate.currency);
  if (!collectionAccount) throw new PayDateLockError(`no active collection account for ${payDate.currency}`);
  if (supersede) await supersedeSnapshot(trx, supersede.snapshotId);

  const snapshotId = timeOrderedUuid();
  const locked = await lockDeductionData(trx, {
    snapshotId,
    payrollId: payDate.payroll_id,
    payDate: payDate.pay_date,
    payPeriod: payDate.pay_period,
    currency: payDate.currency,
    collectionAccount,
    supersededSnapshotId: supersede?.snapshotId ?? null,
    maxPaymentAmount: limits.maxPaymentAmount,
    maxMandateAmountPerPayDate: limits.maxMandateAmountPerPayDate,
    // The data response carries the total as a JSON number: beyond this it would not be exact.
    maxSnapshotTotal: MAX_EXACT_MINOR_UNITS,
    refusalReason: refusalReason(limits, payDate.currency),
  });
  if (supersede) await linkSupersededSnapshot(trx, supersede.snapshotId, snapshotId);
  // The schedules the lock errored (an instalment refused) tell their billers; then those of requests
  // cancelled because their mandate has ended settle if nothing else of them can collect.
  await recordScheduleUpdatedEvents(trx, locked.erroredScheduleIds);
  const paymentsCancelled = await cancelReleasedPayments(trx, locked.releasedOfEndedMandates);
  await settleSchedulesOfPayments(trx, locked.releasedOfEndedMandates);
  const instructionFile = await writeInstructionFile(trx, {
    id: snapshotId,
    payroll_id: payDate.payroll_id,
    pay_date: payDate.pay_date,
    pay_period: payDate.pay_period,
    snapshot_version: locked.snapshotVersion,
    currency: payDate.currency,
    payroll_external_id: payDate.payroll_external_id,
    payroll_name: payDate.payroll_name,
    employer_external_id: payDate.employer_external_id,
    employer_name: payDate.employer_name,
    api_base_url: payDate.api_base_url,
  });
  return {
    payrollId: payDate.payroll_id,
    payDate: payDate.pay_date,
    snapshotId,
    snapshotVersion: locked.snapshotVersion,
    created: true,
    employeeCount: locked.employeeCount,
    totalAmount: locked.totalAmount,
    currency: payDate.currency,
    paymentsInstructed: locked.paymentsInstructed,
    paymentsRefused: locked.paymentsRefused,
    paymentsHeldBack: locked.paymentsHeldBack,
    paymentsReleased: locked.paymentsReleased,
    paymentsCancelled,
    instructionFile,
  };
}

/** Row-locks the payroll and the pay date (with any earlier open ones), or says which of them does not exist. */
async function rowLockPayDates(trx: Executor, payrollId: string, payDate: string): Promise<{ target: PayDateToLock; earlier: PayDateToLock[] }> {
  const rows = await rowLockPayDatesToLock(trx, payrollId, payDate);
  const target = rows.at(-1);
  if (!target || target.pay_date !== payDate) {
    if (!(await payrollExists(trx, payrollId))) throw new PayDateLockError(`payroll ${payrollId} does not exist`);
    throw new PayDateLockError(`payroll ${payrollId} has no pay date ${payDate}`);
  }
  if (target.locked_at === null && !target.sandbox && !collectsPayDate(target.go_live_date, target.pay_date)) {
    throw new PayDateLockError(
      target.go_live_date === null
        ? `payroll ${payrollId} is not live: it has no go-live date (deductions payrolls go-live), so pay date ${payDate} is not collected`
        : `payroll ${payrollId} pay date ${payDate} is before its go-live date ${target.go_live_date}, so it is not collected`,
    );
  }
  return { target, earlier: rows.slice(0, -1) };
}

export interface LockOptions {
  /**
   * Runs in the lock's transaction with what it did (the nightly run records the outcome this
   * way), so the record and the lock commit together or not at all.
   */
  recordOutcome?: (trx: Executor, outcome: PayDateLockOutcome) => Promise<void>;
  /** The configured amount limits (amountLimitsOf(config)); the configuration's defaults when not given. */
  limits?: AmountLimits;
  /** Runs in the lock's transaction after recordOutcome, with every pay date locked (or found locked). */
  followUp?: PayDateFollowUp;
}

/**
 * Locks one payroll pay date (the nightly lock): locks its deduction data, instructs its payment
 * requests and writes its instruction file, in one transaction. Safe to run twice: the payroll row
 * lock serialises concurrent runs and an existing snapshot makes the second a no-op.
 */
export async function lockPayDate(db: Database, payrollId: string, payDate: string, options: LockOptions = {}): Promise<PayDateLockOutcome> {
  return db.transaction().execute(async (trx) => {
    const { target, earlier } = await rowLockPayDates(trx, payrollId, payDate);
    if (target.locked_at !== null) {
      const { current } = await findLockContext(trx, payrollId, payDate, target.currency);
      if (current) {
        const found: PayDateLockOutcome = {
          payrollId,
          payDate,
          snapshotId: current.id,
          snapshotVersion: current.snapshot_version,
          created: false,
          employeeCount: current.employee_count,
          totalAmount: current.total_amount,
          currency: current.currency,
          paymentsInstructed: 0,
          paymentsRefused: 0,
          paymentsHeldBack: 0,
          paymentsReleased: 0,
          paymentsCancelled: 0,
          instructionFile: await ensureInstructionFile(trx, current.id),
        };
        await options.recordOutcome?.(trx, found);
        await options.followUp?.(trx, payDatesOfLock(found));
        return found;
      }
    }
    // Pay dates must lock in date order: a later one would otherwise take the payments due on
    // an earlier one whose job has not run yet.
    const limits = options.limits ?? DEFAULT_AMOUNT_LIMITS;
    const lockedEarlier: PayDateLockOutcome[] = [];
    for (const row of earlier) lockedEarlier.push(await lock(trx, row, null, limits));
    const outcome = await lock(trx, target, null, limits);
    const locked = lockedEarlier.length > 0 ? { ...outcome, earlier: lockedEarlier } : outcome;
    await options.recordOutcome?.(trx, locked);
    await options.followUp?.(trx, payDatesOfLock(locked));
    return locked;
  });
}

/**
 * Writes a new snapshot version that supersedes the current one, with its instruction file.
 * Requests the pay date has already reconciled are carried unchanged, as they were asked; those the
 * old snapshot had instructed and that are still owed are carried without being instructed (or
 * counted as an attempt) again; new pending requests due by then join it. Those the old snapshot had
 * instructed and the new one no longer asks for go back to pending (cancelled too when their mandate
 * has ended), each change with its event, so none stays instructed with nothing to settle it.
 */
export async function relockPayDate(
  trx: Executor,
  payrollId: string,
  payDate: string,
  limits: AmountLimits = DEFAULT_AMOUNT_LIMITS,
): Promise<PayDateLockOutcome & { previousSnapshotId: string }> {
  const { target } = await rowLockPayDates(trx, payrollId, payDate);
  const { current } = await findLockContext(trx, payrollId, payDate, target.currency);
  if (!current) throw new PayDateLockError(`payroll ${payrollId} pay date ${payDate} has not been locked yet; nothing to re-run`);
  const outcome = await lock(trx, target, { snapshotId: current.id }, limits);
  return { ...outcome, previousSnapshotId: current.id };
}
