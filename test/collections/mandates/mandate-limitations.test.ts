import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import {
  capMandateRequests,
  mandateCapOnPayDate,
  mandateCollectableOn,
  mandateUsage,
  mandateValidOn,
  statusLeftOutOfRerun,
  type CompetingRequest,
  type MandateRequestState,
} from '../../../src/collections/mandates/mandate-limitations.ts';
import { PAYMENT_STATUSES } from '../../../src/collections/payments/payment-transitions.ts';
import { MANDATE_STATUSES } from '../../../src/collections/mandates/mandate-transitions.ts';

const PAY_DATE = '2026-11-27';
const BEFORE = '2026-11-26';
const AFTER = '2026-11-28';

describe('mandateValidOn', () => {
  // Every bound against the pay date: none, the day before, the day itself, the day after.
  const TABLE = [
    [null, null, true],
    [null, BEFORE, false],
    [null, PAY_DATE, true],
    [null, AFTER, true],
    [BEFORE, null, true],
    [BEFORE, BEFORE, false],
    [BEFORE, PAY_DATE, true],
    [BEFORE, AFTER, true],
    [PAY_DATE, null, true],
    [PAY_DATE, PAY_DATE, true],
    [PAY_DATE, AFTER, true],
    [AFTER, null, false],
    [AFTER, AFTER, false],
    // Across a month and a year: dates, not day numbers.
    ['2026-10-31', '2026-11-01', false],
    ['2025-12-31', '2027-01-01', true],
  ] as const;

  it.each(TABLE)('valid_from %j, valid_to %j -> %j', (validFrom, validTo, valid) => {
    expect(mandateValidOn({ validFrom, validTo }, PAY_DATE)).toBe(valid);
  });

  it.each(['2026-1-05', '27/11/2026', '2026-11-27T00:00:00Z', ''])('refuses %j as a date', (bad) => {
    expect(() => mandateValidOn({ validFrom: null, validTo: null }, bad)).toThrow(RangeError);
    expect(() => mandateValidOn({ validFrom: bad, validTo: null }, PAY_DATE)).toThrow(RangeError);
    expect(() => mandateValidOn({ validFrom: null, validTo: bad }, PAY_DATE)).toThrow(RangeError);
  });

  it('property: valid exactly when the pay date is within the inclusive bounds', () => {
    const day = fc.integer({ min: 0, max: 60 });
    const iso = (n: number) => new Date(Date.UTC(2026, 10, 1) + n * 86_400_000).toISOString().slice(0, 10);
    fc.assert(
      fc.property(fc.option(day, { nil: null }), fc.option(day, { nil: null }), day, (from, to, pay) => {
        const expected = (from === null || from <= pay) && (to === null || pay <= to);
        expect(mandateValidOn({ validFrom: from === null ? null : iso(from), validTo: to === null ? null : iso(to) }, iso(pay))).toBe(expected);
      }),
    );
  });
});

describe('mandateCollectableOn', () => {
  const cases = MANDATE_STATUSES.flatMap((status) => [[status, PAY_DATE, status === 'active'] as const, [status, AFTER, false] as const]);
  it.each(cases)('%s mandate valid from %s: %j', (status, validFrom, collectable) => {
    expect(mandateCollectableOn({ status, validFrom, validTo: null }, PAY_DATE)).toBe(collectable);
  });
});

