import type { PayoutFunding } from '../../platform/db/tables.ts';
import { clientActor, recordAction } from '../../platform/audit/audit-service.ts';
import { listPayDates } from '../../directory/calendars/calendar-repository.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { getDeductionData } from '../../cycle/deduction-data/deduction-data-service.ts';
import type { DeductionDataResponse } from '../../cycle/deduction-data/deduction-data-resource.ts';
import { submitConfirmation } from '../../cycle/deduction-records/confirmation-service.ts';
import type { ReportedLimits } from '../../cycle/deduction-records/reported-limits.ts';
import { lockThenPushInstructions } from '../../cycle/instructions/provider-push-service.ts';
import type { AmountLimits } from '../../collections/payments/amount-limits.ts';
import type { AdapterFactory } from '../../directory/payroll-providers/adapter.ts';
import type { PayoutResource } from '../../settlement/payouts/payout-resource.ts';
import type { SandboxConfirmation, SandboxLock, SandboxPayout } from './sandbox-resource.ts';
import { loadClearingHolidays, markSandboxPayoutPaid, runPayoutsOfBiller } from '../../settlement/payouts/payout-service.ts';
import { payDatesToReconcileAfter, reconcilePayDate, type ReconciliationSummary } from '../../cycle/reconciliation/reconciliation-service.ts';
import type { Caller } from '../../platform/shared/caller.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { PayDateLockError, lockPayDate } from '../../cycle/snapshots/pay-date-lock-service.ts';
import { findPayDate } from '../../cycle/snapshots/snapshot-repository.ts';
import { confirmationWithOutcomes, type DeductionOutcome } from './sandbox-confirmations.ts';
import { nextSandboxPayDate, sandboxPayoutDate } from './sandbox-pay-date.ts';
import { findLatestPayoutDate, findLatestUnpaidPayDate, findPayrollOfProvider, findSandboxOfBiller, listPaymentsAttemptedOn, type SandboxRow } from './sandbox-repository.ts';

// The simulation operations drive a sandbox pay date through what the night, the payroll provider
// and the bank would do, through the very services they use: the lock (snapshot and instruction
// file), the data request, the confirmation and reconciliation, the payout run and the bank's answer.
// Those services commit in transactions of their own, as they do for the jobs; each step is
// idempotent (a locked pay date is found locked, a repeated confirmation stores the same figures
// again, a settled payout is not made twice), so a retried request redoes nothing harmful. The
// caller's transaction (`audit`) holds the audit record and the idempotent answer.

export interface SimulationDeps {
  db: Database;
  adapterFor: AdapterFactory;
  limits: AmountLimits;
  /** What a simulated confirmation may report: the installation's, as for a real provider. */
  reportedLimits: ReportedLimits;
  timeZone: string;
  settlementDelayWorkingDays: number;
  /** The installation's PAYOUT_FUNDING: a sandbox payout funds its own (simulated) collections, never live ones. */
  payoutFunding: PayoutFunding;
  now?: Date;
}

const today = (deps: SimulationDeps) => serviceToday(deps.now ?? new Date(), deps.timeZone);

/**
 * The caller's sandbox. A live client has none, whatever scopes it was given (only sandbox billers
 * get sandbox:simulate; an operator could grant it by hand): to it the sandbox, like every sandbox
 * payroll, does not exist.
 */
async function sandboxOf(db: Executor, caller: Caller): Promise<SandboxRow> {
  const sandbox = caller.sandbox ? await findSandboxOfBiller(db, caller.clientId) : undefined;
  if (!sandbox) throw new NotFoundError(`Sandbox of client ${caller.clientId}`);
  return sandbox;
}

/** One of the sandbox's payrolls; any other id, live or another sandbox's, is not found. */
async function sandboxPayroll(db: Executor, sandbox: SandboxRow, payrollId: string) {
  const payroll = isUuid(payrollId) ? await findPayrollOfProvider(db, sandbox.payroll_provider_id, payrollId) : undefined;
  if (!payroll) throw new NotFoundError(`Payroll ${payrollId}`);
  return payroll;
}

async function calendarEntry(db: Executor, payrollId: string, payDate: string) {
  const entry = /^\d{4}-\d{2}-\d{2}$/.test(payDate) ? await findPayDate(db, payrollId, payDate) : undefined;
  if (!entry) throw new NotFoundError(`Pay date ${payDate} on payroll ${payrollId}`);
  return entry;
}

/** The simulated provider, as its own client: what the data request and the confirmation check. */
function providerCaller(sandbox: SandboxRow): Caller {
  return { clientId: sandbox.provider_client_id, role: 'payroll_provider', scopes: [], payrollProviderId: sandbox.payroll_provider_id, sandbox: true };
}

/**
 * Lock now: locks the pay date (`next`: the payroll's first open pay date, the one new payment
 * requests aim at) with its instruction file, as the nightly lock does (lockThenPushInstructions
 * around lockPayDate, the lock-pay-date job's own steps).
 */
