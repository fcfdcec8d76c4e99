import { describe, expect, it } from 'vitest';
import { planReconciliation, type PaymentToReconcile, type StoredAttempt } from '../../../src/cycle/reconciliation/reconciliation-plan.ts';

// Which other pay dates a reconciliation asks to reconcile again, decided without I/O.

const PD1 = '2026-10-30';
const PD2 = '2026-11-27';

function carriedPayment(overrides: Partial<PaymentToReconcile> = {}): PaymentToReconcile {
  return {
    id: 'p-1',
    employeeId: 'e-1',
    mandateId: 'm-1',
    billerClientId: 'b-1',
    scheduleId: null,
    currency: 'GBP',
    amount: 500,
    collectedAmount: 500,
    paidOutAmount: 0,
    status: 'partially_collected',
    version: 5,
    attempts: 2,
    dueDate: '2026-11-01',
    createdAt: '2026-10-01T10:00:00.000Z',
    allowPostDueDateDeduction: true,
    targetPayDate: PD2,
    mandateActive: true,
    snapshotRequested: 141,
    attempt: null,
    highestAttemptNumber: 1,
    claimedByPayDate: null,
    earlierAttemptPayDates: [PD1],
    ...overrides,
  };
}

/** PD2's stored attempt of the payment: collected 141 of the 141 asked. */
const storedOnPd2: StoredAttempt = {
  id: 'a-2',
  attemptNumber: 2,
  requestedAmount: 141,
  deductedAmount: 141,
  collectedAmount: 141,
  shortfallAmount: 0,
  outcome: 'collected',
  carriedToPayDate: null,
  pushVersion: 1,
  revision: 1,
};

const planPd2 = (payment: PaymentToReconcile, deducted: number) =>
  planReconciliation({
    payDate: PD2,
    currency: 'GBP',
    final: false,
    nextOpenPayDate: null,
    payments: [payment],
    records: [{ employeeId: 'e-1', version: 2, deductionAmount: deducted, currency: 'GBP' }],
    currentExceptions: [],
    newId: () => 'new-id',
  });

describe('earlierPayDatesToReconcile', () => {
  it('asks the earlier pay dates holding an attempt of a payment whose collection here changed', () => {
    // PD1 collected 359 of it; PD2 now deducts 140 where it had collected 141, so PD1 may take one more.
    const plan = planPd2(carriedPayment({ collectedAmount: 500, attempt: storedOnPd2 }), 140);
    expect(plan.earlierPayDatesToReconcile).toEqual([PD1]);
    expect(plan.laterPayDatesToReconcile).toEqual([]);
  });

  it('asks nothing when what this pay date collects of it is unchanged, however often it runs', () => {
    expect(planPd2(carriedPayment({ attempt: storedOnPd2 }), 141).earlierPayDatesToReconcile).toEqual([]);
  });

  it('asks nothing of a payment with no attempt on an earlier pay date', () => {
    expect(planPd2(carriedPayment({ attempt: storedOnPd2, earlierAttemptPayDates: [] }), 140).earlierPayDatesToReconcile).toEqual([]);
  });

  it('asks each earlier pay date once, in the order given, for a first collection too', () => {
    const plan = planPd2(carriedPayment({ collectedAmount: 359, earlierAttemptPayDates: ['2026-09-30', PD1] }), 141);
    expect(plan.earlierPayDatesToReconcile).toEqual(['2026-09-30', PD1]);
  });
});
