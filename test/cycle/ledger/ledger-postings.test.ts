import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { describe, expect, it } from 'vitest';
import { postingsForAttempt } from '../../../src/cycle/ledger/ledger-postings.ts';

describe('postingsForAttempt', () => {
  it('posts a first collection at revision 0, and nothing for a first attempt that collected nothing', () => {
    expect(postingsForAttempt(null, 12_550)).toEqual({ revision: 0, postings: [{ kind: 'payment_collected', amount: 12_550 }] });
    expect(postingsForAttempt(null, 0)).toEqual({ revision: 0, postings: [] });
  });

  it('posts nothing and keeps the revision when the collected amount is unchanged', () => {
    expect(postingsForAttempt({ collected: 5_000, revision: 3 }, 5_000)).toEqual({ revision: 3, postings: [] });
  });

  it('reverses what was posted and posts the new figure under the next revision, skipping zero entries', () => {
    expect(postingsForAttempt({ collected: 5_000, revision: 0 }, 3_000)).toEqual({
      revision: 1,
      postings: [
        { kind: 'collection_reversed', amount: -5_000 },
        { kind: 'payment_collected', amount: 3_000 },
      ],
    });
    expect(postingsForAttempt({ collected: 5_000, revision: 1 }, 0)).toEqual({ revision: 2, postings: [{ kind: 'collection_reversed', amount: -5_000 }] });
    expect(postingsForAttempt({ collected: 0, revision: 2 }, 700)).toEqual({ revision: 3, postings: [{ kind: 'payment_collected', amount: 700 }] });
  });

  it('rejects negative or fractional amounts', () => {
    expect(() => postingsForAttempt(null, -1)).toThrow(RangeError);
    expect(() => postingsForAttempt(null, 1.5)).toThrow(RangeError);
  });

  it('over any sequence of figures: entries sum to the latest figure, signs match kinds, no (revision, kind) twice', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 30 }), (figures) => {
        let posted: { collected: number; revision: number } | null = null;
        const entries: Array<{ revision: number; kind: string; amount: number }> = [];
        for (const figure of figures) {
          const { revision, postings } = postingsForAttempt(posted, figure);
          for (const p of postings) entries.push({ revision, ...p });
          posted = { collected: figure, revision };
        }
        expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(figures.at(-1));
        for (const e of entries) expect(e.kind === 'payment_collected').toBe(e.amount > 0);
        expect(new Set(entries.map((e) => `${e.revision}/${e.kind}`)).size).toBe(entries.length);
      }),
    );
  });
});
