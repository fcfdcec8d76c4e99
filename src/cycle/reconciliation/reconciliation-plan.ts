import type { AttemptOutcome } from '../../platform/db/tables.ts';
import type { NewLedgerEntry } from '../ledger/ledger-repository.ts';
import { postingsForAttempt } from '../ledger/ledger-postings.ts';
import { assertTransition, type PaymentStatus } from '../../collections/payments/payment-transitions.ts';
import { allocateDeduction } from './allocate-deduction.ts';
import { decideCollectionOutcome } from './collection-outcome.ts';
import { formatMoney } from '../../platform/money/money-text.ts';

// Reconciling one payroll pay date, decided without I/O: given what the snapshot asked per payment,
// what earlier reconciliations stored, and the latest record per employee, which attempts, ledger
// entries, payment changes and exceptions to write. Deterministic, and a fixed point: planning again
// over its own written result plans nothing.

export interface StoredAttempt {
  id: string;
  attemptNumber: number;
  requestedAmount: number;
  deductedAmount: number | null;
  collectedAmount: number;
  shortfallAmount: number;
  outcome: AttemptOutcome | null;
  carriedToPayDate: string | null;
  pushVersion: number | null;
  revision: number;
}

export interface PaymentToReconcile {
  id: string;
  employeeId: string;
  mandateId: string;
  billerClientId: string;
  scheduleId: string | null;
  currency: string;
  amount: number;
  collectedAmount: number;
  paidOutAmount: number;
  status: PaymentStatus;
  version: number;
  attempts: number;
  dueDate: string | null;
  /** ISO 8601 with offset. */
  createdAt: string;
  allowPostDueDateDeduction: boolean;
  targetPayDate: string;
  mandateActive: boolean;
  /** What the current snapshot asks of it; null when only an earlier snapshot of the pay date did. */
  snapshotRequested: number | null;
  /** This pay date's attempt, when an earlier reconciliation made one. */
  attempt: StoredAttempt | null;
  /** Highest attempt number over all the payment's attempts. */
  highestAttemptNumber: number | null;
  /**
   * The first later pay date that has instructed or attempted it, if any. Its status then belongs to
   * that pay date; this one only corrects the money its own attempt collected.
   */
  claimedByPayDate: string | null;
  /** Earlier pay dates with an attempt of it: what each may take of it follows what this one collects. */
  earlierAttemptPayDates: readonly string[];
}

export interface LatestRecord {
  employeeId: string;
  version: number;
  deductionAmount: number;
  currency: string;
}

/** An exception an earlier reconciliation of this pay date recorded and no later one superseded. */
export interface CurrentException {
  id: string;
  employeeId: string;
  kind: ExceptionKind;
  amount: number;
  currency: string;
  recordVersion: number | null;
}

export interface ReconciliationPlanInput {
  payDate: string;
  currency: string;
  /** Nightly, past the settlement window: an employee without a record counts as deducted 0. */
  final: boolean;
  nextOpenPayDate: string | null;
  payments: readonly PaymentToReconcile[];
  records: readonly LatestRecord[];
  currentExceptions: readonly CurrentException[];
  newId: () => string;
}

export interface AttemptWrite {
  id: string;
  paymentRequestId: string;
  /** The payment's identity, which the attempt carries for the report (written once, never changed). */
  employeeId: string;
  mandateId: string;
  billerClientId: string;
  currency: string;
  attemptNumber: number;
  requestedAmount: number;
  deductedAmount: number;
  collectedAmount: number;
  shortfallAmount: number;
  outcome: AttemptOutcome;
  carriedToPayDate: string | null;
  pushVersion: number | null;
  revision: number;
}

export interface PaymentWrite {
  id: string;
  /** Optimistic check: the write applies only to the row as it was read. */
  expectedVersion: number;
  collectedAmount: number;
  status: PaymentStatus;
  targetPayDate: string;
  scheduleId: string | null;
}

export type ExceptionKind = 'unexpected_employee' | 'over_deduction' | 'missing_confirmation';

export interface ExceptionDraft {
  employeeId: string;
  kind: ExceptionKind;
  amount: number;
  currency: string;
  recordVersion: number | null;
  detail: string;
}

