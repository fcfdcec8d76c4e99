import type { ReconciliationRunTrigger } from '../../platform/db/tables.ts';

// What a person reads of a reconciliation run (its row in reconciliation_runs), in the console and at
// the command line: what started it, and what it changed, in words, never a column's raw value.

/** A run's trigger as its row records it: `triggeredBy` is the queue job that ran it, null outside the queue. */
export interface RunTriggerFacts {
  trigger: ReconciliationRunTrigger;
  triggeredBy: string | null;
  final: boolean;
}

/** The sweep names its jobs reconcile-sweep.<run date>.<payroll>.<pay date> (sweepReconcileJobId). */
const SWEEP_JOB = /^reconcile-sweep\.(\d{4}-\d{2}-\d{2})\./;
/** BullMQ numbers the jobs of debounced requests itself. */
const QUEUE_JOB_NUMBER = /^\d+$/;

/**
 * What started a reconciliation run, as a sentence: the nightly sweep (of which run date), a request
 * after the pay date's data changed (which queue job), the sandbox, or a call outside the queue; and
 * whether it was final. `triggered_by` holds the queue job's id, never a person or a client: a request
 * is queued by whatever changed the pay date's data, so the words name those changes.
 */
export function describeRunTrigger(run: RunTriggerFacts): string {
  const final = run.final ? '; final: the settlement window is over, so an employee payroll never reported counts as deducted nothing' : '';
  const job = run.triggeredBy ?? '';
  switch (run.trigger) {
    case 'sweep': {
      const runDate = SWEEP_JOB.exec(job)?.[1];
      return `Nightly reconciliation sweep${runDate ? ` of ${runDate}` : ''}${final}`;
    }
    case 'request':
      return (
        "Requested after the pay date's data changed (deduction records, a confirmation or a return file came in, a report was voided, " +
        `the pay date was re-run, or another pay date's reconciliation moved money it builds on)${QUEUE_JOB_NUMBER.test(job) ? `, queue job ${job}` : ''}${final}`
      );
    case 'sandbox':
      return `Sandbox simulation of a payroll provider${final}`;
    case 'direct':
      return `Run in-process, not through the queue (a script or a test)${final}`;
  }
}

/** What a run wrote, as its row records it: null until it finished, and when it failed (it wrote nothing then). */
export interface RunChangeFacts {
  outcome: 'completed' | 'failed' | null;
  ledgerEntries: number | null;
  paymentsUpdated: number | null;
  exceptions: number | null;
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * What this run changed, apart from what the pay date holds in all: a reconciliation over records
 * already taken in changes nothing, and says so, instead of "Ledger entries 0, Payments updated 0"
 * beside the pay date's collected total.
 */
export function describeRunChanges(run: RunChangeFacts): string {
  if (run.outcome === null) return 'Nothing yet: the run has not finished';
  if (run.outcome === 'failed') return 'Nothing: the run failed, and everything it did was rolled back';
  const ledger = run.ledgerEntries ?? 0;
  const payments = run.paymentsUpdated ?? 0;
  const exceptions = run.exceptions ?? 0;
  if (ledger === 0 && payments === 0 && exceptions === 0) {
    return 'Nothing: no new ledger entries, no payment updated, no new exception (the records had already been taken in)';
  }
  const parts = [
    ...(ledger > 0 ? [`wrote ${count(ledger, 'ledger entry', 'ledger entries')}`] : []),
    ...(payments > 0 ? [`updated ${count(payments, 'payment', 'payments')}`] : []),
    ...(exceptions > 0 ? [`recorded ${count(exceptions, 'new exception', 'new exceptions')}`] : []),
  ];
  const said = parts.join(', ');
  return said[0]!.toUpperCase() + said.slice(1);
}

/** The columns of a reconciliation_runs row the words are made of. */
export interface ReconciliationRunRowFacts {
  trigger: ReconciliationRunTrigger;
  triggered_by: string | null;
  final: boolean;
  finished_at: Date | null;
  outcome: 'completed' | 'failed' | null;
  ledger_entries: number | null;
  payments_updated: number | null;
  exceptions: number | null;
}

/** A reconciliation run's row in words: what started it, and what it changed. */
export function describeReconciliationRunRow(row: ReconciliationRunRowFacts): { started: string; changed: string } {
  return {
    started: describeRunTrigger({ trigger: row.trigger, triggeredBy: row.triggered_by, final: row.final }),
    changed: describeRunChanges({
      outcome: row.finished_at === null ? null : row.outcome === 'failed' ? 'failed' : 'completed',
      ledgerEntries: row.ledger_entries,
      paymentsUpdated: row.payments_updated,
      exceptions: row.exceptions,
    }),
  };
}
