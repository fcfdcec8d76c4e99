import { serviceToday } from '../../directory/calendars/lock-date.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { EmploymentStatus } from '../../platform/db/tables.ts';
import { recordEvents, type EventToRecord } from '../../platform/events/outbox.ts';
import { toPaymentResource } from '../payments/payment-resource.ts';
import { settleSchedules } from '../schedules/schedule-settlement-repository.ts';
import { billerReach } from '../../platform/shared/caller.ts';
import { ConflictError, InvalidError, NotFoundError, type FieldError } from '../../platform/shared/domain-errors.ts';
import { pageOf, type PagingQuery } from '../../platform/shared/paging.ts';
import type { ProblemCode } from '../../platform/shared/problem-codes.ts';
import {
  cancelPendingPaymentsOfRevokedMandate,
  findMandate,
  findPaymentIdsCancelledByRevocation,
  findPayrollEmployment,
  insertMandateWithConsumer,
  listMandates,
  markMandateRevoked,
  type MandateFilters,
} from './mandate-repository.ts';
import { toMandateResource, type AuthorisationSource, type ConsumerData, type MandateResource } from './mandate-resource.ts';
import { canTransitionMandate } from './mandate-transitions.ts';
import type { ConsumerIdentityCheck, ConsumerIdentityViolation } from './mandate-person.ts';
import { isUuid } from '../../platform/shared/schemas.ts';

export const DEFAULT_MANDATE_CURRENCY = 'GBP';

/** Clocks of billers' systems drift; an authorisation a few minutes "ahead" of ours is still real. */
export const AUTHORISATION_CLOCK_SKEW_MS = 5 * 60_000;

export interface NewMandateInput {
  billerClientId: string;
  /** The biller's mode (Caller.sandbox): a payroll it does not reach (billerReach: the other mode, another sandbox's) is as unknown as a made-up id. Absent is live. */
  sandbox?: boolean;
  employeeId: string;
  payrollId: string;
  consumer: ConsumerData;
  currency: string;
  limitations: {
    maxAmountPerPayDate: number | null;
    maxTotalAmount: number | null;
    validFrom: string | null;
    validTo: string | null;
  };
  authorisationSource: AuthorisationSource;
  reference: string | null;
  metadata: Record<string, unknown> | null;
}

interface MandateTarget {
  payrollCurrency: string;
  /** Null when the employee has no employment on the payroll. */
  employmentStatus: EmploymentStatus | null;
  /** Why the consumer is not the employee (ConsumerIdentityCheck); null when it is, or the employee is not on the payroll. */
  consumerIdentity: ConsumerIdentityViolation | null;
}

export interface RuleViolation {
  slug: ProblemCode;
  error: FieldError;
  /** The problem's detail when this violation comes first, if the field error's detail would not read as one. */
  summary?: string;
}

/**
 * Why a mandate cannot be given for this employee on this payroll, if it cannot. Deduction from
 * salary needs an employment on that payroll that has not ended, in the payroll's own currency,
 * for a consumer who is that employee (consumerIdentityViolation); the authorisation must already
 * have happened, and a validity window must not be over.
 */
export function mandateRuleViolations(input: NewMandateInput, target: MandateTarget, now: Date, today: string): RuleViolation[] {
  const violations: RuleViolation[] = [];
  if (target.employmentStatus === null) {
    violations.push({
      slug: 'employee-not-on-payroll',
      error: { pointer: '/mandate_record/employee_id', detail: `employee ${input.employeeId} is not employed on payroll ${input.payrollId}` },
    });
  } else if (target.employmentStatus === 'leaver') {
    violations.push({
      slug: 'employee-left-payroll',
      error: { pointer: '/mandate_record/employee_id', detail: `employee ${input.employeeId} has left payroll ${input.payrollId}` },
    });
  }
  const identity = target.consumerIdentity;
  if (identity) violations.push(...identity.errors.map((error) => ({ slug: identity.slug, error, summary: identity.summary })));
  if (input.currency !== target.payrollCurrency) {
    violations.push({
      slug: 'currency-mismatch',
      error: {
        pointer: '/mandate_record/currency',
        detail: `must be ${target.payrollCurrency}, the currency of payroll ${input.payrollId} (got ${input.currency})`,
      },
    });
  }
  if (Date.parse(input.authorisationSource.authorised_at) > now.getTime() + AUTHORISATION_CLOCK_SKEW_MS) {
    violations.push({
      slug: 'authorisation-in-future',
      error: { pointer: '/mandate_record/authorisation_source/authorised_at', detail: 'must not be in the future' },
    });
  }
  if (input.limitations.validTo !== null && input.limitations.validTo < today) {
    violations.push({
      slug: 'mandate-already-expired',
      error: { pointer: '/mandate_record/limitations/valid_to', detail: `must not be before today (${today})` },
    });
  }
  return violations;
}

