import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { allocateDeduction } from '../../../src/cycle/reconciliation/allocate-deduction.ts';
import type { DeductionRequest } from '../../../src/cycle/reconciliation/allocate-deduction.ts';

function request(id: string, requested: number, dueDate: string | null, createdAt = '2026-01-01T09:00:00.000Z'): DeductionRequest {
  return { id, requested, dueDate, createdAt };
}

describe('allocateDeduction: table', () => {
  const a = request('a', 5000, '2026-03-31', '2026-01-03T00:00:00.000Z');
  const b = request('b', 3000, '2026-04-30', '2026-01-01T00:00:00.000Z');
  const c = request('c', 2000, null, '2025-12-01T00:00:00.000Z');

  it.each([
    [
      'nothing deducted',
      0,
      [a, b, c],
      [
        ['a', 0, 5000],
        ['b', 0, 3000],
        ['c', 0, 2000],
      ],
      0,
    ],
    [
      'exactly the total',
      10000,
      [a, b, c],
      [
        ['a', 5000, 0],
        ['b', 3000, 0],
        ['c', 2000, 0],
      ],
      0,
    ],
    [
      'short: earliest due date served first',
      6000,
      [c, b, a],
      [
        ['a', 5000, 0],
        ['b', 1000, 2000],
        ['c', 0, 2000],
      ],
      0,
    ],
    [
      'short inside the first request',
      1,
      [a, b, c],
      [
        ['a', 1, 4999],
        ['b', 0, 3000],
        ['c', 0, 2000],
      ],
      0,
    ],
    [
      'covers the first exactly',
      5000,
      [b, a, c],
      [
        ['a', 5000, 0],
        ['b', 0, 3000],
        ['c', 0, 2000],
      ],
      0,
    ],
    [
      'null due date last even when oldest',
      9999,
      [c, a, b],
      [
        ['a', 5000, 0],
        ['b', 3000, 0],
        ['c', 1999, 1],
      ],
      0,
    ],
    [
      'over-deduction left unallocated',
      12345,
      [a, b, c],
      [
        ['a', 5000, 0],
        ['b', 3000, 0],
        ['c', 2000, 0],
      ],
      2345,
    ],
    ['no requests: everything unallocated', 700, [], [], 700],
    ['no requests, nothing deducted', 0, [], [], 0],
  ] as const)('%s', (_name, deducted, requests, expected, unallocated) => {
    expect(allocateDeduction(deducted, requests)).toEqual({
      allocations: expected.map(([id, allocated, shortfall]) => ({ id, allocated, shortfall })),
      unallocated,
    });
  });

  it('same due date: oldest createdAt first', () => {
    const older = request('z-older', 100, '2026-03-31', '2026-01-01T00:00:00.000Z');
    const newer = request('a-newer', 100, '2026-03-31', '2026-01-02T00:00:00.000Z');
    expect(allocateDeduction(150, [newer, older]).allocations).toEqual([
      { id: 'z-older', allocated: 100, shortfall: 0 },
      { id: 'a-newer', allocated: 50, shortfall: 50 },
    ]);
  });

  it('same due date and createdAt: id decides, in code-unit order', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const upper = request('B', 100, null, at);
    const lower = request('a', 100, null, at);
    const digit = request('1', 100, null, at);
    expect(allocateDeduction(150, [lower, upper, digit]).allocations.map((x) => x.id)).toEqual(['1', 'B', 'a']);
  });

  it('createdAt compares instants, not text, across offsets', () => {
    const earlierWithOffset = request('x', 100, '2026-03-31', '2026-01-01T10:00:00+01:00'); // 09:00Z
    const laterInUtc = request('w', 100, '2026-03-31', '2026-01-01T09:30:00Z');
    expect(allocateDeduction(100, [laterInUtc, earlierWithOffset]).allocations).toEqual([
      { id: 'x', allocated: 100, shortfall: 0 },
      { id: 'w', allocated: 0, shortfall: 100 },
    ]);
  });

  it('due date outranks createdAt', () => {
    const newerButDueFirst = request('n', 100, '2026-01-31', '2026-01-20T00:00:00.000Z');
    const olderDueLater = request('o', 100, '2026-02-28', '2025-06-01T00:00:00.000Z');
    expect(allocateDeduction(100, [olderDueLater, newerButDueFirst]).allocations[0]).toEqual({ id: 'n', allocated: 100, shortfall: 0 });
  });

  it('a zero request is listed in order with nothing allocated and no shortfall', () => {
    expect(allocateDeduction(50, [request('a', 0, '2026-01-01'), request('b', 100, '2026-02-01')])).toEqual({
      allocations: [
        { id: 'a', allocated: 0, shortfall: 0 },
        { id: 'b', allocated: 50, shortfall: 50 },
      ],
      unallocated: 0,
    });
  });

  it('does not mutate or reorder its input', () => {
    const input = [request('b', 1, '2026-02-01'), request('a', 1, '2026-01-01')];
    const copy = structuredClone(input);
    allocateDeduction(1, input);
    expect(input).toEqual(copy);
  });

  it('handles amounts up to the largest safe integer', () => {
    const big = Number.MAX_SAFE_INTEGER;
    expect(allocateDeduction(big, [request('a', big, null), request('b', big, null)])).toEqual({
      allocations: [
        { id: 'a', allocated: big, shortfall: 0 },
        { id: 'b', allocated: 0, shortfall: big },
      ],
      unallocated: 0,
    });
  });
});