export interface ReconciliationPlan {
  attempts: AttemptWrite[];
  ledgerEntries: Omit<NewLedgerEntry, 'payDate'>[];
  payments: PaymentWrite[];
  /** New current exceptions: an employee's figure appeared or changed. */
  exceptions: ExceptionDraft[];
  /** Current exceptions whose figure changed or no longer applies; superseded before the new ones go in. */
  supersededExceptionIds: string[];
  /** Employees reconciled (a record, or final mode). */
  employees: number;
  /** Minor units collected on this pay date by the reconciled employees' attempts. */
  collected: number;
  carried: number;
  failed: number;
  partially: number;
  /**
   * Later pay dates holding a payment this run reconciled an earlier attempt of. What they may still
   * take of it follows what this pay date collected, so they are reconciled after it. Asked on every
   * run, not only when money moved: a retry after a crash between the commit and the ask then asks
   * again, and a reconciliation with nothing to change writes nothing.
   */
  laterPayDatesToReconcile: string[];
  /**
   * Earlier pay dates with an attempt of a payment whose collection here this run changed. Each took
   * no more of it than the payment's amount less what its other pay dates collected, so a change here
   * moves what they may take. Asked only when money moved here (asking every time would bounce between
   * the two pay dates for ever); the nightly sweep finds any that a crash left unasked
   * (findPayDatesThatCanTakeMore).
   */
  earlierPayDatesToReconcile: string[];
  /** Every employee the current snapshot asked had a record (or final mode). */
  everyLineRecorded: boolean;
  anyLineRecorded: boolean;
}

function groupByEmployee(payments: readonly PaymentToReconcile[]): Map<string, PaymentToReconcile[]> {
  const groups = new Map<string, PaymentToReconcile[]>();
  for (const payment of payments) {
    const group = groups.get(payment.employeeId);
    if (group) group.push(payment);
    else groups.set(payment.employeeId, [payment]);
  }
  return groups;
}

function requestedThisPayDate(payment: PaymentToReconcile): number {
  // An attempt keeps what was asked when it was first reconciled: a re-run after that asks only for
  // what was still outstanding, and re-reading the smaller figure would turn money payroll already
  // deducted into an over-deduction.
  const requested = payment.attempt?.requestedAmount ?? payment.snapshotRequested;
  if (requested === null) throw new Error(`payment request ${payment.id} has neither a snapshot line nor an attempt`);
  return requested;
}

function sameAttempt(stored: StoredAttempt, next: AttemptWrite): boolean {
  return (
    stored.deductedAmount === next.deductedAmount &&
    stored.collectedAmount === next.collectedAmount &&
    stored.shortfallAmount === next.shortfallAmount &&
    stored.outcome === next.outcome &&
    stored.carriedToPayDate === next.carriedToPayDate &&
    stored.pushVersion === next.pushVersion
  );
}

/** paid_out already says "collected, and the money has left": a re-read that changes nothing keeps it. */
function statusToKeep(payment: PaymentToReconcile, decided: PaymentStatus, collectedAmount: number): PaymentStatus {
  if (decided === 'collected' && payment.status === 'paid_out' && payment.paidOutAmount === collectedAmount) return 'paid_out';
  return decided;
}

const SETTLED_STATUSES: ReadonlySet<PaymentStatus> = new Set(['collected', 'paid_out', 'partially_collected', 'failed']);

/**
 * A later pay date has taken the payment over, so this pay date corrects only the money of its own
 * attempt. While the later pay date has it pending or instructed, that pay date's reconciliation will
 * decide the status with the corrected figure. Once it is settled there, the settled status follows
 * the money. Cancelled stands: late corrections of a cancelled request are money only.
 */
function statusOfCorrectedEarlierAttempt(payment: PaymentToReconcile, collectedAmount: number): PaymentStatus {
  if (!SETTLED_STATUSES.has(payment.status) || collectedAmount === payment.collectedAmount) return payment.status;
  if (collectedAmount === payment.amount) return statusToKeep(payment, 'collected', collectedAmount);
  return collectedAmount === 0 ? 'failed' : 'partially_collected';
}