export async function createMandate(
  trx: Executor,
  input: NewMandateInput,
  clock: { now: Date; timeZone: string },
  rules: { consumerIdentity: ConsumerIdentityCheck },
): Promise<MandateResource> {
  const target = await findPayrollEmployment(trx, input.payrollId, input.employeeId, billerReach(input.billerClientId, input.sandbox));
  if (!target) {
    throw new InvalidError('unknown-payroll', `Payroll ${input.payrollId} does not exist`, {
      errors: [{ pointer: '/mandate_record/payroll_id', detail: 'is not a known payroll' }],
    });
  }
  const violations = mandateRuleViolations(
    input,
    {
      payrollCurrency: target.payroll_currency,
      employmentStatus: target.employment_status,
      // Only an employee on the payroll is judged: otherwise the employment rule already refuses.
      consumerIdentity:
        target.employment_status === null
          ? null
          : rules.consumerIdentity(input.consumer, {
              national_registration_number: target.employee_national_registration_number,
              date_of_birth: target.employee_date_of_birth,
              family_names: target.employee_family_names,
            }),
    },
    clock.now,
    serviceToday(clock.now, clock.timeZone),
  );
  if (violations.length > 0) {
    const [first] = violations;
    throw new InvalidError(first!.slug, 'The mandate cannot be created: ' + (first!.summary ?? first!.error.detail), {
      errors: violations.map((violation) => violation.error),
    });
  }

  const mandate = await insertMandateWithConsumer(trx, {
    billerClientId: input.billerClientId,
    employeeId: input.employeeId,
    payrollId: input.payrollId,
    consumer: input.consumer,
    currency: input.currency,
    maxAmountPerPayDate: input.limitations.maxAmountPerPayDate,
    maxTotalAmount: input.limitations.maxTotalAmount,
    validFrom: input.limitations.validFrom,
    validTo: input.limitations.validTo,
    authorisationSource: input.authorisationSource,
    reference: input.reference,
    metadata: input.metadata,
  });
  const resource = toMandateResource(mandate);
  await recordEvents(trx, [{ type: 'mandate.created', billerClientId: input.billerClientId, resourceType: 'mandate', resourceId: mandate.id, data: resource }]);
  return resource;
}

/** Another biller's mandate, or an id that is not even a UUID, is simply not found. */
export async function getMandate(db: Executor, billerClientId: string, mandateId: string): Promise<MandateResource> {
  const mandate = isUuid(mandateId) ? await findMandate(db, billerClientId, mandateId) : undefined;
  if (!mandate) throw new NotFoundError(`Mandate ${mandateId}`);
  return toMandateResource(mandate);
}

export async function listMandateResources(db: Executor, billerClientId: string, filters: MandateFilters, paging: PagingQuery) {
  const { items, paging: page } = pageOf(await listMandates(db, billerClientId, filters, paging), paging);
  return { mandates: items.map(toMandateResource), paging: page };
}

export interface MandateRevocation {
  mandate: MandateResource;
  cancelled_payment_ids: string[];
}

/**
 * Revokes a mandate and cancels its pending payment requests: nothing instructed is touched,
 * since that amount is already with the employer. Schedules whose last open instalments that
 * cancelled settle with it (settleSchedules). Revoking a revoked mandate answers the same
 * result again and changes nothing, so a retried DELETE is safe; a mandate that ended otherwise
 * (cancelled, expired, failed) cannot be revoked.
 */
export async function revokeMandate(trx: Executor, billerClientId: string, mandateId: string): Promise<MandateRevocation> {
  const current = isUuid(mandateId) ? await findMandate(trx, billerClientId, mandateId, { rowLock: true }) : undefined;
  if (!current) throw new NotFoundError(`Mandate ${mandateId}`);

  if (current.status === 'revoked') {
    return {
      mandate: toMandateResource(current),
      cancelled_payment_ids: await findPaymentIdsCancelledByRevocation(trx, mandateId),
    };
  }
  if (!canTransitionMandate(current.status, 'revoked')) {
    throw new ConflictError('mandate-not-revocable', `Mandate ${mandateId} is ${current.status} and can no longer be revoked`, {
      members: { mandate_status: current.status },
    });
  }

  const revoked = { ...(await markMandateRevoked(trx, mandateId)), consumer: current.consumer };
  const cancelled = await cancelPendingPaymentsOfRevokedMandate(trx, mandateId);

  const mandate = toMandateResource(revoked);
  const events: EventToRecord[] = [
    { type: 'mandate.updated', billerClientId, resourceType: 'mandate', resourceId: mandateId, data: mandate },
    ...cancelled.map((payment) => ({
      type: 'payment_request.updated' as const,
      billerClientId,
      resourceType: 'payment_request',
      resourceId: payment.id,
      data: toPaymentResource(payment),
    })),
  ];
  await recordEvents(trx, events);
  // Their schedules settle now (cancelled, mandate_revoked, when nothing else of them can collect),
  // each with its schedule.updated after the payments' events.
  await settleSchedules(
    trx,
    cancelled.flatMap((payment) => (payment.schedule_id ? [payment.schedule_id] : [])),
  );
  // Read back in the order a repeated DELETE reads them, so both answers are identical.
  return { mandate, cancelled_payment_ids: await findPaymentIdsCancelledByRevocation(trx, mandateId) };
}
