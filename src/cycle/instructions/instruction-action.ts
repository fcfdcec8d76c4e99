import type { InstructionAction } from '../../platform/db/tables.ts';

// Instruction files tell an employer what to change in payroll, not just what to deduct: payroll clerks
// key "new", "amend" and "stop" by hand, and a missing "stop" keeps deducting from someone's wages after
// the debt is paid. Each item is therefore the difference against the previous pay date's instruction.

/** new, amend, stop or continue: stored on each instruction item (src/platform/db/tables.ts). */
export type { InstructionAction };

export interface InstructionAmount {
  readonly employeeId: string;
  /** Minor units for this pay date; 0 means "deduct nothing", exactly like being absent. */
  readonly amount: number;
}

export interface InstructionItem {
  employeeId: string;
  /** 0 on a stop item. */
  amount: number;
  /** What the previous pay date's instruction said; null when the employee was not on it. */
  previousAmount: number | null;
  action: InstructionAction;
}

function assertAmount(value: number | null, what: string): void {
  if (value !== null && (!Number.isSafeInteger(value) || value < 0)) {
    throw new RangeError(`${what} must be a non-negative integer of minor units or null, got ${String(value)}`);
  }
}

/**
 * The action for one employee, given the previous and current instructed amounts. Null and 0 are the
 * same thing to the employer (no deduction running), so a 0 previous followed by an amount is "new", and
 * nothing on either side produces no item at all.
 */
export function instructionAction(previousAmount: number | null, currentAmount: number | null): InstructionAction | null {
  assertAmount(previousAmount, 'previous amount');
  assertAmount(currentAmount, 'current amount');
  const running = previousAmount !== null && previousAmount > 0;
  const wanted = currentAmount !== null && currentAmount > 0;
  if (!running) return wanted ? 'new' : null;
  if (!wanted) return 'stop';
  return previousAmount === currentAmount ? 'continue' : 'amend';
}

function indexByEmployee(list: ReadonlyArray<InstructionAmount>, which: string): Map<string, number> {
  const byEmployee = new Map<string, number>();
  for (const { employeeId, amount } of list) {
    // The caller aggregates per employee first; two lines would leave the employer guessing which wins.
    if (byEmployee.has(employeeId)) throw new RangeError(`employee ${employeeId} appears twice in the ${which} instruction`);
    assertAmount(amount, `${which} amount of employee ${employeeId}`);
    byEmployee.set(employeeId, amount);
  }
  return byEmployee;
}

/**
 * One item per employee on either instruction (stop items carry amount 0), sorted by employee id in
 * code-unit order so the items are stored the same way on every re-run (the file lists them in
 * payroll reference order: renderInstructionFile).
 */
export function instructionItems(previous: ReadonlyArray<InstructionAmount>, current: ReadonlyArray<InstructionAmount>): InstructionItem[] {
  const before = indexByEmployee(previous, 'previous');
  const now = indexByEmployee(current, 'current');
  const employees = [...new Set([...before.keys(), ...now.keys()])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  const items: InstructionItem[] = [];
  for (const employeeId of employees) {
    const previousAmount = before.get(employeeId) ?? null;
    const amount = now.get(employeeId) ?? 0;
    const action = instructionAction(previousAmount, amount);
    if (action !== null) items.push({ employeeId, amount, previousAmount, action });
  }
  return items;
}
