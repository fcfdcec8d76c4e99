import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { describe, expect, it } from 'vitest';
import { reviseExceptions, type CurrentException, type ExceptionDraft, type ExceptionKind } from '../../../src/cycle/reconciliation/reconciliation-plan.ts';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

function current(id: string, employeeId: string, kind: ExceptionKind, amount: number, recordVersion: number | null = 1): CurrentException {
  return { id, employeeId, kind, amount, currency: 'GBP', recordVersion };
}

function found(employeeId: string, kind: ExceptionKind, amount: number, recordVersion: number | null = 1): ExceptionDraft {
  return { employeeId, kind, amount, currency: 'GBP', recordVersion, detail: 'held' };
}

describe('reviseExceptions', () => {
  it('records what is new and keeps what is found unchanged', () => {
    const result = reviseExceptions([current('x', A, 'over_deduction', 3_000)], [found(A, 'over_deduction', 3_000), found(B, 'unexpected_employee', 700)], new Set([A, B]));
    expect(result).toEqual({ recorded: [found(B, 'unexpected_employee', 700)], superseded: [] });
  });

  it('supersedes a figure that changed for the same record version, and records the new one', () => {
    const result = reviseExceptions([current('x', A, 'over_deduction', 4_000)], [found(A, 'over_deduction', 3_500)], new Set([A]));
    expect(result).toEqual({ recorded: [found(A, 'over_deduction', 3_500)], superseded: ['x'] });
  });

  it('supersedes on a new record version even when the amount is the same', () => {
    const result = reviseExceptions([current('x', A, 'over_deduction', 100, 1)], [found(A, 'over_deduction', 100, 2)], new Set([A]));
    expect(result).toEqual({ recorded: [found(A, 'over_deduction', 100, 2)], superseded: ['x'] });
  });

  it('supersedes what a reconciled employee no longer owes back, and leaves employees not reconciled alone', () => {
    const result = reviseExceptions([current('x', A, 'over_deduction', 500), current('y', B, 'missing_confirmation', 900, null)], [], new Set([A]));
    expect(result).toEqual({ recorded: [], superseded: ['x'] });
  });

  it('treats kinds separately: a missing confirmation gives way once a record arrives', () => {
    const result = reviseExceptions([current('m', A, 'missing_confirmation', 900, null)], [found(A, 'over_deduction', 50, 1)], new Set([A]));
    expect(result).toEqual({ recorded: [found(A, 'over_deduction', 50, 1)], superseded: ['m'] });
  });

  // After revising, the current set for reconciled employees is exactly what was found, and is a fixed
  // point: revising again against it changes nothing.
  it('leaves exactly the found exceptions current, and revising again changes nothing', () => {
    const employees = [A, B];
    const kinds: ExceptionKind[] = ['over_deduction', 'unexpected_employee', 'missing_confirmation'];
    const slot = fc.record({
      employee: fc.constantFrom(...employees),
      kind: fc.constantFrom(...kinds),
      amount: fc.integer({ min: 1, max: 5 }),
      version: fc.option(fc.integer({ min: 1, max: 3 })),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(slot, { selector: (s) => `${s.employee}/${s.kind}`, maxLength: 6 }),
        fc.uniqueArray(slot, { selector: (s) => `${s.employee}/${s.kind}`, maxLength: 6 }),
        fc.subarray(employees),
        (before, after, reconciledList) => {
          const reconciled = new Set(reconciledList);
          const stored = before.map((s, i) => current(`c${i}`, s.employee, s.kind, s.amount, s.version));
          const drafts = after.filter((s) => reconciled.has(s.employee)).map((s) => found(s.employee, s.kind, s.amount, s.version));
          const { recorded, superseded } = reviseExceptions(stored, drafts, reconciled);
          const survivors = stored.filter((e) => !superseded.includes(e.id));
          const nowCurrent = [...survivors.map(({ id: _id, ...rest }) => ({ ...rest, detail: 'held' })), ...recorded];
          const key = (e: { employeeId: string; kind: string }) => `${e.employeeId}/${e.kind}`;
          expect(new Set(nowCurrent.map(key)).size).toBe(nowCurrent.length);
          expect(nowCurrent.filter((e) => reconciled.has(e.employeeId)).sort((x, y) => key(x).localeCompare(key(y)))).toEqual(
            [...drafts].sort((x, y) => key(x).localeCompare(key(y))),
          );
          expect(survivors.filter((e) => !reconciled.has(e.employeeId))).toEqual(stored.filter((e) => !reconciled.has(e.employeeId)));
          const again = reviseExceptions(
            nowCurrent.map((e, i) => ({ id: `n${i}`, employeeId: e.employeeId, kind: e.kind, amount: e.amount, currency: e.currency, recordVersion: e.recordVersion })),
            drafts,
            reconciled,
          );
          expect(again).toEqual({ recorded: [], superseded: [] });
        },
      ),
      { numRuns: 500 },
    );
  });
});