describe('mandateUsage', () => {
  const state = (id: string, status: MandateRequestState['status'], amount: number, collectedAmount = 0): MandateRequestState => ({
    id,
    status,
    amount,
    collectedAmount,
  });

  // Each status with 300 collected of 1,000: what counts when the request competes now and when not.
  const TABLE: Array<[MandateRequestState['status'], number, number]> = [
    ['pending', 300, 300],
    ['instructed', 1_000, 300],
    ['collected', 300, 300],
    ['paid_out', 300, 300],
    ['partially_collected', 300, 300],
    ['failed', 300, 300],
    ['cancelled', 300, 300],
  ];
  it.each(TABLE)('%s request: %d when not competing, %d when competing', (status, notCompeting, competing) => {
    expect(mandateUsage([state('a', status, 1_000, 300)], new Set())).toBe(BigInt(notCompeting));
    expect(mandateUsage([state('a', status, 1_000, 300)], new Set(['a']))).toBe(BigInt(competing));
  });

  it('covers every payment status', () => {
    expect(TABLE.map(([status]) => status).sort()).toEqual([...PAYMENT_STATUSES].sort());
  });

  it('adds up a mandate’s requests, exactly past 2^53', () => {
    expect(mandateUsage([], new Set())).toBe(0n);
    const requests = [
      state('a', 'collected', 5_000, 5_000),
      state('b', 'instructed', 2_000, 500),
      state('c', 'instructed', 700),
      state('d', 'pending', 4_000, 1_000),
      state('e', 'pending', 9_000),
    ];
    expect(mandateUsage(requests, new Set(['c', 'd', 'e']))).toBe(5_000n + 500n + 1_500n + 1_000n);
    const huge = Array.from({ length: 10 }, (_, i) => state(`h${i}`, 'instructed', 999_999_999_999_999));
    expect(mandateUsage(huge, new Set())).toBe(9_999_999_999_999_990n);
  });

  it.each([
    ['a negative amount', state('a', 'pending', -1)],
    ['a fractional amount', state('a', 'pending', 1.5)],
    ['collected over the amount', state('a', 'collected', 100, 101)],
    ['an unsafe amount', state('a', 'pending', 2 ** 53)],
  ])('refuses %s', (_name, bad) => {
    expect(() => mandateUsage([bad], new Set())).toThrow(RangeError);
  });
});

describe('mandateCapOnPayDate', () => {
  const SERVICE = 15_000;
  // [own per pay date, lifetime, already asked on the pay date, used, cap]
  const TABLE: Array<[number | null, number | null, number, bigint, number]> = [
    [null, null, 0, 0n, SERVICE],
    [10_000, null, 0, 0n, 10_000],
    [20_000, null, 0, 0n, SERVICE],
    [SERVICE, null, 0, 0n, SERVICE],
    [10_000, null, 4_000, 0n, 6_000],
    [10_000, null, 10_000, 0n, 0],
    [10_000, null, 12_000, 0n, 0],
    [null, 50_000, 0, 0n, SERVICE],
    [null, 50_000, 0, 40_000n, 10_000],
    [null, 50_000, 0, 50_000n, 0],
    [null, 50_000, 0, 60_000n, 0],
    [10_000, 50_000, 0, 45_000n, 5_000],
    [10_000, 50_000, 7_000, 45_000n, 3_000],
    [10_000, 8_000, 0, 0n, 8_000],
    [null, 1, 0, 10n ** 20n, 0],
  ];
  it.each(TABLE)('own %s, lifetime %s, asked %d, used %s -> %d', (maxAmountPerPayDate, maxTotalAmount, alreadyAsked, used, cap) => {
    expect(mandateCapOnPayDate({ maxAmountPerPayDate, maxTotalAmount }, { serviceMaxPerPayDate: SERVICE, alreadyAsked, used })).toBe(cap);
  });

  it.each([
    ['a zero own limit', { maxAmountPerPayDate: 0, maxTotalAmount: null }, { serviceMaxPerPayDate: SERVICE, alreadyAsked: 0, used: 0n }],
    ['a negative lifetime limit', { maxAmountPerPayDate: null, maxTotalAmount: -5 }, { serviceMaxPerPayDate: SERVICE, alreadyAsked: 0, used: 0n }],
    ['a zero service limit', { maxAmountPerPayDate: null, maxTotalAmount: null }, { serviceMaxPerPayDate: 0, alreadyAsked: 0, used: 0n }],
    ['a negative amount asked', { maxAmountPerPayDate: null, maxTotalAmount: null }, { serviceMaxPerPayDate: SERVICE, alreadyAsked: -1, used: 0n }],
    ['a negative usage', { maxAmountPerPayDate: null, maxTotalAmount: null }, { serviceMaxPerPayDate: SERVICE, alreadyAsked: 0, used: -1n }],
  ] as const)('refuses %s', (_name, mandate, on) => {
    expect(() => mandateCapOnPayDate(mandate, on)).toThrow(RangeError);
  });

  it('property: the smaller room, never negative, never over either limit', () => {
    const limit = fc.option(fc.integer({ min: 1, max: 30_000 }), { nil: null });
    fc.assert(
      fc.property(limit, limit, fc.integer({ min: 1, max: 30_000 }), fc.nat(30_000), fc.bigInt({ min: 0n, max: 40_000n }), (own, total, service, asked, used) => {
        const cap = mandateCapOnPayDate({ maxAmountPerPayDate: own, maxTotalAmount: total }, { serviceMaxPerPayDate: service, alreadyAsked: asked, used });
        const perPayDate = Math.min(own ?? service, service) - asked;
        const lifetime = total === null ? Infinity : total - Number(used);
        expect(cap).toBe(Math.max(0, Math.min(perPayDate, lifetime)));
      }),
    );
  });
});

