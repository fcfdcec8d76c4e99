import type { Executor } from '../../platform/db/connection.ts';
import { recordEvents } from '../../platform/events/outbox.ts';
import { findMandate, findMandatesWithConsumers } from '../mandates/mandate-repository.ts';
import { toMandateResource } from '../mandates/mandate-resource.ts';
import { assertMandateTransition, type MandateStatus } from '../mandates/mandate-transitions.ts';
import type { AdapterFactory } from '../../directory/payroll-providers/adapter.ts';
import type { EnablementRequest, EnablementResponse } from '../../directory/payroll-providers/reference-schemas.ts';
import type { Caller } from '../../platform/shared/caller.ts';
import { ConflictError, DomainError, InvalidError, NotFoundError, UpstreamError } from '../../platform/shared/domain-errors.ts';
import { enablementDecision, type EnablementDecision } from './enablement-decision.ts';
import { findEmploymentStanding, updateMandateStatus } from './enablement-repository.ts';

const REJECTED_BY_PROVIDER = 'the payroll provider rejected salary deduction for this employee';

/**
 * Salary deduction enablement of one mandate that waits for it. The payroll's provider decides when
 * it has an API; otherwise our directory does (enablementDecision). Enabled makes the mandate active,
 * rejected makes it failed with the reason, pending leaves it waiting. The mandate change, its
 * mandate.updated event and the answer commit together in `trx`.
 */
export async function enableMandate(
  trx: Executor,
  caller: Caller,
  request: EnablementRequest['enablement'],
  deps: { adapterFor: AdapterFactory },
): Promise<EnablementResponse> {
  const mandate = await findMandate(trx, caller.clientId, request.mandate_id, { rowLock: true });
  if (!mandate) throw new NotFoundError(`Mandate ${request.mandate_id}`);
  const mismatches = [
    ...(mandate.employee_id === request.employee_id ? [] : [{ pointer: '/enablement/employee_id', detail: 'is not the employee of the mandate' }]),
    ...(mandate.payroll_id === request.payroll_id ? [] : [{ pointer: '/enablement/payroll_id', detail: 'is not the payroll of the mandate' }]),
  ];
  if (mismatches.length > 0) {
    throw new InvalidError('mandate-mismatch', `Mandate ${mandate.id} is for another employee or payroll`, { errors: mismatches });
  }
  if (mandate.status !== 'pending_enablement') {
    throw new ConflictError('mandate-not-pending-enablement', `Mandate ${mandate.id} is ${mandate.status}; only a mandate pending enablement can be enabled`, {
      members: { mandate_status: mandate.status },
    });
  }

  const standing = await findEmploymentStanding(trx, mandate.employee_id, mandate.payroll_id);
  if (!standing) throw new Error(`mandate ${mandate.id} names an employment that does not exist`);
  // A sandbox provider is simulated and never called: its payrolls are decided by our own rule.
  const adapter = standing.provider_sandbox
    ? null
    : deps.adapterFor({
        id: standing.provider_id,
        api_base_url: standing.api_base_url,
        api_token_url: standing.api_token_url,
        api_client_id: standing.api_client_id,
        api_client_secret: standing.api_client_secret,
      });

  let decision: EnablementDecision;
  if (adapter) {
    const answer = await askProvider(() => adapter.enablement({ enablement: request }));
    const { status, reason } = answer.enablement;
    decision =
      status === 'enabled'
        ? { status, reason: null }
        : { status, reason: reason ?? (status === 'rejected' ? REJECTED_BY_PROVIDER : 'the payroll provider has not decided yet') };
  } else {
    decision = enablementDecision({
      employmentStatus: standing.employment_status,
      employerOptIn: standing.employer_opt_in,
      mandateCurrency: mandate.currency,
      payrollCurrency: standing.payroll_currency,
    });
  }

  const next: MandateStatus | null = decision.status === 'enabled' ? 'active' : decision.status === 'rejected' ? 'failed' : null;
  if (next) {
    assertMandateTransition(mandate.status, next);
    await updateMandateStatus(trx, mandate.id, next, decision.reason);
    const [updated] = await findMandatesWithConsumers(trx, [mandate.id]);
    await recordEvents(trx, [
      { type: 'mandate.updated', billerClientId: mandate.biller_client_id, resourceType: 'mandate', resourceId: mandate.id, data: toMandateResource(updated!) },
    ]);
  }
  return {
    enablement: { ...request, status: decision.status, reason: decision.reason },
  };
}

/**
 * Provider failures leave as they are (ProviderError). A provider's 404 would read as "your mandate
 * was not found", which is false here: the mandate exists, the provider did not recognise the
 * employment, and that calls for a look at the provider, not a retry by the biller with another id.
 */
async function askProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'not-found') {
      throw new UpstreamError('provider-not-found', 'The payroll provider does not know this employee on this payroll');
    }
    throw error;
  }
}
