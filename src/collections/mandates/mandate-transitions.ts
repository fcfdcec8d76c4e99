import type { MandateStatus } from '../../platform/db/tables.ts';
import { defineStatusTransitions, InvalidStatusTransitionError } from '../../platform/shared/status-transitions.ts';

// The mandate lifecycle as data.
//
// pending_enablement waits for the employer/payroll to enable salary deduction: it becomes active, or
// failed when enablement is rejected, or revoked when the biller withdraws first. It cannot be
// suspended, cancelled or expired: those describe a running deduction, and an employee who leaves or
// opts out before enablement makes the enablement itself fail.
//
// suspended only means "not on the payroll this period" and returns to active when the employee is seen
// again; every ending available to an active mandate is available to a suspended one, because an
// employee who is away can still leave, opt out, or be revoked by the biller.
//
// revoked, cancelled, expired and failed are terminal: each records who ended the authority to deduct
// (biller, employee/employer, employment, enablement), and resuming collection needs a new mandate with
// fresh authorisation rather than a status flip. Self-transitions are not transitions.

export const MANDATE_STATUSES = ['pending_enablement', 'active', 'suspended', 'revoked', 'cancelled', 'expired', 'failed'] as const satisfies readonly MandateStatus[];

/** The stored status (src/platform/db/tables.ts), with the lifecycle that moves it; the list above names exactly its values. */
export type { MandateStatus };

export class InvalidMandateTransitionError extends InvalidStatusTransitionError {
  override readonly name = 'InvalidMandateTransitionError';

  constructor(from: string, to: string) {
    super('A mandate', from, to);
  }
}

export const MANDATE_LIFECYCLE = defineStatusTransitions<MandateStatus>({
  resource: 'A mandate',
  statuses: MANDATE_STATUSES,
  transitions: {
    pending_enablement: ['active', 'failed', 'revoked'],
    active: ['suspended', 'revoked', 'cancelled', 'expired'],
    suspended: ['active', 'revoked', 'cancelled', 'expired'],
    revoked: [],
    cancelled: [],
    expired: [],
    failed: [],
  },
  invalid: (from, to) => new InvalidMandateTransitionError(from, to),
});

export const MANDATE_TRANSITIONS = MANDATE_LIFECYCLE.transitions;

/** False for unknown statuses too, since statuses read from storage are only typed, not checked. */
export const canTransitionMandate = MANDATE_LIFECYCLE.can;
export const assertMandateTransition = MANDATE_LIFECYCLE.assert;
export const isTerminalMandateStatus = MANDATE_LIFECYCLE.isTerminal;