export async function simulateLock(deps: SimulationDeps, audit: Executor, caller: Caller, payrollId: string, payDate: string): Promise<SandboxLock> {
  const sandbox = await sandboxOf(deps.db, caller);
  await sandboxPayroll(deps.db, sandbox, payrollId);
  let target = payDate;
  if (payDate === 'next') {
    const calendar = await listPayDates(deps.db, payrollId);
    const next = nextSandboxPayDate(
      calendar.map((d) => ({ pay_date: d.pay_date, lock_date: d.lock_date, locked: d.locked_at !== null })),
      today(deps),
    );
    if (!next) throw new ConflictError('no-open-pay-date', `Payroll ${payrollId} has no open pay date left to lock`);
    target = next;
  }
  const entry = await calendarEntry(deps.db, payrollId, target);
  const { locked } = await lockThenPushInstructions(deps.db, deps.adapterFor, () => lockPayDate(deps.db, payrollId, target, { limits: deps.limits })).catch(
    (error: unknown) => {
      // What stops a lock here (no collection account in the currency yet) stops the nightly lock too: the installation's to fix.
      if (error instanceof PayDateLockError) throw new ConflictError('pay-date-not-lockable', `Pay date ${target} cannot be locked: ${error.message}`);
      throw error;
    },
  );
  const lock: SandboxLock = {
    payroll_id: payrollId,
    pay_date: target,
    pay_period: entry.pay_period,
    created: locked.created,
    deduction_data_id: locked.snapshotId,
    snapshot_version: locked.snapshotVersion,
    employee_count: locked.employeeCount,
    payments_instructed: locked.paymentsInstructed,
    total_amount: locked.totalAmount,
    currency: locked.currency,
    instruction_file: { file_name: locked.instructionFile.fileName, sha256: locked.instructionFile.sha256 },
    earlier_pay_dates_locked: (locked.earlier ?? []).map((earlier) => earlier.payDate),
  };
  await recordAction(audit, {
    actor: clientActor(caller.clientId),
    action: 'sandbox.pay_date_locked',
    resourceType: 'payroll',
    resourceId: payrollId,
    reason: null,
    after: { pay_date: target, created: lock.created, deduction_data_id: lock.deduction_data_id, employee_count: lock.employee_count, total_amount: lock.total_amount },
  });
  return lock;
}

/** Provider pull: the simulated provider's data request of a locked pay date, answered as to a real one. */
export async function simulateProviderPull(deps: SimulationDeps, audit: Executor, caller: Caller, payrollId: string, payDate: string): Promise<DeductionDataResponse> {
  const sandbox = await sandboxOf(deps.db, caller);
  await sandboxPayroll(deps.db, sandbox, payrollId);
  await calendarEntry(deps.db, payrollId, payDate);
  const pulled = await getDeductionData(deps.db, providerCaller(sandbox), { payrollId, payDate }, deps.timeZone);
  await recordAction(audit, {
    actor: clientActor(caller.clientId),
    action: 'sandbox.provider_pulled',
    resourceType: 'payroll',
    resourceId: payrollId,
    reason: null,
    after: { pay_date: payDate, deduction_data_id: pulled.deduction_data_response.id, employee_count: pulled.deduction_data_response.employee_count },
  });
  return pulled;
}

export interface ConfirmationOutcomes {
  /** Every employee not named in `outcomes`. */
  defaultOutcome: DeductionOutcome;
  /** Per employee id of the pulled data. */
  outcomes: Readonly<Record<string, DeductionOutcome>>;
}

/**
 * Confirmation: the simulated provider pulls the pay date, reports what it deducted per employee
 * (in full, half for `partial`, nothing for a `leaver`) through the confirmation service a provider's
 * POST uses, and the pay date is reconciled at once (the reconcile job's own step), with any later
 * pay date that builds on it, so the answer shows where every payment request stands.
 */
