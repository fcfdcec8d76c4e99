import { describe, expect, it } from 'vitest';
import { describeReconciliationRun } from '../../../src/faces/cli/runs-command.ts';

// `deductions runs show --kind reconciliation` says in words what started the run and what it changed,
// above the columns (trigger request, triggered_by 12, ledger_entries 0...).

const row = {
  kind: 'reconciliation',
  id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
  trigger: 'request',
  triggered_by: '12',
  final: false,
  started_at: new Date('2026-11-30T05:00:02.118Z'),
  finished_at: new Date('2026-11-30T05:00:02.431Z'),
  outcome: 'completed',
  collected: 2_550,
  ledger_entries: 0,
  payments_updated: 0,
  exceptions: 0,
};

describe('deductions runs show, of a reconciliation run', () => {
  it('says a repeat over the same records changed nothing, and which request started it', () => {
    expect(describeReconciliationRun(row).split('\n')).toEqual([
      "  What started it: Requested after the pay date's data changed (deduction records, a confirmation or a return file came in, a report was voided, the pay date was re-run, or another pay date's reconciliation moved money it builds on), queue job 12",
      '  What it changed: Nothing: no new ledger entries, no payment updated, no new exception (the records had already been taken in)',
    ]);
  });

  it('counts what a first run wrote, and says an unfinished one has not finished', () => {
    expect(
      describeReconciliationRun({ ...row, trigger: 'sweep', triggered_by: 'reconcile-sweep.2026-11-30.p.2026-11-27', final: true, ledger_entries: 3, payments_updated: 3 }),
    ).toBe(
      [
        '  What started it: Nightly reconciliation sweep of 2026-11-30; final: the settlement window is over, so an employee payroll never reported counts as deducted nothing',
        '  What it changed: Wrote 3 ledger entries, updated 3 payments',
      ].join('\n'),
    );
    expect(describeReconciliationRun({ ...row, finished_at: null, outcome: null })).toContain('What it changed: Nothing yet: the run has not finished');
  });
});
