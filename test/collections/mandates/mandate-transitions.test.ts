import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  InvalidMandateTransitionError,
  MANDATE_STATUSES,
  MANDATE_TRANSITIONS,
  assertMandateTransition,
  canTransitionMandate,
  isTerminalMandateStatus,
} from '../../../src/collections/mandates/mandate-transitions.ts';
import type { MandateStatus } from '../../../src/collections/mandates/mandate-transitions.ts';
import type { MandateStatus as StoredMandateStatus } from '../../../src/platform/db/tables.ts';

// Rows: from. Columns: to, in this order. 1 = allowed. Written out by hand from the mandate lifecycle.
const COLUMNS = ['pending_enablement', 'active', 'suspended', 'revoked', 'cancelled', 'expired', 'failed'] as const;
const EXPECTED: Record<MandateStatus, readonly (0 | 1)[]> = {
  //                  pend act  susp rev  canc exp  fail
  pending_enablement: [0, 1, 0, 1, 0, 0, 1],
  active: [0, 0, 1, 1, 1, 1, 0],
  suspended: [0, 1, 0, 1, 1, 1, 0],
  revoked: [0, 0, 0, 0, 0, 0, 0],
  cancelled: [0, 0, 0, 0, 0, 0, 0],
  expired: [0, 0, 0, 0, 0, 0, 0],
  failed: [0, 0, 0, 0, 0, 0, 0],
};

const PAIRS = COLUMNS.flatMap((from) => COLUMNS.map((to, column) => [from, to, EXPECTED[from][column] === 1] as const));

describe('mandate transitions', () => {
  it('status set matches the stored MandateStatus type and the expected table', () => {
    expectTypeOf<(typeof MANDATE_STATUSES)[number]>().toEqualTypeOf<StoredMandateStatus>();
    expect([...MANDATE_STATUSES].sort()).toEqual([...COLUMNS].sort());
    expect(Object.keys(MANDATE_TRANSITIONS).sort()).toEqual([...COLUMNS].sort());
    expect(PAIRS).toHaveLength(49);
  });

  it.each(PAIRS)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(canTransitionMandate(from, to)).toBe(allowed);
    if (allowed) {
      expect(() => assertMandateTransition(from, to)).not.toThrow();
    } else {
      expect(() => assertMandateTransition(from, to)).toThrow(InvalidMandateTransitionError);
    }
  });

  it('the error names both ends', () => {
    let caught: unknown;
    try {
      assertMandateTransition('revoked', 'active');
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      name: 'InvalidMandateTransitionError',
      from: 'revoked',
      to: 'active',
      message: 'A mandate cannot move from revoked to active',
    });
  });

  it('unknown statuses never transition', () => {
    const unknown = 'paused' as MandateStatus;
    expect(canTransitionMandate(unknown, 'active')).toBe(false);
    expect(canTransitionMandate('active', unknown)).toBe(false);
    expect(canTransitionMandate('toString' as MandateStatus, 'active')).toBe(false);
    expect(() => assertMandateTransition('active', unknown)).toThrow(InvalidMandateTransitionError);
    expect(isTerminalMandateStatus(unknown)).toBe(false);
  });

  it('terminal statuses are exactly revoked, cancelled, expired, failed', () => {
    expect(MANDATE_STATUSES.filter(isTerminalMandateStatus)).toEqual(['revoked', 'cancelled', 'expired', 'failed']);
  });

  it('the table cannot be changed at run time', () => {
    expect(Object.isFrozen(MANDATE_TRANSITIONS)).toBe(true);
    for (const targets of Object.values(MANDATE_TRANSITIONS)) expect(Object.isFrozen(targets)).toBe(true);
  });

  it('every status is reachable from pending_enablement, and nothing leads back to it', () => {
    const reached = new Set<MandateStatus>(['pending_enablement']);
    const queue: MandateStatus[] = ['pending_enablement'];
    for (let from = queue.shift(); from !== undefined; from = queue.shift()) {
      for (const to of MANDATE_TRANSITIONS[from]) {
        if (!reached.has(to)) {
          reached.add(to);
          queue.push(to);
        }
      }
    }
    expect([...reached].sort()).toEqual([...MANDATE_STATUSES].sort());
    for (const from of MANDATE_STATUSES) expect(canTransitionMandate(from, 'pending_enablement')).toBe(false);
  });
});
