import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { instructionAction, instructionItems } from '../../../src/cycle/instructions/instruction-action.ts';
import type { InstructionAmount, InstructionItem } from '../../../src/cycle/instructions/instruction-action.ts';

describe('instructionAction', () => {
  // Every combination of: nothing (null), zero, an amount, and a different amount, on both sides.
  const TABLE = [
    [null, null, null],
    [null, 0, null],
    [null, 500, 'new'],
    [null, 700, 'new'],
    [0, null, null],
    [0, 0, null],
    [0, 500, 'new'],
    [0, 700, 'new'],
    [500, null, 'stop'],
    [500, 0, 'stop'],
    [500, 500, 'continue'],
    [500, 700, 'amend'],
    [700, null, 'stop'],
    [700, 0, 'stop'],
    [700, 500, 'amend'],
    [700, 700, 'continue'],
    [1, 2, 'amend'],
    [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 'continue'],
  ] as const;

  it.each(TABLE)('previous %j, current %j -> %j', (previous, current, action) => {
    expect(instructionAction(previous, current)).toBe(action);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('rejects amount %d on either side', (bad) => {
    expect(() => instructionAction(bad, 100)).toThrow(RangeError);
    expect(() => instructionAction(100, bad)).toThrow(RangeError);
    expect(() => instructionAction(null, bad)).toThrow(RangeError);
  });

  it('property: agrees with the rule stated in words', () => {
    const amount = fc.option(fc.integer({ min: 0, max: 3 }), { nil: null });
    fc.assert(
      fc.property(amount, amount, (previous, current) => {
        const p = previous ?? 0;
        const c = current ?? 0;
        const expected = p === 0 ? (c === 0 ? null : 'new') : c === 0 ? 'stop' : p === c ? 'continue' : 'amend';
        expect(instructionAction(previous, current)).toBe(expected);
      }),
    );
  });
});

describe('instructionItems', () => {
  it('three consecutive pay dates: new, continue, amend, stop', () => {
    const payDate1: InstructionAmount[] = [
      { employeeId: 'emp-b', amount: 2500 },
      { employeeId: 'emp-a', amount: 1000 },
    ];
    const payDate2: InstructionAmount[] = [
      { employeeId: 'emp-a', amount: 1000 }, // unchanged
      { employeeId: 'emp-b', amount: 3000 }, // raised
      { employeeId: 'emp-c', amount: 500 }, // first deduction
    ];
    const payDate3: InstructionAmount[] = [
      { employeeId: 'emp-c', amount: 500 }, // unchanged
      { employeeId: 'emp-b', amount: 0 }, // paid off
      // emp-a absent: paid off
      { employeeId: 'emp-d', amount: 0 }, // never deducted: no item
    ];

    expect(instructionItems([], payDate1)).toEqual<InstructionItem[]>([
      { employeeId: 'emp-a', amount: 1000, previousAmount: null, action: 'new' },
      { employeeId: 'emp-b', amount: 2500, previousAmount: null, action: 'new' },
    ]);
    expect(instructionItems(payDate1, payDate2)).toEqual<InstructionItem[]>([
      { employeeId: 'emp-a', amount: 1000, previousAmount: 1000, action: 'continue' },
      { employeeId: 'emp-b', amount: 3000, previousAmount: 2500, action: 'amend' },
      { employeeId: 'emp-c', amount: 500, previousAmount: null, action: 'new' },
    ]);
    expect(instructionItems(payDate2, payDate3)).toEqual<InstructionItem[]>([
      { employeeId: 'emp-a', amount: 0, previousAmount: 1000, action: 'stop' },
      { employeeId: 'emp-b', amount: 0, previousAmount: 3000, action: 'stop' },
      { employeeId: 'emp-c', amount: 500, previousAmount: 500, action: 'continue' },
    ]);
  });

  it('after a stop, a new amount is "new" again', () => {
    const stopped = [{ employeeId: 'e', amount: 0 }];
    expect(instructionItems(stopped, [{ employeeId: 'e', amount: 900 }])).toEqual([{ employeeId: 'e', amount: 900, previousAmount: 0, action: 'new' }]);
    expect(instructionItems(stopped, [])).toEqual([]);
  });

  it('sorts by employee id in code-unit order, not locale order', () => {
    const current = ['b', 'B', 'a', '10', '9', 'é'].map((employeeId) => ({ employeeId, amount: 1 }));
    expect(instructionItems([], current).map((item) => item.employeeId)).toEqual(['10', '9', 'B', 'a', 'b', 'é']);
  });

  it('empty on both sides gives no items', () => {
    expect(instructionItems([], [])).toEqual([]);
  });

  it('rejects an employee listed twice on either side', () => {
    const twice = [
      { employeeId: 'e', amount: 1 },
      { employeeId: 'e', amount: 2 },
    ];
    expect(() => instructionItems(twice, [])).toThrow(/appears twice in the previous/);
    expect(() => instructionItems([], twice)).toThrow(/appears twice in the current/);
  });

  it.each([-5, 0.5, Number.NaN])('rejects amount %d', (amount) => {
    expect(() => instructionItems([{ employeeId: 'e', amount }], [])).toThrow(RangeError);
    expect(() => instructionItems([], [{ employeeId: 'e', amount }])).toThrow(RangeError);
  });

  const side: fc.Arbitrary<InstructionAmount[]> = fc.uniqueArray(
    fc.record({ employeeId: fc.constantFrom('e1', 'e2', 'e3', 'e4', 'e5', 'e6'), amount: fc.integer({ min: 0, max: 3 }) }),
    { selector: (x) => x.employeeId },
  );

  it('property: sorted, unique, only employees from either side, and consistent with instructionAction', () => {
    fc.assert(
      fc.property(side, side, (previous, current) => {
        const items = instructionItems(previous, current);
        const ids = items.map((item) => item.employeeId);
        expect(ids).toEqual([...new Set(ids)].sort());
        const before = new Map(previous.map((x) => [x.employeeId, x.amount]));
        const now = new Map(current.map((x) => [x.employeeId, x.amount]));
        for (const item of items) {
          expect(before.has(item.employeeId) || now.has(item.employeeId)).toBe(true);
          expect(item.previousAmount).toBe(before.get(item.employeeId) ?? null);
          expect(item.amount).toBe(now.get(item.employeeId) ?? 0);
          expect(item.action).toBe(instructionAction(item.previousAmount, item.amount));
          if (item.action === 'stop') expect(item.amount).toBe(0);
        }
      }),
    );
  });

  it('property: an employer applying the items to the previous instruction ends up deducting the current amounts', () => {
    fc.assert(
      fc.property(side, side, (previous, current) => {
        const running = new Map(previous.filter((x) => x.amount > 0).map((x) => [x.employeeId, x.amount]));
        for (const item of instructionItems(previous, current)) {
          if (item.action === 'stop') running.delete(item.employeeId);
          else running.set(item.employeeId, item.amount);
        }
        const wanted = new Map(current.filter((x) => x.amount > 0).map((x) => [x.employeeId, x.amount]));
        expect(Object.fromEntries(running)).toEqual(Object.fromEntries(wanted));
      }),
    );
  });
});