export async function simulateConfirmation(
  deps: SimulationDeps,
  audit: Executor,
  caller: Caller,
  target: { payrollId: string; payDate: string },
  choice: ConfirmationOutcomes,
): Promise<SandboxConfirmation> {
  const { payrollId, payDate } = target;
  const sandbox = await sandboxOf(deps.db, caller);
  await sandboxPayroll(deps.db, sandbox, payrollId);
  const entry = await calendarEntry(deps.db, payrollId, payDate);
  const provider = providerCaller(sandbox);
  const pulled = await getDeductionData(deps.db, provider, { payrollId, payDate }, deps.timeZone);
  const pulledEmployees = new Set(pulled.deduction_data_response.deduction_data.map((line) => line.salary_deduction.employee_id));
  const strangers = Object.keys(choice.outcomes).filter((employeeId) => !pulledEmployees.has(employeeId));
  if (strangers.length > 0) {
    throw new InvalidError('employee-not-in-deduction-data', `${strangers.length} employee(s) in outcomes are not in the deduction data of ${payDate}`, {
      errors: strangers.map((employeeId) => ({ pointer: `/outcomes/${employeeId}`, detail: `employee ${employeeId} is not in the deduction data of ${payDate}` })),
    });
  }
  if (pulledEmployees.size === 0) {
    throw new ConflictError('nothing-to-confirm', `The deduction data of ${payDate} asks for no deductions: there is nothing to confirm`);
  }

  const { body, outcomes } = confirmationWithOutcomes(pulled, entry.pay_period, choice.outcomes, choice.defaultOutcome);
  const confirmed = await deps.db.transaction().execute((trx) => submitConfirmation(trx, provider, payrollId, body.confirmation, deps.reportedLimits));
  const summary = await reconcileWithOtherPayDates(deps, payrollId, payDate);
  const payments = await listPaymentsAttemptedOn(deps.db, caller.clientId, payrollId, payDate);
  const result: SandboxConfirmation = {
    confirmation: confirmed.confirmation,
    outcomes,
    reconciliation: {
      snapshot_status: summary.snapshotStatus,
      employees: summary.employees,
      collected: summary.collected,
      carried: summary.carried,
      failed: summary.failed,
      partially: summary.partially,
      exceptions: summary.exceptions,
    },
    payment_requests: payments.map((p) => ({
      id: p.id,
      employee_id: p.employee_id,
      status: p.status,
      currency: p.currency,
      amount: p.amount,
      collected_amount: p.collected_amount,
    })),
  };
  await recordAction(audit, {
    actor: clientActor(caller.clientId),
    action: 'sandbox.confirmed',
    resourceType: 'payroll',
    resourceId: payrollId,
    reason: null,
    after: { pay_date: payDate, confirmation_id: confirmed.confirmation.id, outcomes, reconciliation: result.reconciliation },
  });
  return result;
}

/**
 * Reconciles the pay date, then each other one it changed money for, as the reconcile job asks for
 * them. It ends: an earlier pay date is asked only when money moved, and money only moves towards
 * what each pay date may take.
 */
async function reconcileWithOtherPayDates(deps: SimulationDeps, payrollId: string, payDate: string): Promise<ReconciliationSummary> {
  const reconcile = (when: string) => reconcilePayDate(deps.db, payrollId, when, { today: today(deps), trigger: 'sandbox' });
  const summary = await reconcile(payDate);
  const waiting = payDatesToReconcileAfter(summary);
  for (let other = waiting.shift(); other !== undefined; other = waiting.shift()) waiting.push(...payDatesToReconcileAfter(await reconcile(other)));
  return summary;
}

/**
 * Payout now: the payout run for this sandbox biller alone, on the date the daily run would have paid
 * its latest collected pay date (sandboxPayoutDate), then the bank's answer "paid". The daily run pays
 * live billers only.
 */
export async function simulatePayout(deps: SimulationDeps, audit: Executor, caller: Caller): Promise<SandboxPayout> {
  await sandboxOf(deps.db, caller);
  const latest = await findLatestUnpaidPayDate(deps.db, caller.clientId);
  if (!latest) {
    throw new ConflictError('nothing-to-pay-out', 'Nothing collected is waiting for a payout: confirm a locked pay date first');
  }
  const payoutDate = sandboxPayoutDate(latest, await findLatestPayoutDate(deps.db, caller.clientId), deps.settlementDelayWorkingDays, await loadClearingHolidays(deps.db));
  const run = await runPayoutsOfBiller(deps.db, caller.clientId, { payoutDate, settledThrough: latest, funding: deps.payoutFunding });
  const failed = run.groups.find((group) => group.outcome === 'failed');
  if (failed?.outcome === 'failed') throw new Error(`sandbox payout of ${failed.currency} failed: ${failed.error}`);
  const payouts: PayoutResource[] = [];
  const notPaidOut: SandboxPayout['not_paid_out'] = [];
  for (const group of run.groups) {
    if (group.outcome === 'paid_out') {
      payouts.push(await markSandboxPayoutPaid(audit, group.payoutId, { actor: clientActor(caller.clientId), reason: 'sandbox simulation' }));
    } else if (group.outcome !== 'failed') {
      notPaidOut.push({ currency: group.currency, outcome: group.outcome });
    }
  }
  await recordAction(audit, {
    actor: clientActor(caller.clientId),
    action: 'sandbox.paid_out',
    resourceType: 'client',
    resourceId: caller.clientId,
    reason: null,
    after: { payout_date: payoutDate, settled_through: latest, payout_ids: payouts.map((p) => p.id), not_paid_out: notPaidOut },
  });
  return { payout_date: payoutDate, settled_through: latest, payouts, not_paid_out: notPaidOut };
}
