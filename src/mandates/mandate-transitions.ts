// The mandate lifecycle of DESIGN.md section 3 as data.
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

export const MANDATE_STATUSES = [
  'pending_enablement',
  'active',
  'suspended',
  'revoked',
  'cancelled',
  'expired',
  'failed',
] as const;

export type MandateStatus = (typeof MANDATE_STATUSES)[number];

export const MANDATE_TRANSITIONS: Readonly<Record<MandateStatus, readonly MandateStatus[]>> = Object.freeze({
  pending_enablement: Object.freeze(['active', 'failed', 'revoked'] as const),
  active: Object.freeze(['suspended', 'revoked', 'cancelled', 'expired'] as const),
  suspended: Object.freeze(['active', 'revoked', 'cancelled', 'expired'] as const),
  revoked: Object.freeze([] as const),
  cancelled: Object.freeze([] as const),
  expired: Object.freeze([] as const),
  failed: Object.freeze([] as const),
});

export class InvalidMandateTransitionError extends Error {
  override readonly name = 'InvalidMandateTransitionError';
  readonly from: string;
  readonly to: string;

  constructor(from: string, to: string) {
    super(`A mandate cannot move from ${from} to ${to}`);
    this.from = from;
    this.to = to;
  }
}

function isMandateStatus(value: string): value is MandateStatus {
  return (MANDATE_STATUSES as readonly string[]).includes(value);
}

/** False for unknown statuses too, since statuses read from storage are only typed, not checked. */
export function canTransitionMandate(from: MandateStatus, to: MandateStatus): boolean {
  if (!isMandateStatus(from) || !isMandateStatus(to)) return false;
  return MANDATE_TRANSITIONS[from].includes(to);
}

export function assertMandateTransition(from: MandateStatus, to: MandateStatus): void {
  if (!canTransitionMandate(from, to)) throw new InvalidMandateTransitionError(from, to);
}

export function isTerminalMandateStatus(status: MandateStatus): boolean {
  return isMandateStatus(status) && MANDATE_TRANSITIONS[status].length === 0;
}
