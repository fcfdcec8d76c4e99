import type { EmploymentStatus } from '../../platform/db/tables.ts';
import { canTransitionMandate, type MandateStatus } from '../mandates/mandate-transitions.ts';

export interface MandateMove {
  from: MandateStatus;
  to: MandateStatus;
  reason: string | null;
}

export const EMPLOYMENT_ENDED = 'employment ended';
export const NOT_ON_PAYROLL = 'employee is not on the payroll this period';

/**
 * What a change of employment status does to the mandates on that employment:
 * a leaver ends every running mandate (expired; a mandate still waiting for enablement cannot expire,
 * its enablement fails instead), an employee whose status payroll no longer knows is suspended, and an
 * employee seen active again resumes the mandates that were suspended. Terminal mandates never move.
 */
export function mandateMovesForEmploymentStatus(next: EmploymentStatus): MandateMove[] {
  const moves: MandateMove[] =
    next === 'leaver'
      ? [
          { from: 'active', to: 'expired', reason: EMPLOYMENT_ENDED },
          { from: 'suspended', to: 'expired', reason: EMPLOYMENT_ENDED },
          { from: 'pending_enablement', to: 'failed', reason: EMPLOYMENT_ENDED },
        ]
      : next === 'unknown'
        ? [{ from: 'active', to: 'suspended', reason: NOT_ON_PAYROLL }]
        : [{ from: 'suspended', to: 'active', reason: null }];
  // The state machine has the last word: a move it forbids is a bug here, not a business outcome.
  return moves.filter((move) => canTransitionMandate(move.from, move.to));
}

/** Mandates that end here take their uncollected payment requests with them. */
export function endsCollection(status: MandateStatus): boolean {
  return status === 'expired' || status === 'failed';
}
