import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { describe, expect, it } from 'vitest';
import { timeOrderedUuid } from '../../../src/platform/shared/time-ordered-uuid.ts';
import { uuidSchema } from '../../../src/platform/shared/schemas.ts';

describe('timeOrderedUuid', () => {
  it('is a version 7 UUID carrying the millisecond timestamp, accepted as a UUID everywhere', () => {
    const id = timeOrderedUuid(Date.UTC(2026, 11, 10, 9, 30, 0, 123));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace('-', '').slice(0, 12), 16)).toBe(Date.UTC(2026, 11, 10, 9, 30, 0, 123));
    expect(uuidSchema.safeParse(id).success).toBe(true);
  });

  it('sorts by time, whatever the random bits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), fc.integer({ min: 1, max: 10_000_000 }), (earlier, gap) => {
        expect(timeOrderedUuid(earlier) < timeOrderedUuid(earlier + gap)).toBe(true);
      }),
    );
  });

  it('differs between ids of the same millisecond, and refuses timestamps that do not fit 48 bits', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => timeOrderedUuid(1_800_000_000_000)));
    expect(ids.size).toBe(1000);
    expect(() => timeOrderedUuid(-1)).toThrow(RangeError);
    expect(() => timeOrderedUuid(2 ** 48)).toThrow(RangeError);
  });
});
