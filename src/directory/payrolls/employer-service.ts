import { describeActor, recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { findPayrollProvider } from '../payroll-providers/provider-repository.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { invalidInput } from '../../platform/shared/invalid-input.ts';
import { pageOf, type PagingQuery } from '../../platform/shared/paging.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { findEmployer, insertEmployer, insertOptInChange, listEmployers, listOptInChanges, setEmployerOptInStatus, setEmployerPayoutFunding } from './employer-repository.ts';
import { newEmployerSchema, optInChangeRequestSchema, payoutFundingChangeRequestSchema, toEmployerResource, type EmployerResource } from './employer-resource.ts';

/** The payroll provider a request names in its body: unknown is the body's fault (422), not a missing path (404). */
async function namedProvider(db: Executor, providerId: string, pointer: string) {
  const provider = isUuid(providerId) ? await findPayrollProvider(db, providerId) : undefined;
  if (!provider) {
    throw new InvalidError('unknown-payroll-provider', `Payroll provider ${providerId} does not exist`, {
      errors: [{ pointer, detail: 'is not a known payroll provider' }],
    });
  }
  return provider;
}

/** An employer of a payroll provider; its first opt-in status opens its history. */
export async function onboardEmployer(trx: Executor, input: unknown, action: { actor: Actor }): Promise<EmployerResource> {
  const parsed = newEmployerSchema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error);
  const employer = parsed.data;
  await namedProvider(trx, employer.payroll_provider_id, '/payroll_provider_id');
  const row = await insertEmployer(trx, employer);
  if (!row) {
    throw new ConflictError('employer-exists', `Payroll provider ${employer.payroll_provider_id} already has an employer with external id ${employer.external_id}`, {
      errors: [{ pointer: '/external_id', detail: 'is taken by another employer of this provider' }],
    });
  }
  const history = [
    await insertOptInChange(trx, {
      employer_id: row.id,
      from_status: null,
      to_status: row.salary_deduction_opt_in_status,
      changed_by: describeActor(action.actor),
      reason: null,
    }),
  ];
  const resource = toEmployerResource(row, history);
  await recordAction(trx, { actor: action.actor, action: 'employer.created', resourceType: 'employer', resourceId: row.id, reason: null, after: resource });
  return resource;
}

/**
 * An operator moves the employer's opt-in status (a signed form, a withdrawal), with the reason: the
 * move is kept in the employer's history and the audit log. Availability checks and enablement read
 * the new status from now on.
 */
export async function changeEmployerOptIn(trx: Executor, employerId: string, request: unknown, action: { actor: Actor }): Promise<EmployerResource> {
  const parsed = optInChangeRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidInput(parsed.error);
  const { salary_deduction_opt_in_status: status, reason } = parsed.data;
  const current = isUuid(employerId) ? await findEmployer(trx, employerId, { rowLock: true }) : undefined;
  if (!current) throw new NotFoundError(`Employer ${employerId}`);
  if (current.salary_deduction_opt_in_status === status) {
    throw new ConflictError('opt-in-status-unchanged', `Employer ${current.id} is already ${status}`, {
      members: { salary_deduction_opt_in_status: status },
    });
  }
  const updated = await setEmployerOptInStatus(trx, current.id, status);
  await insertOptInChange(trx, {
    employer_id: current.id,
    from_status: current.salary_deduction_opt_in_status,
    to_status: status,
    changed_by: describeActor(action.actor),
    reason,
  });
  await recordAction(trx, {
    actor: action.actor,
    action: 'employer.opt_in_changed',
    resourceType: 'employer',
    resourceId: current.id,
    reason,
    before: { salary_deduction_opt_in_status: current.salary_deduction_opt_in_status },
    after: { salary_deduction_opt_in_status: status },
  });
  return toEmployerResource(updated, await listOptInChanges(trx, current.id));
}

/**
 * Trust (or stop trusting) an employer to remit: with `deducted` its collections are paid out on
 * payroll's report, without waiting for its remittance on a bank statement. Audited with the reason.
 */
export async function changeEmployerPayoutFunding(trx: Executor, employerId: string, request: unknown, action: { actor: Actor }): Promise<EmployerResource> {
  const parsed = payoutFundingChangeRequestSchema.safeParse(request);
  if (!parsed.success) throw invalidInput(parsed.error);
  const current = isUuid(employerId) ? await findEmployer(trx, employerId, { rowLock: true }) : undefined;
  if (!current) throw new NotFoundError(`Employer ${employerId}`);
  const updated = await setEmployerPayoutFunding(trx, current.id, parsed.data.payout_funding);
  await recordAction(trx, {
    actor: action.actor,
    action: 'employer.payout_funding_changed',
    resourceType: 'employer',
    resourceId: current.id,
    reason: parsed.data.reason,
    before: { payout_funding: current.payout_funding },
    after: { payout_funding: parsed.data.payout_funding },
  });
  return toEmployerResource(updated, await listOptInChanges(trx, current.id));
}

/** The employer with its opt-in history, oldest move first. */
export async function getEmployer(db: Executor, employerId: string): Promise<EmployerResource> {
  const row = isUuid(employerId) ? await findEmployer(db, employerId) : undefined;
  if (!row) throw new NotFoundError(`Employer ${employerId}`);
  return toEmployerResource(row, await listOptInChanges(db, row.id));
}

export async function listEmployerResources(db: Executor, filters: { payrollProviderId?: string | undefined }, paging: PagingQuery) {
  const { items, paging: page } = pageOf(await listEmployers(db, filters, paging), paging);
  return { employers: items.map((row) => toEmployerResource(row)), paging: page };
}
