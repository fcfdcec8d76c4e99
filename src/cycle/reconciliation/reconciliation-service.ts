import type { Database } from '../../platform/db/connection.ts';
import { bankHolidayRegions } from '../../directory/calendars/bank-holidays.ts';
import { loadHolidays } from '../../directory/calendars/bank-holiday-repository.ts';
import { listPayDates } from '../../directory/calendars/calendar-repository.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import { isPayDateOpen } from '../../directory/calendars/target-pay-date.ts';
import { formatCalendarDate, parseCalendarDate, subtractWorkingDays } from '../../directory/calendars/working-days.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import { SNAPSHOT_LIFECYCLE } from '../snapshots/snapshot-transitions.ts';
import { findCurrentSnapshotForUpdate, rowLockPayDateForReconciliation } from '../snapshots/snapshot-repository.ts';
import type { PayDateFollowUp } from '../snapshots/pay-date-lock-service.ts';
import { planReconciliation, type PaymentToReconcile } from './reconciliation-plan.ts';
import {
  findPayDatesDueForReconciliation,
  findPayDatesThatCanTakeMore,
  loadCurrentExceptions,
  loadLatestRecords,
  loadPaymentsToReconcile,
  supersedeExceptions,
  writeReconciliation,
  type PaymentToReconcileRow,
} from './reconciliation-repository.ts';
import { settleSchedules } from '../../collections/schedules/schedule-settlement-repository.ts';
import { completeReconciliationRun, failReconciliationRun, insertReconciliationRun } from './reconciliation-run-repository.ts';
import type { ReconciliationRunTrigger } from '../../platform/db/tables.ts';
import type { Executor } from '../../platform/db/connection.ts';

/** Working days after a pay date during which payroll may still report; then it is reconciled as final. */
export const SETTLEMENT_WINDOW_WORKING_DAYS = 3;
/** How far back the nightly sweep looks for records that arrived after a pay date was reconciled. */
export const LATE_RECORD_LOOKBACK_DAYS = 90;
/** The default service time zone (SERVICE_TIME_ZONE), for callers that do not pass `today`. */
const DEFAULT_SERVICE_TIME_ZONE = 'Europe/London';

export interface ReconcileOptions {
  /** Past the settlement window: employees without a record count as deducted 0. */
  final?: boolean;
  /** The service's calendar date; decides which later pay date a shortfall can be carried to. */
  today?: string;
  timeZone?: string;
  /** What started this run, for its row in reconciliation_runs; `direct` when not said. */
  trigger?: ReconciliationRunTrigger;
  triggeredBy?: string | null;
  /**
   * Runs in the reconciliation's transaction with its pay date, once it has a current snapshot (the job
   * gives the expected remittance, which follows what payroll reported).
   */
  followUp?: PayDateFollowUp;
}

export interface ReconciliationSummary {
  payrollId: string;
  payDate: string;
  /** Null when the pay date has no current snapshot (not locked): nothing was done. */
  snapshotId: string | null;
  snapshotStatus: CurrentSnapshotStatus | null;
  employees: number;
  /** Minor units collected on this pay date by the reconciled employees. */
  collected: number;
  carried: number;
  failed: number;
  partially: number;
  /** Exceptions newly recorded by this run (new, or replacing one whose figure changed). */
  exceptions: number;
  /** Earlier exceptions this run found no longer right: superseded, no longer counted. */
  exceptionsSuperseded: number;
  /** Ledger entries newly posted by this run. */
  ledgerEntries: number;
  paymentsUpdated: number;
  /** Later pay dates of the payroll to reconcile again: this run changed money they build on. */
  laterPayDatesToReconcile: string[];
  /** Earlier pay dates of the payroll to reconcile again: what they may take of a payment follows what this run collected of it. */
  earlierPayDatesToReconcile: string[];
}

/** Every other pay date a reconciliation asks to reconcile after it, later and earlier alike. */
export function payDatesToReconcileAfter(summary: Pick<ReconciliationSummary, 'laterPayDatesToReconcile' | 'earlierPayDatesToReconcile'>): string[] {
  return [...summary.laterPayDatesToReconcile, ...summary.earlierPayDatesToReconcile];
}

type CurrentSnapshotStatus = 'locked' | 'confirmed' | 'reconciled';