export function planReconciliation(input: ReconciliationPlanInput): ReconciliationPlan {
  const plan: ReconciliationPlan = {
    attempts: [],
    ledgerEntries: [],
    payments: [],
    exceptions: [],
    supersededExceptionIds: [],
    laterPayDatesToReconcile: [],
    earlierPayDatesToReconcile: [],
    employees: 0,
    collected: 0,
    carried: 0,
    failed: 0,
    partially: 0,
    everyLineRecorded: true,
    anyLineRecorded: false,
  };
  const records = new Map(input.records.map((record) => [record.employeeId, record]));
  const groups = groupByEmployee(input.payments);
  /** Employees whose figures this run decides; every other employee's exceptions stand as they are. */
  const reconciledEmployees = new Set<string>(records.keys());
  const exceptions: ExceptionDraft[] = [];

  for (const [employeeId, group] of groups) {
    const record = records.get(employeeId);
    const askedByCurrentSnapshot = group.some((payment) => payment.snapshotRequested !== null);
    if (askedByCurrentSnapshot) {
      if (record) plan.anyLineRecorded = true;
      else if (!input.final) plan.everyLineRecorded = false;
    }
    if (!record && !input.final) continue;

    plan.employees += 1;
    reconciledEmployees.add(employeeId);
    if (!record) {
      const expected = group.reduce((sum, payment) => sum + requestedThisPayDate(payment), 0);
      exceptions.push({
        employeeId,
        kind: 'missing_confirmation',
        amount: expected,
        currency: input.currency,
        recordVersion: null,
        detail: `No deduction record by the end of the settlement window; the ${formatMoney(expected, input.currency)} requested is treated as not deducted`,
      });
    }
    const deducted = record?.deductionAmount ?? 0;

    const byId = new Map(group.map((payment) => [payment.id, payment]));
    const collectedElsewhere = (payment: PaymentToReconcile) => payment.collectedAmount - (payment.attempt?.collectedAmount ?? 0);
    const allocation = allocateDeduction(
      deducted,
      group.map((payment) => ({
        id: payment.id,
        // Never more than is still outstanding, so no payment can collect beyond its amount
        // however its attempts on different pay dates are corrected.
        requested: Math.min(requestedThisPayDate(payment), Math.max(0, payment.amount - collectedElsewhere(payment))),
        dueDate: payment.dueDate,
        createdAt: payment.createdAt,
      })),
    );
    if (allocation.unallocated > 0) {
      exceptions.push({
        employeeId,
        kind: 'over_deduction',
        amount: allocation.unallocated,
        currency: record?.currency ?? input.currency,
        recordVersion: record?.version ?? null,
        detail: `Payroll deducted ${formatMoney(deducted, record?.currency ?? input.currency)}, ${formatMoney(allocation.unallocated, record?.currency ?? input.currency)} more than was requested; held, not paid out`,
      });
    }

    for (const { id, allocated, shortfall } of allocation.allocations) {
      const payment = byId.get(id)!;
      const stored = payment.attempt;
      const elsewhere = collectedElsewhere(payment);
      const attemptNumber = stored?.attemptNumber ?? Math.max(payment.attempts, (payment.highestAttemptNumber ?? 0) + 1, 1);
      const decision = decideCollectionOutcome({
        amount: payment.amount,
        collectedElsewhere: elsewhere,
        requested: allocated + shortfall,
        allocated,
        attemptNumber,
        allowPostDueDateDeduction: payment.allowPostDueDateDeduction,
        mandateActive: payment.mandateActive,
        // A later pay date already holds the payment: a shortfall found here can only go there.
        nextOpenPayDate: payment.claimedByPayDate ?? input.nextOpenPayDate,
        previouslyCarriedTo: stored?.outcome === 'carried' ? stored.carriedToPayDate : null,
      });
      const postings = postingsForAttempt(stored ? { collected: stored.collectedAmount, revision: stored.revision } : null, allocated);
      const attempt: AttemptWrite = {
        id: stored?.id ?? input.newId(),
        paymentRequestId: payment.id,
        employeeId: payment.employeeId,
        mandateId: payment.mandateId,
        billerClientId: payment.billerClientId,
        currency: payment.currency,
        attemptNumber,
        requestedAmount: requestedThisPayDate(payment),
        deductedAmount: allocated,
        collectedAmount: allocated,
        shortfallAmount: decision.shortfall,
        outcome: decision.outcome,
        carriedToPayDate: decision.carriedToPayDate,
        pushVersion: record?.version ?? null,
        revision: postings.revision,
      };

      plan.collected += allocated;
      if (decision.outcome === 'carried') plan.carried += 1;
      else if (decision.outcome === 'failed') plan.failed += 1;
      else if (decision.outcome === 'partially_collected') plan.partially += 1;

      if (!stored || !sameAttempt(stored, attempt)) plan.attempts.push(attempt);
      for (const posting of postings.postings) {
        plan.ledgerEntries.push({
          billerClientId: payment.billerClientId,
          paymentRequestId: payment.id,
          collectionAttemptId: attempt.id,
          revision: postings.revision,
          kind: posting.kind,
          amount: posting.amount,
          currency: payment.currency,
        });
      }

      const collectedAmount = elsewhere + allocated;
      const ownsStatus = payment.status !== 'cancelled' && payment.claimedByPayDate === null;
      const status = ownsStatus ? statusToKeep(payment, decision.paymentStatus, collectedAmount) : statusOfCorrectedEarlierAttempt(payment, collectedAmount);
      const targetPayDate = ownsStatus && decision.targetPayDate !== null ? decision.targetPayDate : payment.targetPayDate;
      if (status !== payment.status) assertTransition(payment.status, status);
      if (payment.claimedByPayDate !== null && !plan.laterPayDatesToReconcile.includes(payment.claimedByPayDate)) {
        plan.laterPayDatesToReconcile.push(payment.claimedByPayDate);
      }
      if (allocated !== (stored?.collectedAmount ?? 0)) {
        for (const earlier of payment.earlierAttemptPayDates) {
          if (!plan.earlierPayDatesToReconcile.includes(earlier)) plan.earlierPayDatesToReconcile.push(earlier);
        }
      }
      if (status !== payment.status || collectedAmount !== payment.collectedAmount || targetPayDate !== payment.targetPayDate) {
        plan.payments.push({ id: payment.id, expectedVersion: payment.version, collectedAmount, status, targetPayDate, scheduleId: payment.scheduleId });
      }
    }
  }

  for (const record of input.records) {
    if (groups.has(record.employeeId) || record.deductionAmount === 0) continue;
    exceptions.push({
      employeeId: record.employeeId,
      kind: 'unexpected_employee',
      amount: record.deductionAmount,
      currency: record.currency,
      recordVersion: record.version,
      detail: `Payroll deducted ${formatMoney(record.deductionAmount, record.currency)} from an employee with nothing requested on this pay date; held, not paid out`,
    });
  }
  const revision = reviseExceptions(input.currentExceptions, exceptions, reconciledEmployees);
  plan.exceptions = revision.recorded;
  plan.supersededExceptionIds = revision.superseded;
  return plan;
}

