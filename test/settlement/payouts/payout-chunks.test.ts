import { describe, expect, it } from 'vitest';
import { MIN_ENTRIES_PER_PAYOUT_CHUNK, payoutChunkCount, payoutChunkOf } from '../../../src/settlement/payouts/payout-chunks.ts';

describe('payoutChunkCount', () => {
  it('is one below two chunks of the smallest size, whatever the concurrency', () => {
    for (const concurrency of [1, 2, 4, 64]) {
      expect(payoutChunkCount(0, concurrency)).toBe(1);
      expect(payoutChunkCount(1, concurrency)).toBe(1);
      expect(payoutChunkCount(2 * MIN_ENTRIES_PER_PAYOUT_CHUNK - 1, concurrency)).toBe(1);
    }
  });

  it('grows one chunk per smallest chunk of entries, up to the concurrency and never past it', () => {
    expect(payoutChunkCount(2 * MIN_ENTRIES_PER_PAYOUT_CHUNK, 2)).toBe(2);
    expect(payoutChunkCount(975_000, 2)).toBe(2);
    expect(payoutChunkCount(975_000, 1)).toBe(1);
    expect(payoutChunkCount(975_000, 64)).toBe(19);
    expect(payoutChunkCount(3 * MIN_ENTRIES_PER_PAYOUT_CHUNK - 1, 8)).toBe(2);
  });

  it('holds for every entry count and concurrency in a grid: between 1 and the concurrency, each chunk at least the smallest (or a single chunk)', () => {
    for (let concurrency = 1; concurrency <= 8; concurrency++) {
      for (let entries = 0; entries <= 500; entries++) {
        const chunks = payoutChunkCount(entries, concurrency, 20);
        expect(chunks).toBeGreaterThanOrEqual(1);
        expect(chunks).toBeLessThanOrEqual(concurrency);
        if (chunks > 1) expect(Math.floor(entries / chunks)).toBeGreaterThanOrEqual(20);
        // The largest count that keeps each chunk at the smallest size or more, within the concurrency.
        expect(chunks).toBe(Math.max(1, Math.min(concurrency, Math.floor(entries / 20))));
      }
    }
  });

  it('refuses counts that are not whole and positive', () => {
    expect(() => payoutChunkCount(-1, 2)).toThrow(RangeError);
    expect(() => payoutChunkCount(1.5, 2)).toThrow(RangeError);
    expect(() => payoutChunkCount(10, 0)).toThrow(RangeError);
    expect(() => payoutChunkCount(10, 2, 0)).toThrow(RangeError);
  });
});

describe('payoutChunkOf', () => {
  it("is the id's last byte modulo the chunk count", () => {
    expect(payoutChunkOf('0a1b2c3d-4e5f-6789-abcd-ef0123456700', 2)).toBe(0);
    expect(payoutChunkOf('0a1b2c3d-4e5f-6789-abcd-ef0123456701', 2)).toBe(1);
    expect(payoutChunkOf('0a1b2c3d-4e5f-6789-abcd-ef01234567ff', 3)).toBe(255 % 3);
    expect(payoutChunkOf('0A1B2C3D-4E5F-6789-ABCD-EF01234567FE', 7)).toBe(254 % 7);
    expect(payoutChunkOf('0a1b2c3d-4e5f-6789-abcd-ef0123456789', 1)).toBe(0);
  });

  it('spreads random ids evenly', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 30_000; i++) counts[payoutChunkOf(crypto.randomUUID(), 3)]! += 1;
    // 256 byte values over 3 chunks: 86/85/85 of them, so each chunk holds about a third.
    for (const count of counts) expect(count / 30_000).toBeGreaterThan(0.31);
  });

  it('refuses what is not an id, and a chunk count below one', () => {
    expect(() => payoutChunkOf('not-a-uuid-xz', 2)).toThrow(RangeError);
    expect(() => payoutChunkOf('0a1b2c3d-4e5f-6789-abcd-ef0123456789', 0)).toThrow(RangeError);
  });
});
