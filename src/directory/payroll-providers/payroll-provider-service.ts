import type { Updateable } from 'kysely';
import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { PayrollProvidersTable } from '../../platform/db/tables.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import { invalidInput } from '../../platform/shared/invalid-input.ts';
import { pageOf, type PagingQuery } from '../../platform/shared/paging.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import type { SecretBox } from '../../platform/shared/secret-box.ts';
import {
  newPayrollProviderSchema,
  payrollProviderChangeSchema,
  toPayrollProviderResource,
  type PayrollProviderChangeResult,
  type PayrollProviderResource,
} from './payroll-provider-resource.ts';
import { connectionAfterChange, connectionOfColumns } from './provider-connection.ts';
import { registerPayrollProvider, sealProviderClientSecret } from './provider-credentials.ts';
import { providerUrlErrors, type ProviderUrlPolicy } from './provider-url-guard.ts';
import { findPayrollProvider, listPayrollProviders, updatePayrollProvider } from './provider-repository.ts';

// Operators onboard live payroll providers here (the sandbox makes its own). The client secret we
// present to a provider is sealed before it is stored, and neither the answer nor the audit log
// ever holds it: they say whether one is stored, and whether a change replaced it. The URLs it is
// sent to must pass the URL policy (provider-url-guard.ts) when they are set, as at every call.

/** Refuses, as 422 naming the fields, URLs the policy would never let a call reach. */
async function assertProviderUrls(urls: { base_url: string; token_url: string | null }, policy: ProviderUrlPolicy): Promise<void> {
  const errors = await providerUrlErrors(urls, policy);
  if (errors.length > 0) {
    const named = errors.map((error) => `${error.pointer.replace('/connection/', '')}: ${error.detail}`).join('; ');
    throw new InvalidError('provider-url-refused', `The provider's URLs must be https to a public address; ${named}`, { errors });
  }
}

/** A live payroll provider; `input` as the API takes it (NewPayrollProvider). */
export async function onboardPayrollProvider(
  trx: Executor,
  secrets: SecretBox,
  input: unknown,
  action: { actor: Actor; defaultLeadTimeWorkingDays: number },
  urls: ProviderUrlPolicy,
): Promise<PayrollProviderResource> {
  const parsed = newPayrollProviderSchema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error);
  const { name, region, connection } = parsed.data;
  if (connection.kind === 'reference_api') await assertProviderUrls(connection, urls);
  const leadTimeWorkingDays = parsed.data.lead_time_working_days ?? action.defaultLeadTimeWorkingDays;
  const api =
    connection.kind === 'reference_api'
      ? { apiBaseUrl: connection.base_url, apiTokenUrl: connection.token_url, apiClientId: connection.client_id, apiClientSecret: connection.client_secret }
      : { apiBaseUrl: null, apiTokenUrl: null, apiClientId: null, apiClientSecret: null };
  const row = await registerPayrollProvider(trx, secrets, { name, region, leadTimeWorkingDays, ...api });
  const provider = toPayrollProviderResource(row);
  await recordAction(trx, {
    actor: action.actor,
    action: 'payroll_provider.created',
    resourceType: 'payroll_provider',
    resourceId: provider.id,
    reason: null,
    after: provider,
  });
  return provider;
}

/**
 * Moves the lock dates of a provider's unlocked pay dates to what its lead time now gives, and says
 * how many moved. The calendars own lock dates (their recomputeLockDates), and they depend on this
 * area, so the edges hand it in.
 */
export type ProviderLockDatesRecomputation = (trx: Executor, scope: { payrollProviderId: string }) => Promise<number>;

/**
 * Changes what `change` names (PayrollProviderChange); the rest keeps its value. A new lead time
 * moves the lock dates of the provider's unlocked pay dates in the same transaction (the region
 * does not: lock dates use each payroll's own bank-holiday region). A sandbox provider is
 * simulated and never called, so it cannot be given a connection.
 */