/** A row changed between read and write; the transaction rolls back and the job retries. */
export class ConcurrentReconciliationError extends Error {
  override readonly name = 'ConcurrentReconciliationError';
}

function toPaymentToReconcile(row: PaymentToReconcileRow): PaymentToReconcile {
  return {
    id: row.id,
    employeeId: row.employee_id,
    mandateId: row.mandate_id,
    billerClientId: row.biller_client_id,
    scheduleId: row.schedule_id,
    currency: row.currency,
    amount: row.amount,
    collectedAmount: row.collected_amount,
    paidOutAmount: row.paid_out_amount,
    status: row.status,
    version: row.version,
    attempts: row.attempts,
    dueDate: row.due_date,
    createdAt: row.created_at.toISOString(),
    allowPostDueDateDeduction: row.allow_post_due_date_deduction,
    targetPayDate: row.target_pay_date,
    mandateActive: row.mandate_active,
    snapshotRequested: row.snapshot_requested,
    attempt:
      row.attempt_id === null
        ? null
        : {
            id: row.attempt_id,
            attemptNumber: row.attempt_number!,
            requestedAmount: row.attempt_requested!,
            deductedAmount: row.attempt_deducted,
            collectedAmount: row.attempt_collected!,
            shortfallAmount: row.attempt_shortfall!,
            outcome: row.attempt_outcome,
            carriedToPayDate: row.attempt_carried_to,
            pushVersion: row.attempt_push_version,
            revision: row.attempt_revision!,
          },
    highestAttemptNumber: row.highest_attempt_number,
    claimedByPayDate: row.claimed_by_pay_date,
    earlierAttemptPayDates: row.earlier_attempt_pay_dates ?? [],
  };
}

/**
 * Reconciliation (docs/finance.md, *Deductions in, reconciliation, ledger and payouts*) for one payroll pay date, in one transaction and a handful of
 * set-based statements: latest record per employee against the current snapshot, allocation,
 * collection attempts, ledger postings (reversal plus new entry when a figure changes), payment
 * statuses with their events, exceptions, snapshot and schedule statuses. Running it again over the
 * same records writes nothing.
 */
export async function reconcilePayDate(db: Database, payrollId: string, payDate: string, options: ReconcileOptions = {}): Promise<ReconciliationSummary> {
  const final = options.final ?? false;
  const today = options.today ?? serviceToday(new Date(), options.timeZone ?? DEFAULT_SERVICE_TIME_ZONE);
  const runId = timeOrderedUuid();
  await insertReconciliationRun(db, { id: runId, payrollId, payDate, trigger: options.trigger ?? 'direct', triggeredBy: options.triggeredBy ?? null, final });
  try {
    return await db.transaction().execute(async (trx) => {
      const summary = await reconcileInTransaction(trx, payrollId, payDate, final, today);
      if (summary.snapshotId !== null) await options.followUp?.(trx, [{ payrollId, payDate }]);
      await completeReconciliationRun(trx, runId, summary);
      return summary;
    });
  } catch (error) {
    // The work rolled back; the run's row says why. A worker killed here writes nothing: its row stays unfinished.
    await failReconciliationRun(db, runId, error instanceof Error ? error.message : String(error));
    throw error;
  }
}