describe('capMandateRequests', () => {
  const request = (id: string, remaining: number, dueDate: string | null, createdAt = '2026-01-01T09:00:00.000Z'): CompetingRequest => ({
    id,
    remaining,
    dueDate,
    createdAt,
  });
  const a = request('a', 10_000, '2026-10-01');
  const b = request('b', 8_000, '2026-11-01');
  const c = request('c', 3_000, null, '2025-01-01T00:00:00.000Z');

  it.each([
    [
      'room for all',
      50_000,
      [c, b, a],
      [
        ['a', 10_000],
        ['b', 8_000],
        ['c', 3_000],
      ],
    ],
    [
      'exactly all',
      21_000,
      [a, b, c],
      [
        ['a', 10_000],
        ['b', 8_000],
        ['c', 3_000],
      ],
    ],
    [
      'the second for what is left',
      15_000,
      [b, c, a],
      [
        ['a', 10_000],
        ['b', 5_000],
        ['c', 0],
      ],
    ],
    [
      'the first exactly',
      10_000,
      [a, b, c],
      [
        ['a', 10_000],
        ['b', 0],
        ['c', 0],
      ],
    ],
    [
      'inside the first',
      1,
      [c, a, b],
      [
        ['a', 1],
        ['b', 0],
        ['c', 0],
      ],
    ],
    [
      'no room',
      0,
      [a, b, c],
      [
        ['a', 0],
        ['b', 0],
        ['c', 0],
      ],
    ],
    [
      'no due date last even when oldest',
      20_000,
      [c, a, b],
      [
        ['a', 10_000],
        ['b', 8_000],
        ['c', 2_000],
      ],
    ],
    ['no requests', 5_000, [], []],
  ] as const)('%s', (_name, cap, requests, expected) => {
    expect(capMandateRequests(cap, requests)).toEqual(expected.map(([id, requested]) => ({ id, requested })));
  });

  it('same due date: oldest first, then id in code-unit order; instants, not text', () => {
    const older = request('z', 100, '2026-03-31', '2026-01-01T10:00:00+01:00'); // 09:00Z
    const newer = request('y', 100, '2026-03-31', '2026-01-01T09:30:00Z');
    const tieB = request('B', 100, '2026-03-31', '2026-01-01T09:45:00Z');
    const tieA = request('a', 100, '2026-03-31', '2026-01-01T09:45:00Z');
    expect(capMandateRequests(250, [tieA, newer, tieB, older])).toEqual([
      { id: 'z', requested: 100 },
      { id: 'y', requested: 100 },
      { id: 'B', requested: 50 },
      { id: 'a', requested: 0 },
    ]);
  });

  it('due date outranks age', () => {
    const dueFirst = request('n', 100, '2026-01-31', '2026-01-20T00:00:00.000Z');
    const older = request('o', 100, '2026-02-28', '2025-06-01T00:00:00.000Z');
    expect(capMandateRequests(100, [older, dueFirst])).toEqual([
      { id: 'n', requested: 100 },
      { id: 'o', requested: 0 },
    ]);
  });

  it('a request owing nothing is asked for nothing and takes no room', () => {
    expect(capMandateRequests(100, [request('a', 0, '2026-01-01'), request('b', 100, '2026-02-01')])).toEqual([
      { id: 'a', requested: 0 },
      { id: 'b', requested: 100 },
    ]);
  });

  it.each([
    ['a negative cap', -1, [a]],
    ['a fractional cap', 0.5, [a]],
    ['a duplicate id', 100, [a, a]],
    ['a negative remaining', 100, [request('x', -1, null)]],
    ['a bad due date', 100, [request('x', 1, '2026-1-1')]],
    ['a timestamp without offset', 100, [request('x', 1, null, '2026-01-01T09:00:00')]],
  ] as const)('refuses %s', (_name, cap, requests) => {
    expect(() => capMandateRequests(cap, requests)).toThrow(RangeError);
  });

  it('does not mutate or reorder its input', () => {
    const input = [b, a, c];
    const copy = structuredClone(input);
    capMandateRequests(12_000, input);
    expect(input).toEqual(copy);
  });

  const requests = fc.uniqueArray(
    fc.record({
      id: fc.stringMatching(/^[0-9a-f]{1,4}$/),
      remaining: fc.nat(5_000),
      dueDate: fc.option(fc.constantFrom('2026-10-01', '2026-11-01', '2026-11-27'), { nil: null }),
      createdAt: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z', '2026-02-01T00:00:00.000Z'),
    }),
    { selector: (r) => r.id, maxLength: 8 },
  );

  it('property: asks min(cap, what is owed) in all, fills in order, and does not depend on input order', () => {
    fc.assert(
      fc.property(fc.nat(30_000), requests, fc.infiniteStream(fc.nat()), (cap, list, shuffle) => {
        const capped = capMandateRequests(cap, list);
        const owed = list.reduce((sum, r) => sum + r.remaining, 0);
        expect(capped.reduce((sum, r) => sum + r.requested, 0)).toBe(Math.min(cap, owed));
        const byId = new Map(list.map((r) => [r.id, r]));
        // Greedy in order: every request before the first short one is asked in full, every one after it for nothing.
        const firstShort = capped.findIndex((r) => r.requested < byId.get(r.id)!.remaining);
        capped.forEach((r, i) => {
          expect(r.requested).toBeGreaterThanOrEqual(0);
          if (firstShort === -1 || i < firstShort) expect(r.requested).toBe(byId.get(r.id)!.remaining);
          if (firstShort !== -1 && i > firstShort) expect(r.requested).toBe(0);
        });
        const keys = [...shuffle.take(list.length)];
        const shuffled = list
          .map((r, i) => [keys[i]!, r] as const)
          .sort((x, y) => x[0] - y[0])
          .map(([, r]) => r);
        expect(capMandateRequests(cap, shuffled)).toEqual(capped);
      }),
    );
  });
});

describe('statusLeftOutOfRerun', () => {
  it('cancels on a mandate that has ended, as the ending cancelled its pending requests; otherwise pending', () => {
    const outcome = Object.fromEntries(MANDATE_STATUSES.map((status) => [status, statusLeftOutOfRerun(status)]));
    expect(outcome).toEqual({
      pending_enablement: 'pending',
      active: 'pending',
      suspended: 'pending',
      revoked: 'cancelled',
      cancelled: 'cancelled',
      expired: 'cancelled',
      failed: 'cancelled',
    });
  });
});
