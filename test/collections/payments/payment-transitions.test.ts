import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  InvalidTransitionError,
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  assertTransition,
  canTransition,
  isTerminalPaymentStatus,
} from '../../../src/collections/payments/payment-transitions.ts';
import type { PaymentStatus } from '../../../src/collections/payments/payment-transitions.ts';
import type { PaymentStatus as StoredPaymentStatus } from '../../../src/platform/db/tables.ts';

// Rows: from. Columns: to, in this order. 1 = allowed. Written out by hand from the payment lifecycle and
// the decisions documented in payment-transitions.ts, independently of its table.
const COLUMNS = ['pending', 'instructed', 'collected', 'paid_out', 'cancelled', 'failed', 'partially_collected'] as const;
const EXPECTED: Record<PaymentStatus, readonly (0 | 1)[]> = {
  //                   pend inst coll paid canc fail part
  pending: [0, 1, 1, 0, 1, 1, 1],
  instructed: [1, 0, 1, 0, 0, 1, 1],
  collected: [1, 0, 0, 1, 0, 1, 1],
  paid_out: [1, 0, 1, 0, 0, 1, 1],
  cancelled: [0, 0, 0, 0, 0, 0, 0],
  failed: [1, 0, 1, 0, 0, 0, 1],
  partially_collected: [1, 0, 1, 0, 0, 1, 0],
};

const PAIRS = COLUMNS.flatMap((from) => COLUMNS.map((to, column) => [from, to, EXPECTED[from][column] === 1] as const));

describe('payment request transitions', () => {
  it('status set matches the stored PaymentStatus type and the expected table', () => {
    expectTypeOf<(typeof PAYMENT_STATUSES)[number]>().toEqualTypeOf<StoredPaymentStatus>();
    expect([...PAYMENT_STATUSES].sort()).toEqual([...COLUMNS].sort());
    expect(Object.keys(PAYMENT_TRANSITIONS).sort()).toEqual([...COLUMNS].sort());
    expect(PAIRS).toHaveLength(49);
  });

  it.each(PAIRS)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) {
      expect(() => assertTransition(from, to)).not.toThrow();
    } else {
      expect(() => assertTransition(from, to)).toThrow(InvalidTransitionError);
    }
  });

  it('the error names both ends', () => {
    let caught: unknown;
    try {
      assertTransition('instructed', 'cancelled');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidTransitionError);
    expect(caught).toMatchObject({
      name: 'InvalidTransitionError',
      from: 'instructed',
      to: 'cancelled',
      message: 'A payment request cannot move from instructed to cancelled',
    });
  });

  it('unknown statuses never transition', () => {
    const unknown = 'refunded' as PaymentStatus;
    expect(canTransition(unknown, 'pending')).toBe(false);
    expect(canTransition('pending', unknown)).toBe(false);
    expect(canTransition('constructor' as PaymentStatus, 'pending')).toBe(false);
    expect(() => assertTransition(unknown, 'pending')).toThrow(InvalidTransitionError);
    expect(isTerminalPaymentStatus(unknown)).toBe(false);
  });

  it('only cancelled is terminal', () => {
    expect(PAYMENT_STATUSES.filter(isTerminalPaymentStatus)).toEqual(['cancelled']);
  });

  it('no self-transitions', () => {
    for (const status of PAYMENT_STATUSES) expect(canTransition(status, status)).toBe(false);
  });

  it('the table cannot be changed at run time', () => {
    expect(Object.isFrozen(PAYMENT_TRANSITIONS)).toBe(true);
    for (const targets of Object.values(PAYMENT_TRANSITIONS)) expect(Object.isFrozen(targets)).toBe(true);
  });

  it('every status is reachable from pending', () => {
    const reached = new Set<PaymentStatus>(['pending']);
    const queue: PaymentStatus[] = ['pending'];
    for (let from = queue.shift(); from !== undefined; from = queue.shift()) {
      for (const to of PAYMENT_TRANSITIONS[from]) {
        if (!reached.has(to)) {
          reached.add(to);
          queue.push(to);
        }
      }
    }
    expect([...reached].sort()).toEqual([...PAYMENT_STATUSES].sort());
  });

  it.each([
    ['happy path', ['pending', 'instructed', 'collected', 'paid_out']],
    ['shortfall carried then collected', ['pending', 'instructed', 'pending', 'instructed', 'collected', 'paid_out']],
    ['cancelled before the lock', ['pending', 'cancelled']],
    ['later push version reverses a collection', ['pending', 'instructed', 'collected', 'partially_collected', 'collected', 'paid_out']],
    ['late deduction rescues a failure', ['pending', 'instructed', 'failed', 'collected']],
    ['payout rejected by the bank, paid again', ['pending', 'instructed', 'collected', 'paid_out', 'collected', 'paid_out']],
    ['correction after payout', ['pending', 'instructed', 'collected', 'paid_out', 'partially_collected']],
  ] as const)('%s is a valid path', (_name, path) => {
    for (let i = 1; i < path.length; i += 1) expect(canTransition(path[i - 1]!, path[i]!)).toBe(true);
  });
});
