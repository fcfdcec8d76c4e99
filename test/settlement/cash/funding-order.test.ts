import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { fundableEntries, fundsEveryEntry, type FundingCandidate } from '../../../src/settlement/cash/funding-order.ts';

const entry = (id: string, amount: number, minute: number, paymentRequestId = id): FundingCandidate => ({ id, paymentRequestId, amount, requestOrder: minute });

describe('fundableEntries', () => {
  const ENTRIES = [entry('c3', 300, 3), entry('c1', 100, 1), entry('r1', -50, 5), entry('c2', 200, 2)];

  it.each([
    [-100, ['r1']],
    [-50, ['r1']],
    [0, ['r1']],
    [49, ['r1']],
    [50, ['r1', 'c1']],
    [249, ['r1', 'c1']],
    [250, ['r1', 'c1', 'c2']],
    [549, ['r1', 'c1', 'c2']],
    [550, ['r1', 'c1', 'c2', 'c3']],
    [10_000, ['r1', 'c1', 'c2', 'c3']],
  ] as const)('with %d available funds %j', (available, funded) => {
    expect(fundableEntries(ENTRIES, available)).toEqual(funded);
  });

  it("funds a payment request's entries together: a reversal never goes without the collection it reverses", () => {
    // The bug this rule closes: an older, larger request blocks the reversed one; paying the reversal
    // alone would make that payment's paid-out amount negative.
    const entries = [entry('old', 5_000, 1), entry('collect', 500, 2, 'p'), entry('reverse', -500, 3, 'p')];
    expect(fundableEntries(entries, 100)).toEqual(['collect', 'reverse']);
    expect(fundableEntries([entry('old', 5_000, 1), entry('collect', 900, 2, 'p'), entry('reverse', -500, 3, 'p')], 100)).toEqual([]);
    expect(fundableEntries([entry('collect', 300, 2, 'p'), entry('reverse', -500, 3, 'p'), entry('c', 50, 4)], 0)).toEqual(['collect', 'reverse', 'c']);
  });

  it('stops at the first collection that does not fit: a later, smaller one does not jump the queue', () => {
    expect(fundableEntries([entry('old', 500, 1), entry('new', 10, 2)], 100)).toEqual([]);
  });

  it('orders entries created at the same moment by id, reversals among themselves too', () => {
    expect(fundableEntries([entry('b', 10, 1), entry('a', 10, 1), entry('rb', -1, 1), entry('ra', -1, 9)], 20)).toEqual(['rb', 'ra', 'a', 'b']);
  });

  it('a zero entry is a collection that costs nothing', () => {
    expect(fundableEntries([entry('zero', 0, 1), entry('c', 5, 2)], 0)).toEqual(['zero']);
  });

  it('nothing to fund, nothing funded', () => {
    expect(fundableEntries([], 100)).toEqual([]);
  });

  it('refuses entries it cannot order or add up', () => {
    expect(() => fundableEntries([entry('a', 1, 1), entry('a', 2, 2)], 10)).toThrow(RangeError);
    expect(() => fundableEntries([entry('a', 1.5, 1)], 10)).toThrow(RangeError);
    expect(() => fundableEntries([{ id: 'a', paymentRequestId: 'a', amount: 1, requestOrder: Number.NaN }], 10)).toThrow(RangeError);
    expect(() => fundableEntries([entry('a', 1, 1)], 0.5)).toThrow(RangeError);
  });

  const entriesArbitrary = fc
    .uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 3 }), amount: fc.integer({ min: -200, max: 500 }), minute: fc.nat({ max: 20 }) }), {
      selector: (e) => e.id,
      maxLength: 15,
    })
    .map((rows) => rows.map((row) => entry(row.id, row.amount, row.minute)));

  // The documented order, written out independently.
  const documentedOrder = (entries: readonly FundingCandidate[]): FundingCandidate[] => {
    const key = (e: FundingCandidate) => [e.amount <= 0 ? 0 : 1, e.requestOrder] as const;
    return [...entries].sort((a, b) => {
      const [ga, ta] = key(a);
      const [gb, tb] = key(b);
      return ga - gb || ta - tb || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    });
  };

  it('property: funds a prefix of the documented order, every reversal, and the longest prefix that fits', () => {
    fc.assert(
      fc.property(entriesArbitrary, fc.integer({ min: -500, max: 3000 }), (entries, available) => {
        const funded = fundableEntries(entries, available);
        const order = documentedOrder(entries);
        expect(funded).toEqual(order.slice(0, funded.length).map((e) => e.id));
        const reversals = order.filter((e) => e.amount <= 0);
        expect(funded.length).toBeGreaterThanOrEqual(reversals.length);
        const total = order.slice(0, funded.length).reduce((sum, e) => sum + e.amount, 0);
        const reversalTotal = reversals.reduce((sum, e) => sum + e.amount, 0);
        expect(total).toBeLessThanOrEqual(Math.max(available, reversalTotal));
        if (available >= 0) expect(total).toBeLessThanOrEqual(available);
        const next = order[funded.length];
        if (next !== undefined) expect(total + next.amount).toBeGreaterThan(available);
      }),
      { numRuns: 500 },
    );
  });

  it("property: a payment request's entries are funded all together or not at all, never above what is available", () => {
    const grouped = fc
      .array(fc.record({ payment: fc.constantFrom('p1', 'p2', 'p3', 'p4'), amount: fc.integer({ min: -300, max: 500 }), minute: fc.nat({ max: 20 }) }), { maxLength: 12 })
      .map((rows) => rows.map((row, index) => entry(`e${index}`, row.amount, row.minute, row.payment)));
    fc.assert(
      fc.property(grouped, fc.integer({ min: 0, max: 2000 }), (entries, available) => {
        const funded = new Set(fundableEntries(entries, available));
        for (const payment of new Set(entries.map((e) => e.paymentRequestId))) {
          const mine = entries.filter((e) => e.paymentRequestId === payment);
          expect(mine.every((e) => funded.has(e.id)) || mine.every((e) => !funded.has(e.id))).toBe(true);
        }
        const total = entries.filter((e) => funded.has(e.id)).reduce((sum, e) => sum + e.amount, 0);
        expect(total).toBeLessThanOrEqual(available);
      }),
      { numRuns: 500 },
    );
  });

  it('property: more money never funds less (monotone in what is available)', () => {
    fc.assert(
      fc.property(entriesArbitrary, fc.integer({ min: -500, max: 3000 }), fc.nat({ max: 1000 }), (entries, available, more) => {
        const less = fundableEntries(entries, available);
        const most = fundableEntries(entries, available + more);
        expect(most.slice(0, less.length)).toEqual(less);
      }),
      { numRuns: 500 },
    );
  });

  it('property: the order entries are given in does not matter', () => {
    fc.assert(
      fc.property(entriesArbitrary, fc.integer({ min: -500, max: 3000 }), (entries, available) => {
        expect(fundableEntries([...entries].reverse(), available)).toEqual(fundableEntries(entries, available));
      }),
    );
  });
});

