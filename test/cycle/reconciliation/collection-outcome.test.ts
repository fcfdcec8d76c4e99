import { describe, expect, it } from 'vitest';
import { decideCollectionOutcome, type CollectionOutcomeInput } from '../../../src/cycle/reconciliation/collection-outcome.ts';

const base: CollectionOutcomeInput = {
  amount: 10_000,
  collectedElsewhere: 0,
  requested: 10_000,
  allocated: 10_000,
  attemptNumber: 1,
  allowPostDueDateDeduction: true,
  mandateActive: true,
  nextOpenPayDate: '2026-11-27',
  previouslyCarriedTo: null,
};

describe('decideCollectionOutcome', () => {
  it.each([
    ['covered in full', {}, { outcome: 'collected', shortfall: 0, carriedToPayDate: null, paymentStatus: 'collected', targetPayDate: null }],
    [
      'short, carry allowed',
      { allocated: 4_000 },
      { outcome: 'carried', shortfall: 6_000, carriedToPayDate: '2026-11-27', paymentStatus: 'pending', targetPayDate: '2026-11-27' },
    ],
    [
      'short, post-due deduction not allowed, something collected',
      { allocated: 4_000, allowPostDueDateDeduction: false },
      { outcome: 'partially_collected', paymentStatus: 'partially_collected', carriedToPayDate: null },
    ],
    ['nothing, not allowed', { allocated: 0, allowPostDueDateDeduction: false }, { outcome: 'failed', paymentStatus: 'failed', shortfall: 10_000 }],
    ['nothing, mandate not active', { allocated: 0, mandateActive: false }, { outcome: 'failed', paymentStatus: 'failed' }],
    ['nothing, no open pay date', { allocated: 0, nextOpenPayDate: null }, { outcome: 'failed' }],
    ['nothing on the third attempt', { allocated: 0, attemptNumber: 3 }, { outcome: 'failed', carriedToPayDate: null }],
    ['second attempt still carries', { allocated: 0, attemptNumber: 2 }, { outcome: 'carried' }],
    [
      'nothing now, but an earlier pay date collected some',
      { amount: 10_000, collectedElsewhere: 4_000, requested: 6_000, allocated: 0, attemptNumber: 3 },
      { outcome: 'partially_collected', paymentStatus: 'partially_collected' },
    ],
    ['completes what an earlier pay date started', { collectedElsewhere: 4_000, requested: 6_000, allocated: 6_000 }, { outcome: 'collected', paymentStatus: 'collected' }],
    [
      'a limitation asked for part only: the rest waits, not a failure',
      { requested: 6_000, allocated: 6_000 },
      { outcome: 'collected', shortfall: 0, paymentStatus: 'pending', targetPayDate: '2026-11-27', carriedToPayDate: null },
    ],
    ['limitation remainder with nowhere to go', { requested: 6_000, allocated: 6_000, nextOpenPayDate: null }, { outcome: 'collected', paymentStatus: 'partially_collected' }],
    [
      'an earlier carry stands while short, even past the attempt limit',
      { allocated: 1_000, attemptNumber: 3, previouslyCarriedTo: '2026-11-27', nextOpenPayDate: '2026-12-24' },
      { outcome: 'carried', carriedToPayDate: '2026-11-27', targetPayDate: '2026-11-27' },
    ],
    ['an earlier carry is dropped once covered', { previouslyCarriedTo: '2026-11-27' }, { outcome: 'collected', carriedToPayDate: null, paymentStatus: 'collected' }],
  ] as const)('%s', (_name, overrides, expected) => {
    expect(decideCollectionOutcome({ ...base, ...overrides })).toMatchObject(expected);
  });

  it('rejects inputs that would collect more than was asked or more than the amount', () => {
    expect(() => decideCollectionOutcome({ ...base, allocated: 10_001 })).toThrow(RangeError);
    expect(() => decideCollectionOutcome({ ...base, collectedElsewhere: 1 })).toThrow(RangeError);
  });
});
