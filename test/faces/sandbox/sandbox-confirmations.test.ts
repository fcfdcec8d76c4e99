import { describe, expect, it } from 'vitest';
import { fromMajorUnits } from '../../../src/platform/money/major-units.ts';
import { confirmationWithOutcomes, deductedForOutcome, sandboxConfirmation, type DeductionOutcome } from '../../../src/faces/sandbox/sandbox-confirmations.ts';

const pulled = {
  deduction_data_response: {
    id: '6f1c1f43-5a8e-4a71-9d8b-5d0f3c3b9a11',
    currency: 'GBP',
    deduction_data: Array.from({ length: 200 }, (_, i) => ({
      salary_deduction: { employee_id: `e${i}`, requested_deduction_amount: 100 + i / 100 },
    })),
  },
};

describe('sandboxConfirmation', () => {
  it('mixes full, partial and leaver outcomes, deterministically, with an exact total', () => {
    const { body, outcomes } = sandboxConfirmation(pulled, '8-2026', 'seed');
    const counts = Object.values(outcomes).reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {});
    expect(counts.full).toBeGreaterThan(150);
    expect(counts.partial).toBeGreaterThan(5);
    expect(counts.leaver).toBeGreaterThan(0);
    const sum = body.confirmation.deductions.reduce((total, d) => total + fromMajorUnits(d.deducted_amount, 'GBP'), 0);
    expect(fromMajorUnits(body.confirmation.total_amount, 'GBP')).toBe(sum);
    for (const d of body.confirmation.deductions) {
      const requested = fromMajorUnits(
        pulled.deduction_data_response.deduction_data.find((l) => l.salary_deduction.employee_id === d.employee_id)!.salary_deduction.requested_deduction_amount,
        'GBP',
      );
      const deducted = fromMajorUnits(d.deducted_amount, 'GBP');
      if (outcomes[d.employee_id] === 'full') expect(deducted).toBe(requested);
      if (outcomes[d.employee_id] === 'partial') expect(deducted).toBe(Math.floor(requested / 2));
      if (outcomes[d.employee_id] === 'leaver') expect([deducted, d.leaver]).toEqual([0, true]);
    }
    expect(sandboxConfirmation(pulled, '8-2026', 'seed')).toEqual({ body, outcomes });
  });
});

describe('deductedForOutcome', () => {
  const cases: Array<[DeductionOutcome, number, number]> = [
    ['full', 12_345, 12_345],
    ['full', 0, 0],
    ['partial', 12_345, 6_172],
    ['partial', 12_344, 6_172],
    ['partial', 1, 0],
    ['leaver', 12_345, 0],
  ];
  for (const [outcome, requested, deducted] of cases) {
    it(`${outcome} of ${requested} is ${deducted}`, () => expect(deductedForOutcome(outcome, requested)).toBe(deducted));
  }
});

describe('confirmationWithOutcomes', () => {
  const three = {
    deduction_data_response: {
      id: '6f1c1f43-5a8e-4a71-9d8b-5d0f3c3b9a11',
      currency: 'GBP',
      deduction_data: [
        { salary_deduction: { employee_id: 'a', requested_deduction_amount: 125 } },
        { salary_deduction: { employee_id: 'b', requested_deduction_amount: 50.01 } },
        { salary_deduction: { employee_id: 'c', requested_deduction_amount: 80 } },
      ],
    },
  };

  it('gives named employees their outcome and everyone else the default, with an exact total', () => {
    const { body, outcomes } = confirmationWithOutcomes(three, '9-2026', { b: 'partial', c: 'leaver' }, 'full');
    expect(outcomes).toEqual({ a: 'full', b: 'partial', c: 'leaver' });
    expect(body.confirmation).toEqual({
      deduction_data_id: three.deduction_data_response.id,
      pay_period: '9-2026',
      currency: 'GBP',
      total_amount: 150,
      deductions: [
        { employee_id: 'a', deducted_amount: 125, leaver: false },
        { employee_id: 'b', deducted_amount: 25, leaver: false },
        { employee_id: 'c', deducted_amount: 0, leaver: true },
      ],
    });
  });

  it('applies the default to all when none is named', () => {
    const { outcomes, body } = confirmationWithOutcomes(three, '9-2026', {}, 'leaver');
    expect(outcomes).toEqual({ a: 'leaver', b: 'leaver', c: 'leaver' });
    expect(body.confirmation.total_amount).toBe(0);
  });

  it('ignores names inherited from Object.prototype', () => {
    const { outcomes } = confirmationWithOutcomes(three, '9-2026', Object.create({ a: 'leaver' }) as Record<string, DeductionOutcome>, 'full');
    expect(outcomes.a).toBe('full');
  });
});
