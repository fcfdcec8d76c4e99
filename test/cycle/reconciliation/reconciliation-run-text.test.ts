import { describe, expect, it } from 'vitest';
import { describeReconciliationRunRow, describeRunChanges, describeRunTrigger } from '../../../src/cycle/reconciliation/reconciliation-run-text.ts';
import type { ReconciliationRunTrigger } from '../../../src/platform/db/tables.ts';
import { sweepReconcileJobId } from '../../../src/platform/queue/job-catalogue.ts';

// What started a reconciliation run and what it changed, in words (it once read "Trigger: request by
// 12" and "Ledger entries 0, Payments updated 0" beside "Collected £25.50").

const PAYROLL = '019a7b2c-0000-7000-8000-000000000001';

describe('describeRunTrigger', () => {
  // Every trigger, with what its row's triggered_by holds for it.
  const cases: Array<[ReconciliationRunTrigger, string | null, boolean, string]> = [
    ['sweep', sweepReconcileJobId('2026-11-30', PAYROLL, '2026-11-27'), false, 'Nightly reconciliation sweep of 2026-11-30'],
    [
      'sweep',
      sweepReconcileJobId('2026-12-31', PAYROLL, '2026-11-27'),
      true,
      'Nightly reconciliation sweep of 2026-12-31; final: the settlement window is over, so an employee payroll never reported counts as deducted nothing',
    ],
    ['sweep', null, false, 'Nightly reconciliation sweep'],
    [
      'request',
      '12',
      false,
      "Requested after the pay date's data changed (deduction records, a confirmation or a return file came in, a report was voided, the pay date was re-run, or another pay date's reconciliation moved money it builds on), queue job 12",
    ],
    [
      'request',
      null,
      false,
      "Requested after the pay date's data changed (deduction records, a confirmation or a return file came in, a report was voided, the pay date was re-run, or another pay date's reconciliation moved money it builds on)",
    ],
    ['sandbox', null, false, 'Sandbox simulation of a payroll provider'],
    ['direct', null, false, 'Run in-process, not through the queue (a script or a test)'],
    [
      'direct',
      null,
      true,
      'Run in-process, not through the queue (a script or a test); final: the settlement window is over, so an employee payroll never reported counts as deducted nothing',
    ],
  ];
  it.each(cases)('words %s (triggered by %j, final %s)', (trigger, triggeredBy, final, words) => {
    expect(describeRunTrigger({ trigger, triggeredBy, final })).toBe(words);
  });

  it('words every trigger there is, none as its raw value or "by" a job number', () => {
    const triggers: readonly ReconciliationRunTrigger[] = ['sweep', 'request', 'sandbox', 'direct'];
    for (const trigger of triggers) {
      const words = describeRunTrigger({ trigger, triggeredBy: '12', final: false });
      expect(words).toMatch(/^[A-Z]/);
      expect(words).not.toContain('by 12');
      expect(words).not.toMatch(new RegExp(`^${trigger}\\b`));
    }
  });
});

describe('describeRunChanges', () => {
  it('says a reconciliation over records already taken in changed nothing', () => {
    expect(describeRunChanges({ outcome: 'completed', ledgerEntries: 0, paymentsUpdated: 0, exceptions: 0 })).toBe(
      'Nothing: no new ledger entries, no payment updated, no new exception (the records had already been taken in)',
    );
  });

  it('counts what a first reconciliation wrote, in words, leaving out what it did not do', () => {
    expect(describeRunChanges({ outcome: 'completed', ledgerEntries: 3, paymentsUpdated: 3, exceptions: 0 })).toBe('Wrote 3 ledger entries, updated 3 payments');
    expect(describeRunChanges({ outcome: 'completed', ledgerEntries: 1, paymentsUpdated: 1, exceptions: 1 })).toBe(
      'Wrote 1 ledger entry, updated 1 payment, recorded 1 new exception',
    );
    expect(describeRunChanges({ outcome: 'completed', ledgerEntries: 0, paymentsUpdated: 0, exceptions: 2 })).toBe('Recorded 2 new exceptions');
  });

  it('says an unfinished or failed run changed nothing, and why', () => {
    expect(describeRunChanges({ outcome: null, ledgerEntries: null, paymentsUpdated: null, exceptions: null })).toBe('Nothing yet: the run has not finished');
    expect(describeRunChanges({ outcome: 'failed', ledgerEntries: null, paymentsUpdated: null, exceptions: null })).toBe(
      'Nothing: the run failed, and everything it did was rolled back',
    );
  });
});

describe('describeReconciliationRunRow', () => {
  it('reads the words off a reconciliation_runs row', () => {
    const row = {
      trigger: 'request' as const,
      triggered_by: '7',
      final: false,
      finished_at: new Date('2026-11-30T05:00:02.431Z'),
      outcome: 'completed' as const,
      ledger_entries: 2,
      payments_updated: 1,
      exceptions: 0,
    };
    expect(describeReconciliationRunRow(row)).toEqual({
      started: describeRunTrigger({ trigger: 'request', triggeredBy: '7', final: false }),
      changed: 'Wrote 2 ledger entries, updated 1 payment',
    });
    expect(describeReconciliationRunRow({ ...row, finished_at: null, outcome: null }).changed).toBe('Nothing yet: the run has not finished');
  });
});
