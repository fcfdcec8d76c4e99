import type { Executor } from '../db/connection.ts';
import { insertAuditEntry, listAuditEntries, type AuditFilters } from './audit-repository.ts';

/**
 * Who did it: an API client (its id; operators act through the API as clients), a person at the CLI,
 * or a person signed in to the console (their email).
 */
export type Actor = { kind: 'client'; clientId: string } | { kind: 'cli'; user: string } | { kind: 'console'; user: string };

export const clientActor = (clientId: string): Actor => ({ kind: 'client', clientId });
export const cliActor = (user: string): Actor => ({ kind: 'cli', user });
export const consoleActor = (email: string): Actor => ({ kind: 'console', user: email });

export function describeActor(actor: Actor): string {
  if (actor.kind === 'client') return `client ${actor.clientId}`;
  return actor.kind === 'console' ? `${actor.user} (console)` : actor.user;
}

export type AuditAction =
  | 'payout.marked_paid'
  | 'payout.marked_failed'
  | 'payment_file.written'
  | 'rerun.requested'
  | 'beneficiary_account.replaced'
  | 'client.created'
  | 'client.disabled'
  | 'client.enabled'
  | 'client.secret_rotated'
  | 'client.api_key_rotated'
  | 'bank_holiday.added'
  | 'bank_holiday.removed'
  | 'pay_calendar.generated'
  | 'pay_calendar.imported'
  | 'pay_calendar.synced'
  | 'payroll_provider.created'
  | 'payroll_provider.updated'
  | 'employer.created'
  | 'employer.opt_in_changed'
  | 'payroll.created'
  | 'payroll.updated'
  | 'payroll.go_live_set'
  | 'collection_account.replaced'
  | 'employee.created'
  | 'employee.updated'
  | 'employee.left'
  | 'employees.imported'
  | 'sandbox.created'
  | 'sandbox.pay_date_locked'
  | 'sandbox.provider_pulled'
  | 'sandbox.confirmed'
  | 'sandbox.paid_out'
  | 'console_user.created'
  | 'console_user.disabled'
  | 'console_user.enabled'
  | 'console_user.password_set'
  | 'console.signed_in'
  | 'console.sign_in_failed'
  | 'console.signed_out'
  | 'job.retried'
  | 'nightly_run.retried'
  | 'webhook_delivery.redelivered'
  | 'bank_statement.imported'
  | 'bank_credit.matched'
  | 'remittance_match.unmatched'
  | 'bank_credit.set_aside'
  | 'bank_credit.restored'
  | 'bank_credit.reversed'
  | 'bank_reversal.placed'
  | 'employer.payout_funding_changed'
  | 'deduction_records.voided'
  | 'deduction_return.imported';

export interface AuditedAction {
  actor: Actor;
  action: AuditAction;
  resourceType: string;
  resourceId: string;
  reason: string | null;
  /** A summary of the resource before and after: what changed, never a credential. */
  before?: unknown;
  after?: unknown;
}

/** Call inside the action's own transaction: the record and the action commit or vanish together. */
export async function recordAction(trx: Executor, action: AuditedAction): Promise<void> {
  await insertAuditEntry(trx, {
    actorKind: action.actor.kind,
    actor: action.actor.kind === 'client' ? action.actor.clientId : action.actor.user,
    action: action.action,
    resourceType: action.resourceType,
    resourceId: action.resourceId,
    reason: action.reason?.trim() ? action.reason.trim() : null,
    before: action.before,
    after: action.after,
  });
}

export async function auditTrail(db: Executor, filters: AuditFilters) {
  return listAuditEntries(db, filters);
}
