import { fromMajorUnits, toMajorUnits } from '../../platform/money/major-units.ts';
import { seededRandom } from './seeded-random.ts';

export interface PulledDeductionData {
  deduction_data_response: {
    id: string;
    currency: string;
    deduction_data: Array<{ salary_deduction: { employee_id: string; requested_deduction_amount: number } }>;
  };
}

export interface ConfirmationBody {
  confirmation: {
    deduction_data_id: string;
    pay_period: string;
    currency: string;
    total_amount: number;
    deductions: Array<{ employee_id: string; deducted_amount: number; leaver: boolean }>;
  };
}

export type DeductionOutcome = 'full' | 'partial' | 'leaver';

/**
 * What payroll deducts of a requested amount (minor units) for an outcome: all of it in full, half
 * (rounded down to the minor unit) when net pay was too low, nothing for a leaver.
 */
export function deductedForOutcome(outcome: DeductionOutcome, requested: number): number {
  switch (outcome) {
    case 'full':
      return requested;
    case 'partial':
      return Math.floor(requested / 2);
    case 'leaver':
      return 0;
  }
}

/** The confirmation of a pulled instruction where `outcomeOf` says how each employee's deduction went. */
function confirmationOf(
  pulled: PulledDeductionData,
  payPeriod: string,
  outcomeOf: (employeeId: string) => DeductionOutcome,
): { body: ConfirmationBody; outcomes: Record<string, DeductionOutcome> } {
  const currency = pulled.deduction_data_response.currency;
  const outcomes: Record<string, DeductionOutcome> = {};
  let total = 0;
  const deductions = pulled.deduction_data_response.deduction_data.map(({ salary_deduction: line }) => {
    const outcome = outcomeOf(line.employee_id);
    const deducted = deductedForOutcome(outcome, fromMajorUnits(line.requested_deduction_amount, currency));
    outcomes[line.employee_id] = outcome;
    total += deducted;
    return { employee_id: line.employee_id, deducted_amount: toMajorUnits(deducted, currency), leaver: outcome === 'leaver' };
  });
  return {
    body: {
      confirmation: {
        deduction_data_id: pulled.deduction_data_response.id,
        pay_period: payPeriod,
        currency,
        total_amount: toMajorUnits(total, currency),
        deductions,
      },
    },
    outcomes,
  };
}

/**
 * What a real payroll run does with a pulled instruction: most employees are deducted in full,
 * some only partly (net pay too low after statutory deductions), a few have left. Deterministic
 * for a seed. Amounts are worked in minor units and converted exactly.
 */
export function sandboxConfirmation(pulled: PulledDeductionData, payPeriod: string, seed: string): { body: ConfirmationBody; outcomes: Record<string, DeductionOutcome> } {
  const random = seededRandom(`${seed}|${pulled.deduction_data_response.id}`);
  return confirmationOf(pulled, payPeriod, () => {
    const roll = random.next();
    return roll < 0.05 ? 'leaver' : roll < 0.15 ? 'partial' : 'full';
  });
}

/**
 * The confirmation an integrator asks the simulation for: each employee named in `chosen` gets that
 * outcome, everyone else `otherwise`.
 */
export function confirmationWithOutcomes(
  pulled: PulledDeductionData,
  payPeriod: string,
  chosen: Readonly<Record<string, DeductionOutcome>>,
  otherwise: DeductionOutcome,
): { body: ConfirmationBody; outcomes: Record<string, DeductionOutcome> } {
  return confirmationOf(pulled, payPeriod, (employeeId) => (Object.hasOwn(chosen, employeeId) ? chosen[employeeId]! : otherwise));
}
