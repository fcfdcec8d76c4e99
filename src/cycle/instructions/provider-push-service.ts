import type { Database } from '../../platform/db/connection.ts';
import { toMajorUnits } from '../../platform/money/major-units.ts';
import type { AdapterFactory } from '../../directory/payroll-providers/adapter.ts';
import { ProviderError } from '../../directory/payroll-providers/provider-errors.ts';
import { findProviderOfPayroll, listPendingPushes, listRequestedPaymentsOfSnapshots, markPushSent, recordPushFailure } from './provider-push-repository.ts';
import { employeeRequestedPayments, type SnapshotRequestedPayment } from './requested-payments.ts';

export interface ProviderPushCounts {
  sent: number;
  failed: number;
}

/** A provider rejecting the record itself will reject it again; anything else is worth a retry. */
function isPermanent(error: unknown): boolean {
  return error instanceof ProviderError && (error.failure === 'rejected' || error.failure === 'not-found');
}

/**
 * Sends each changed instruction item of a payroll pay date to its provider's API as an employee
 * push, recording every attempt. The record's version is the instruction file version, so the
 * provider keeps the newest and a repeated push is harmless. Throws when some push failed and
 * may succeed later, so the queue retries the job; sent pushes are not sent again.
 */
export async function pushInstructionsToProvider(db: Database, adapterFor: AdapterFactory, payrollId: string, payDate: string): Promise<ProviderPushCounts> {
  const provider = await findProviderOfPayroll(db, payrollId);
  const adapter = provider ? adapterFor(provider) : null;
  if (!adapter) return { sent: 0, failed: 0 };
  const pending = await listPendingPushes(db, payrollId, payDate);
  const requested = await listRequestedPaymentsOfSnapshots(
    db,
    pending.map((push) => push.snapshot_id),
  );
  const requestedOf = new Map<string, SnapshotRequestedPayment[]>();
  for (const payment of requested) requestedOf.set(payment.snapshot_id, [...(requestedOf.get(payment.snapshot_id) ?? []), payment]);
  const outcome: ProviderPushCounts = { sent: 0, failed: 0 };
  let retryable = 0;
  for (const push of pending) {
    try {
      // No line: the snapshot deducts nothing from this employee (a stop).
      const line = push.line_requested_amount === null || push.line_currency === null ? null : { requested_amount: push.line_requested_amount, currency: push.line_currency };
      const response = await adapter.pushEmployeeDeduction(payrollId, {
        pay_period: push.pay_period,
        id: push.item_id,
        version: push.file_version,
        salary_deduction: { employee_id: push.employee_id, deduction_amount: toMajorUnits(push.amount, push.currency), currency: push.currency },
        // What the data request shows for this employee on this pay date, by the same function.
        requested_payments: employeeRequestedPayments(line, requestedOf.get(push.snapshot_id) ?? []),
      });
      await markPushSent(db, push.id, response);
      outcome.sent++;
    } catch (error) {
      const permanent = isPermanent(error);
      await recordPushFailure(db, push.id, error instanceof Error ? error.message : String(error), permanent);
      outcome.failed++;
      if (!permanent) retryable++;
    }
  }
  if (retryable > 0) throw new Error(`${retryable} of ${pending.length} employee pushes to the provider failed; they will be retried`);
  return outcome;
}

/**
 * How a pay date's instructions reach its provider, for the nightly lock and a re-run alike: the
 * lock (snapshot and instruction file, one transaction) commits first, then the file's changed
 * items are pushed, so a push never reports a file that could still roll back. Both steps are
 * idempotent: when a push fails the job is retried, its lock finds the work done, and only the
 * missing pushes are sent.
 */
export async function lockThenPushInstructions<Locked extends { payrollId: string; payDate: string }>(
  db: Database,
  adapterFor: AdapterFactory,
  lock: () => Promise<Locked>,
): Promise<{ locked: Locked; pushes: ProviderPushCounts }> {
  const locked = await lock();
  const pushes = await pushInstructionsToProvider(db, adapterFor, locked.payrollId, locked.payDate);
  return { locked, pushes };
}