const exceptionKey = (employeeId: string, kind: ExceptionKind) => `${employeeId}/${kind}`;

/**
 * What is held for an employee is decided afresh by every reconciliation that takes the employee in:
 * the record, and what the employee's payment requests can still take, which a correction on another
 * pay date may have changed. So the figure an exception holds is never trusted to stay: a current
 * exception of a reconciled employee stands only while it says exactly what this run found; otherwise
 * it is superseded, and a new one records the new figure. Employees this run did not take in (no record
 * yet, not final) keep theirs. One current exception per employee and kind, so held money counts once.
 */
export function reviseExceptions(
  current: readonly CurrentException[],
  found: readonly ExceptionDraft[],
  reconciledEmployees: ReadonlySet<string>,
): { recorded: ExceptionDraft[]; superseded: string[] } {
  const standing = new Map(current.map((exception) => [exceptionKey(exception.employeeId, exception.kind), exception]));
  const recorded: ExceptionDraft[] = [];
  const kept = new Set<string>();
  for (const draft of found) {
    const key = exceptionKey(draft.employeeId, draft.kind);
    const existing = standing.get(key);
    if (existing && existing.amount === draft.amount && existing.currency === draft.currency && existing.recordVersion === draft.recordVersion) {
      kept.add(existing.id);
    } else {
      recorded.push(draft);
    }
  }
  const superseded = current.filter((exception) => reconciledEmployees.has(exception.employeeId) && !kept.has(exception.id)).map((exception) => exception.id);
  return { recorded, superseded };
}