describe('fundsEveryEntry', () => {
  it.each([
    [[], 0, true],
    [[-50, 0], -100, true],
    [[100, -50], 50, true],
    [[100, -50], 49, false],
    [[100, 200], 300, true],
    [[100, 200], 299, false],
    [[1], 0, false],
  ] as const)('requests netting %j with %d available: %s', (nets, available, expected) => {
    expect(fundsEveryEntry(nets, available)).toBe(expected);
  });

  it('property: true exactly when fundableEntries funds every entry', () => {
    const grouped = fc
      .array(fc.record({ payment: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5'), amount: fc.integer({ min: -300, max: 500 }), minute: fc.nat({ max: 20 }) }), {
        maxLength: 12,
      })
      .map((rows) => rows.map((row, index) => entry(`e${index}`, row.amount, row.minute, row.payment)));
    fc.assert(
      fc.property(grouped, fc.integer({ min: -1000, max: 3000 }), (entries, available) => {
        const nets = new Map<string, number>();
        for (const e of entries) nets.set(e.paymentRequestId, (nets.get(e.paymentRequestId) ?? 0) + e.amount);
        expect(fundsEveryEntry([...nets.values()], available)).toBe(fundableEntries(entries, available).length === entries.length);
      }),
      { numRuns: 2000 },
    );
  });
});