async function reconcileInTransaction(trx: Executor, payrollId: string, payDate: string, final: boolean, today: string): Promise<ReconciliationSummary> {
  {
    const empty: ReconciliationSummary = {
      payrollId,
      payDate,
      snapshotId: null,
      snapshotStatus: null,
      employees: 0,
      collected: 0,
      carried: 0,
      failed: 0,
      partially: 0,
      exceptions: 0,
      exceptionsSuperseded: 0,
      ledgerEntries: 0,
      paymentsUpdated: 0,
      laterPayDatesToReconcile: [],
      earlierPayDatesToReconcile: [],
    };
    const payDateRow = await rowLockPayDateForReconciliation(trx, payrollId, payDate);
    if (!payDateRow) return empty;
    const snapshot = await findCurrentSnapshotForUpdate(trx, payrollId, payDate);
    if (!snapshot) return empty;

    const calendar = await listPayDates(trx, payrollId);
    const paymentRows = await loadPaymentsToReconcile(trx, { snapshotId: snapshot.id, payrollId, payDate });
    const records = await loadLatestRecords(trx, payrollId, payDate, payDateRow.pay_period);
    const currentExceptions = await loadCurrentExceptions(trx, payrollId, payDate);
    const nextOpenPayDate =
      calendar.find((p) => p.pay_date > payDate && isPayDateOpen({ payDate: p.pay_date, lockDate: p.lock_date, locked: p.locked_at !== null }, today))?.pay_date ?? null;

    const plan = planReconciliation({
      payDate,
      currency: payDateRow.currency,
      final,
      nextOpenPayDate,
      payments: paymentRows.map(toPaymentToReconcile),
      records: records.map((r) => ({ employeeId: r.employee_id, version: r.version, deductionAmount: r.deduction_amount, currency: r.currency })),
      currentExceptions,
      newId: () => timeOrderedUuid(),
    });

    const current = snapshot.status as CurrentSnapshotStatus;
    const reached: CurrentSnapshotStatus = plan.everyLineRecorded ? 'reconciled' : plan.anyLineRecorded ? 'confirmed' : 'locked';
    // The lifecycle only moves forward: a later run with fewer records in hand never moves one back.
    const snapshotStatus = SNAPSHOT_LIFECYCLE.can(current, reached) ? reached : current;
    await supersedeExceptions(trx, plan.supersededExceptionIds);
    const written = await writeReconciliation(trx, {
      payrollId,
      payDate,
      attempts: plan.attempts,
      ledgerEntries: plan.ledgerEntries.map((entry) => ({ ...entry, payDate })),
      payments: plan.payments,
      exceptions: plan.exceptions,
      snapshot: snapshotStatus !== current && snapshotStatus !== 'locked' ? { id: snapshot.id, status: snapshotStatus } : null,
    });
    if (written.paymentsUpdated !== plan.payments.length) {
      throw new ConcurrentReconciliationError(
        `payroll ${payrollId} pay date ${payDate}: ${plan.payments.length - written.paymentsUpdated} payment requests changed while reconciling`,
      );
    }

    const scheduleIds = [...new Set(plan.payments.flatMap((p) => (p.scheduleId ? [p.scheduleId] : [])))];
    await settleSchedules(trx, scheduleIds);

    return {
      ...empty,
      snapshotId: snapshot.id,
      snapshotStatus,
      employees: plan.employees,
      collected: plan.collected,
      carried: plan.carried,
      failed: plan.failed,
      partially: plan.partially,
      exceptions: written.exceptions,
      exceptionsSuperseded: plan.supersededExceptionIds.length,
      ledgerEntries: plan.ledgerEntries.length,
      paymentsUpdated: written.paymentsUpdated,
      laterPayDatesToReconcile: plan.laterPayDatesToReconcile,
      earlierPayDatesToReconcile: plan.earlierPayDatesToReconcile,
    };
  }
}

export interface PayDateToReconcile {
  payrollId: string;
  payDate: string;
  final: boolean;
}

/**
 * What the nightly sweep reconciles on `today`: pay dates whose settlement window of
 * `settlementWindowDays` working days is over and that are not reconciled (final mode), and pay
 * dates with records that no reconciliation has taken in yet, and reconciled pay dates that could now
 * take more of a payment than they did (findPayDatesThatCanTakeMore). The window counts the working days
 * of each payroll's own bank-holiday region: its payroll office reports on those.
 */
export async function findPayDatesToReconcile(db: Database, today: string, settlementWindowDays: number = SETTLEMENT_WINDOW_WORKING_DAYS): Promise<PayDateToReconcile[]> {
  const finalOnOrBefore = await Promise.all(
    bankHolidayRegions.map(async (region) => ({
      region,
      date: subtractWorkingDays(today, settlementWindowDays, await loadHolidays(db, region)),
    })),
  );
  const lookback = formatCalendarDate(parseCalendarDate(today).minus({ days: LATE_RECORD_LOOKBACK_DAYS }));
  const due = (await findPayDatesDueForReconciliation(db, finalOnOrBefore, lookback)).map((row) => ({ payrollId: row.payroll_id, payDate: row.pay_date, final: row.final }));
  const queued = new Set(due.map((pair) => `${pair.payrollId} ${pair.payDate}`));
  for (const row of await findPayDatesThatCanTakeMore(db, lookback)) {
    if (!queued.has(`${row.payroll_id} ${row.pay_date}`)) due.push({ payrollId: row.payroll_id, payDate: row.pay_date, final: false });
  }
  return due;
}