export async function changePayrollProvider(
  trx: Executor,
  secrets: SecretBox,
  providerId: string,
  change: unknown,
  action: { actor: Actor },
  calendars: { recomputeLockDates: ProviderLockDatesRecomputation },
  urls: ProviderUrlPolicy,
): Promise<PayrollProviderChangeResult> {
  const parsed = payrollProviderChangeSchema.safeParse(change);
  if (!parsed.success) throw invalidInput(parsed.error);
  const { reason, connection, name, region, lead_time_working_days: leadTime } = parsed.data;
  const current = isUuid(providerId) ? await findPayrollProvider(trx, providerId, { rowLock: true }) : undefined;
  if (!current) throw new NotFoundError(`Payroll provider ${providerId}`);
  if (connection && current.sandbox) {
    throw new ConflictError(
      'sandbox-provider',
      `Payroll provider ${current.id} is a sandbox provider: sandbox providers are simulated and never reached, so their connection cannot be changed`,
    );
  }

  const fields: Updateable<PayrollProvidersTable> = {
    ...(name === undefined ? {} : { name }),
    ...(region === undefined ? {} : { region }),
    ...(leadTime === undefined ? {} : { lead_time_working_days: leadTime }),
  };
  let secretReplaced = false;
  if (connection) {
    const outcome = connectionAfterChange(connectionOfColumns(current), connection);
    if ('missing' in outcome) {
      throw new InvalidError('incomplete-connection', `The reference interface needs ${outcome.missing.join(', ')}`, {
        errors: outcome.missing.map((field) => ({ pointer: `/connection/${field}`, detail: 'is required for a provider reached through its API' })),
      });
    }
    const next = outcome.connection;
    // The URLs the connection will use, kept ones included: a secret rotated onto an http URL
    // would go out in clear all the same.
    if (next.kind === 'reference_api') await assertProviderUrls(next, urls);
    secretReplaced = outcome.secretReplaced;
    Object.assign(
      fields,
      next.kind === 'files'
        ? { api_base_url: null, api_token_url: null, api_client_id: null, api_client_secret: null }
        : {
            api_base_url: next.base_url,
            api_token_url: next.token_url,
            api_client_id: next.client_id,
            api_client_secret: secretReplaced ? sealProviderClientSecret(secrets, next.client_secret) : next.client_secret,
          },
    );
  }
  if (Object.keys(fields).length === 0) {
    throw new InvalidError('nothing-to-change', 'Name at least one of name, region, lead_time_working_days or connection to change');
  }

  const updated = await updatePayrollProvider(trx, current.id, fields);
  const lockDatesChanged = updated.lead_time_working_days === current.lead_time_working_days ? 0 : await calendars.recomputeLockDates(trx, { payrollProviderId: current.id });
  const before = toPayrollProviderResource(current);
  const after = toPayrollProviderResource(updated);
  await recordAction(trx, {
    actor: action.actor,
    action: 'payroll_provider.updated',
    resourceType: 'payroll_provider',
    resourceId: current.id,
    reason: reason ?? null,
    before,
    after: { ...after, ...(secretReplaced ? { client_secret_replaced: true } : {}), lock_dates_changed: lockDatesChanged },
  });
  return { payroll_provider: after, lock_dates_changed: lockDatesChanged };
}

export async function getPayrollProvider(db: Executor, providerId: string): Promise<PayrollProviderResource> {
  const row = isUuid(providerId) ? await findPayrollProvider(db, providerId) : undefined;
  if (!row) throw new NotFoundError(`Payroll provider ${providerId}`);
  return toPayrollProviderResource(row);
}

export async function listPayrollProviderResources(db: Executor, paging: PagingQuery) {
  const { items, paging: page } = pageOf(await listPayrollProviders(db, paging), paging);
  return { payroll_providers: items.map(toPayrollProviderResource), paging: page };
}