describe('allocateDeduction: invalid input', () => {
  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('rejects deducted %d', (deducted) => {
    expect(() => allocateDeduction(deducted, [])).toThrow(RangeError);
  });

  it.each([-1, 0.01, Number.NaN, Number.NEGATIVE_INFINITY, 2 ** 53])('rejects requested %d', (requested) => {
    expect(() => allocateDeduction(0, [request('a', requested, null)])).toThrow(/requested amount of a/);
  });

  it.each(['2026-1-01', '01/02/2026', '2026-01-01T00:00:00Z', ''])('rejects due date %j', (dueDate) => {
    expect(() => allocateDeduction(0, [request('a', 1, dueDate)])).toThrow(RangeError);
  });

  it.each(['yesterday', '2026-01-01', '2026-01-01T00:00:00', '2026-13-01T00:00:00Z', ''])(
    'rejects createdAt %j (no offset would depend on the process time zone)',
    (createdAt) => {
      expect(() => allocateDeduction(0, [request('a', 1, null, createdAt)])).toThrow(RangeError);
    },
  );

  it('rejects a duplicate id', () => {
    expect(() => allocateDeduction(10, [request('a', 1, null), request('a', 2, '2026-01-01')])).toThrow(/more than once/);
  });
});

// Generators: small ids/dates/timestamps so collisions (and therefore tie-breaks) happen often.
const dueDate = fc.option(
  fc.integer({ min: 1, max: 6 }).map((day) => `2026-0${day}-15`),
  { nil: null, freq: 4 },
);
const createdAt = fc.integer({ min: 0, max: 5 }).map((minute) => `2026-01-01T00:0${minute}:00.000Z`);
const requestsArb = fc.uniqueArray(
  fc.record({
    id: fc.string({ minLength: 1, maxLength: 3 }),
    requested: fc.integer({ min: 0, max: 10_000 }),
    dueDate,
    createdAt,
  }),
  { selector: (r) => r.id, maxLength: 8 },
);
const deductedArb = fc.integer({ min: 0, max: 90_000 });

const sum = (values: ReadonlyArray<number>): number => values.reduce((total, value) => total + value, 0);

describe('allocateDeduction: properties', () => {
  it('allocated sum === min(deducted, sum requested); unallocated === max(0, deducted - sum requested)', () => {
    fc.assert(
      fc.property(deductedArb, requestsArb, (deducted, requests) => {
        const { allocations, unallocated } = allocateDeduction(deducted, requests);
        const requested = sum(requests.map((r) => r.requested));
        expect(sum(allocations.map((x) => x.allocated))).toBe(Math.min(deducted, requested));
        expect(unallocated).toBe(Math.max(0, deducted - requested));
        expect(sum(allocations.map((x) => x.allocated)) + unallocated).toBe(deducted);
      }),
    );
  });

  it('each request appears once; allocated + shortfall === requested; nothing exceeds its request', () => {
    fc.assert(
      fc.property(deductedArb, requestsArb, (deducted, requests) => {
        const { allocations } = allocateDeduction(deducted, requests);
        expect(allocations.map((x) => x.id).sort()).toEqual(requests.map((r) => r.id).sort());
        const byId = new Map(requests.map((r) => [r.id, r]));
        for (const { id, allocated, shortfall } of allocations) {
          const requested = byId.get(id)!.requested;
          expect(Number.isSafeInteger(allocated) && allocated >= 0).toBe(true);
          expect(Number.isSafeInteger(shortfall) && shortfall >= 0).toBe(true);
          expect(allocated).toBeLessThanOrEqual(requested);
          expect(allocated + shortfall).toBe(requested);
        }
      }),
    );
  });

  it('order respected: a request gets something only if every earlier one was fully covered', () => {
    fc.assert(
      fc.property(deductedArb, requestsArb, (deducted, requests) => {
        const { allocations, unallocated } = allocateDeduction(deducted, requests);
        allocations.forEach((later, i) => {
          if (later.allocated > 0) {
            for (const earlier of allocations.slice(0, i)) expect(earlier.shortfall).toBe(0);
          }
        });
        // and nothing is left over while any request is short
        if (allocations.some((x) => x.shortfall > 0)) expect(unallocated).toBe(0);
      }),
    );
  });

  it('output order is sorted by (due date, null last; createdAt; id)', () => {
    fc.assert(
      fc.property(requestsArb, (requests) => {
        const byId = new Map(requests.map((r) => [r.id, r]));
        const ordered = allocateDeduction(0, requests).allocations.map((x) => byId.get(x.id)!);
        for (let i = 1; i < ordered.length; i += 1) {
          const [prev, next] = [ordered[i - 1]!, ordered[i]!];
          const dueKey = (r: DeductionRequest) => r.dueDate ?? '9999-99-99';
          const key = (r: DeductionRequest) => [dueKey(r), r.createdAt, r.id] as const;
          const [p, n] = [key(prev), key(next)];
          const before = p[0] < n[0] || (p[0] === n[0] && (p[1] < n[1] || (p[1] === n[1] && p[2] < n[2])));
          expect(before).toBe(true);
        }
      }),
    );
  });

  it('result is independent of input order', () => {
    fc.assert(
      fc.property(
        deductedArb,
        requestsArb.chain((requests) => fc.tuple(fc.constant(requests), fc.shuffledSubarray(requests, { minLength: requests.length }))),
        (deducted, [requests, shuffled]) => {
          expect(allocateDeduction(deducted, shuffled)).toEqual(allocateDeduction(deducted, requests));
        },
      ),
    );
  });

  it('more deducted never gives any request less (monotone)', () => {
    fc.assert(
      fc.property(deductedArb, fc.integer({ min: 0, max: 10_000 }), requestsArb, (deducted, extra, requests) => {
        const less = allocateDeduction(deducted, requests).allocations;
        const more = allocateDeduction(deducted + extra, requests).allocations;
        less.forEach((x, i) => expect(more[i]!.allocated).toBeGreaterThanOrEqual(x.allocated));
      }),
    );
  });
});
