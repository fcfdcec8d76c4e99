import { describe, expect, it } from 'vitest';
import { fromMajorUnits } from '../../src/money/major-units.ts';
import { sandboxConfirmation } from '../../src/sandbox/sandbox-confirmations.ts';

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
      const requested = fromMajorUnits(pulled.deduction_data_response.deduction_data.find((l) => l.salary_deduction.employee_id === d.employee_id)!.salary_deduction.requested_deduction_amount, 'GBP');
      const deducted = fromMajorUnits(d.deducted_amount, 'GBP');
      if (outcomes[d.employee_id] === 'full') expect(deducted).toBe(requested);
      if (outcomes[d.employee_id] === 'partial') expect(deducted).toBe(Math.floor(requested / 2));
      if (outcomes[d.employee_id] === 'leaver') expect([deducted, d.leaver]).toEqual([0, true]);
    }
    expect(sandboxConfirmation(pulled, '8-2026', 'seed')).toEqual({ body, outcomes });
  });
});
