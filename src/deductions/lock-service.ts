import type { Database, Executor } from '../db/connection.ts';
import { recordEvents } from '../events/outbox.ts';
import { toPaymentResource } from '../payments/payment-resource.ts';
import {
  findActiveCollectionAccount,
  findCurrentSnapshot,
  freezeDeductionData,
  lockPayDateRow,
  lockPayrollRow,
  findEarlierUnlockedPayDates,
  markPayDateLocked,
  nextSnapshotVersion,
  supersedeSnapshot,
  linkSupersededSnapshot,
  type PayDateToLock,
} from './lock-repository.ts';

export interface LockOutcome {
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
  /** Earlier pay dates of the payroll this job had to lock first (their own jobs then find them locked). */
  earlier?: LockOutcome[];
}

export class LockError extends Error {}

async function freeze(trx: Executor, payDateRow: PayDateToLock, supersede: { snapshotId: string } | null): Promise<LockOutcome> {
  const { payroll_id: payrollId, pay_date: payDate } = payDateRow;
  const account = await findActiveCollectionAccount(trx, payDateRow.currency);
  if (!account) throw new LockError(`no active collection account for ${payDateRow.currency}`);

  const snapshotId = crypto.randomUUID();
  const snapshotVersion = await nextSnapshotVersion(trx, payrollId, payDate);
  if (supersede) await supersedeSnapshot(trx, supersede.snapshotId);

  const instructed = await freezeDeductionData(trx, {
    snapshotId,
    snapshotVersion,
    payrollId,
    payDate,
    payPeriod: payDateRow.pay_period,
    currency: payDateRow.currency,
    collectionAccount: account,
    supersededSnapshotId: supersede?.snapshotId ?? null,
  });
  if (supersede) await linkSupersededSnapshot(trx, supersede.snapshotId, snapshotId);
  await recordEvents(
    trx,
    instructed.map((payment) => ({
      type: 'payment_request.updated' as const,
      billerClientId: payment.biller_client_id,
      resourceType: 'payment_request',
      resourceId: payment.id,
      data: toPaymentResource(payment),
    })),
  );
  await markPayDateLocked(trx, payrollId, payDate);
  const snapshot = (await findCurrentSnapshot(trx, payrollId, payDate))!;
  return {
    payrollId,
    payDate,
    snapshotId,
    snapshotVersion,
    created: true,
    employeeCount: snapshot.employee_count,
    totalAmount: snapshot.total_amount,
    currency: snapshot.currency,
    paymentsInstructed: instructed.length,
  };
}

/**
 * Locks one payroll pay date: freezes its deduction data and instructs its payment requests, in
 * one transaction. Safe to run twice: the pay-date row lock serialises concurrent runs and an
 * existing snapshot makes the second a no-op.
 */
export async function lockPayDate(db: Database, payrollId: string, payDate: string): Promise<LockOutcome> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockPayrollRow(trx, payrollId))) throw new LockError(`payroll ${payrollId} does not exist`);
    const payDateRow = await lockPayDateRow(trx, payrollId, payDate);
    if (!payDateRow) throw new LockError(`payroll ${payrollId} has no pay date ${payDate}`);
    const existing = await findCurrentSnapshot(trx, payrollId, payDate);
    if (existing) {
      return {
        payrollId,
        payDate,
        snapshotId: existing.id,
        snapshotVersion: existing.snapshot_version,
        created: false,
        employeeCount: existing.employee_count,
        totalAmount: existing.total_amount,
        currency: existing.currency,
        paymentsInstructed: 0,
      };
    }
    // Pay dates must freeze in date order: a later one would otherwise take the payments due on
    // an earlier one whose job has not run yet.
    const earlier: LockOutcome[] = [];
    for (const row of await findEarlierUnlockedPayDates(trx, payrollId, payDate, payDateRow.lock_date)) {
      earlier.push(await freeze(trx, row, null));
    }
    const outcome = await freeze(trx, payDateRow, null);
    return earlier.length > 0 ? { ...outcome, earlier } : outcome;
  });
}

/**
 * Writes a new snapshot version that supersedes the current one. Requests the old snapshot had
 * instructed are carried into the new one without being instructed (or counted as an attempt)
 * again; new pending requests due by then join it.
 */
export async function relockPayDate(trx: Executor, payrollId: string, payDate: string): Promise<LockOutcome & { previousSnapshotId: string }> {
  await lockPayrollRow(trx, payrollId);
  const payDateRow = await lockPayDateRow(trx, payrollId, payDate);
  if (!payDateRow) throw new LockError(`payroll ${payrollId} has no pay date ${payDate}`);
  const current = await findCurrentSnapshot(trx, payrollId, payDate);
  if (!current) throw new LockError(`payroll ${payrollId} pay date ${payDate} has not been locked yet; nothing to re-run`);
  const outcome = await freeze(trx, payDateRow, { snapshotId: current.id });
  return { ...outcome, previousSnapshotId: current.id };
}
