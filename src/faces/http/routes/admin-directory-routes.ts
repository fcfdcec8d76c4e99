import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import { recomputeLockDates } from '../../../directory/calendars/bank-holiday-service.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { pagingQuerySchema } from '../../../platform/shared/paging.ts';
import { currencySchema, uuidSchema } from '../../../platform/shared/schemas.ts';
import { secretBoxFor } from '../../../platform/shared/secret-box.ts';
import {
  newPayrollProviderSchema,
  payrollProviderChangeResultSchema,
  payrollProviderChangeSchema,
  payrollProviderEnvelopeSchema,
  payrollProvidersPageSchema,
} from '../../../directory/payroll-providers/payroll-provider-resource.ts';
import {
  changePayrollProvider,
  getPayrollProvider,
  listPayrollProviderResources,
  onboardPayrollProvider,
} from '../../../directory/payroll-providers/payroll-provider-service.ts';
import { providerUrlPolicy } from '../../../directory/payroll-providers/provider-url-guard.ts';
import { resolveWebhookTarget, systemResolver } from '../../webhooks/webhook-target.ts';
import {
  employerEnvelopeSchema,
  employersPageSchema,
  newEmployerSchema,
  optInChangeRequestSchema,
  payoutFundingChangeRequestSchema,
} from '../../../directory/payrolls/employer-resource.ts';
import { changeEmployerOptIn, changeEmployerPayoutFunding, getEmployer, listEmployerResources, onboardEmployer } from '../../../directory/payrolls/employer-service.ts';
import {
  newPayrollSchema,
  payrollChangeResultSchema,
  payrollChangeSchema,
  payrollRecordEnvelopeSchema,
  payrollRecordsPageSchema,
} from '../../../directory/payrolls/payroll-setup-resource.ts';
import { changePayroll, getPayrollRecord, listPayrollRecords, setUpPayroll } from '../../../directory/payrolls/payroll-setup-service.ts';
import { bankAccountObject } from '../../../settlement/payouts/bank-account-details.ts';
import {
  beneficiaryAccountChangeSchema,
  beneficiaryAccountListSchema,
  collectionAccountEnvelopeSchema,
  collectionAccountListSchema,
  toBeneficiaryAccountResource,
  toCollectionAccountResource,
} from '../../../settlement/payouts/bank-account-resource.ts';
import { beneficiaryAccountHistory, replaceBeneficiaryAccount } from '../../../settlement/payouts/beneficiary-account-service.ts';
import { collectionAccountHistory, replaceCollectionAccount } from '../../../settlement/payouts/collection-account-service.ts';

// Setting up an installation without SQL: operators onboard payroll providers, their employers and
// payrolls, say where employers remit (the collection account) and where billers are paid. Every
// change is audited with the operator's client id.

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const read = { kind: 'both', scope: 'admin:read', roles: ['operator'] } as const;
const write = { kind: 'both', scope: 'admin:write', roles: ['operator'] } as const;

// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const providerParams = z.strictObject({ payroll_provider_id: z.string() });
const employerParams = z.strictObject({ employer_id: z.string() });
const payrollParams = z.strictObject({ payroll_id: z.string() });
const billerParams = z.strictObject({ client_id: z.string() });

const employersQuery = pagingQuerySchema.extend({ payroll_provider_id: uuidSchema.optional() });
const payrollsQuery = pagingQuerySchema.extend({ employer_id: uuidSchema.optional(), payroll_provider_id: uuidSchema.optional() });
const collectionAccountsQuery = z.object({ currency: currencySchema.optional() });

const reasonSchema = z.string().trim().min(1).max(500).meta({ description: 'Why (kept in the audit log), e.g. the signed change request' });

const newCollectionAccountRequest = bankAccountObject({ currency: currencySchema, reason: reasonSchema }).meta({
  id: 'SetCollectionAccountRequest',
  description: 'The account employers remit into in the currency from now on; the one it replaces is kept, inactive',
  example: {
    currency: 'GBP',
    sort_code: '20-00-00',
    account_number: '41234978',
    account_holder_name: 'Salary Deductions Collections Ltd',
    reason: 'new client money account, board minute 12',
  },
});

const newBeneficiaryAccountRequest = bankAccountObject({ currency: currencySchema, reason: reasonSchema }).meta({
  id: 'SetBeneficiaryAccountRequest',
  description: "Where the biller's payouts in the currency go from now on; the account it replaces is kept, inactive",
  example: { currency: 'GBP', sort_code: '60-16-13', account_number: '31926819', account_holder_name: 'Acme Lending Ltd', reason: 'onboarding form 17' },
});

export const registerAdminDirectoryRoutes: RouteModule = (app, deps) => {
  const secrets = () => secretBoxFor(deps.config);

  // Payroll providers -------------------------------------------------------------------------------

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payroll-providers',
    operationId: 'create_payroll_provider',
    summary: 'Add a payroll provider',
    description: 'Operators: add a live payroll provider (its client secret is stored encrypted and never shown again)',
    tags: ['Payroll providers'],
    auth: write,
    body: newPayrollProviderSchema,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The payroll provider', schema: payrollProviderEnvelopeSchema },
      422: { description: 'Invalid body, or a URL that is not https to a public address (provider-url-refused)', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 201,
      body: {
        payroll_provider: await onboardPayrollProvider(
          trx,
          secrets(),
          ctx.body,
          {
            actor: clientActor(ctx.caller.clientId),
            defaultLeadTimeWorkingDays: deps.config.DEFAULT_PROVIDER_LEAD_DAYS,
          },
          providerUrlPolicy(deps.config.PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver),
        ),
      },
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/payroll-providers',
    operationId: 'list_payroll_providers',
    summary: 'List payroll providers',
    description: 'Operators: list payroll providers, newest first (live and sandbox; never a client secret)',
    tags: ['Payroll providers'],
    auth: read,
    query: pagingQuerySchema,
    responses: {
      200: { description: 'A page of payroll providers', schema: payrollProvidersPageSchema },
      400: { description: 'Invalid query or cursor', ...problem },
    },
    handler: async (ctx) => ({ status: 200, body: await listPayrollProviderResources(deps.db, ctx.query) }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/payroll-providers/:payroll_provider_id',
    operationId: 'get_payroll_provider',
    summary: 'Get a payroll provider',
    description: 'Operators: get a payroll provider (whether a client secret is stored, never the secret)',
    tags: ['Payroll providers'],
    auth: read,
    params: providerParams,
    responses: {
      200: { description: 'The payroll provider', schema: payrollProviderEnvelopeSchema },
      404: { description: 'Payroll provider not found', ...problem },
    },
    handler: async (ctx) => ({ status: 200, body: { payroll_provider: await getPayrollProvider(deps.db, ctx.params.payroll_provider_id) } }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payroll-providers/:payroll_provider_id',
    operationId: 'update_payroll_provider',
    summary: 'Change a payroll provider',
    description: 'Operators: change a payroll provider (name, region, lead time, connection); fields left out keep their value',
    tags: ['Payroll providers'],
    auth: write,
    params: providerParams,
    body: payrollProviderChangeSchema,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The payroll provider, changed, and how many lock dates its new lead time moved', schema: payrollProviderChangeResultSchema },
      404: { description: 'Payroll provider not found', ...problem },
      409: { description: 'A connection change on a sandbox provider (sandbox providers are simulated and never reached)', ...problem },
      422: { description: 'Invalid body, nothing to change, an incomplete connection, or a URL that is not https to a public address', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: await changePayrollProvider(
        trx,
        secrets(),
        ctx.params.payroll_provider_id,
        ctx.body,
        { actor: clientActor(ctx.caller.clientId) },
        { recomputeLockDates },
        providerUrlPolicy(deps.config.PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver),
      ),
    }),
  });

  // Employers ---------------------------------------------------------------------------------------

  defineRoute(app, {
    method: 'POST',
    url: '/admin/employers',
    operationId: 'create_employer',
    summary: 'Add an employer',
    description: 'Operators: add an employer of a payroll provider, with its opt-in status (the start of its history)',
    tags: ['Employers'],
    auth: write,
    body: newEmployerSchema,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The employer, with its opt-in history', schema: employerEnvelopeSchema },
      409: { description: 'The provider already has an employer with this external id', ...problem },
      422: { description: 'Invalid body, or an unknown payroll provider', ...problem },
    },
    effect: async (ctx, trx) => ({ status: 201, body: { employer: await onboardEmployer(trx, ctx.body, { actor: clientActor(ctx.caller.clientId) }) } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/employers',
    operationId: 'list_employers',
    summary: 'List employers',
    description: 'Operators: list employers, newest first, optionally of one payroll provider',
    tags: ['Employers'],
    auth: read,
    query: employersQuery,
    responses: {
      200: { description: 'A page of employers', schema: employersPageSchema },
      400: { description: 'Invalid query or cursor', ...problem },
    },
    handler: async (ctx) => {
      const { payroll_provider_id: payrollProviderId, ...paging } = ctx.query;
      return { status: 200, body: await listEmployerResources(deps.db, { payrollProviderId }, paging) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/employers/:employer_id',
    operationId: 'get_employer',
    summary: 'Get an employer',
    description: 'Operators: get an employer with its opt-in status history (who moved it, when and why)',
    tags: ['Employers'],
    auth: read,
    params: employerParams,
    responses: {
      200: { description: 'The employer, with its opt-in history', schema: employerEnvelopeSchema },
      404: { description: 'Employer not found', ...problem },
    },
    handler: async (ctx) => ({ status: 200, body: { employer: await getEmployer(deps.db, ctx.params.employer_id) } }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/employers/:employer_id/opt-in-status',
    operationId: 'change_employer_opt_in_status',
    summary: "Change an employer's opt-in status",
    description: "Operators: change an employer's salary-deduction opt-in status, with the reason (kept in its history and the audit log)",
    tags: ['Employers'],
    auth: write,
    params: employerParams,
    body: optInChangeRequestSchema,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The employer, with its opt-in history', schema: employerEnvelopeSchema },
      404: { description: 'Employer not found', ...problem },
      409: { description: 'The employer already has this status', ...problem },
      422: { description: 'Invalid body (a status and a reason are required)', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: { employer: await changeEmployerOptIn(trx, ctx.params.employer_id, ctx.body, { actor: clientActor(ctx.caller.clientId) }) },
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/employers/:employer_id/payout-funding',
    operationId: 'change_employer_payout_funding',
    summary: "Change what makes an employer's collections payable",
    description:
      "Operators: `received` pays this employer's collections out only once its remittance is on a bank statement; `deducted` " +
      "pays them on payroll's report (for employers trusted to remit); null follows the installation's PAYOUT_FUNDING. Audited with the reason.",
    tags: ['Employers'],
    auth: write,
    params: employerParams,
    body: payoutFundingChangeRequestSchema,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The employer', schema: employerEnvelopeSchema },
      404: { description: 'Employer not found', ...problem },
      422: { description: 'Invalid body (a funding, or null, and a reason are required)', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: { employer: await changeEmployerPayoutFunding(trx, ctx.params.employer_id, ctx.body, { actor: clientActor(ctx.caller.clientId) }) },
    }),
  });

  // Payrolls ----------------------------------------------------------------------------------------

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls',
    operationId: 'create_payroll',
    summary: 'Add a payroll',
    description: "Operators: add a payroll of an employer (run by the employer's payroll provider); its pay calendar is set separately",
    tags: ['Payrolls'],
    auth: write,
    body: newPayrollSchema,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The payroll', schema: payrollRecordEnvelopeSchema },
      409: { description: 'The provider already has a payroll with this external id', ...problem },
      422: { description: 'Invalid body, or an unknown employer', ...problem },
    },
    effect: async (ctx, trx) => ({ status: 201, body: { payroll: await setUpPayroll(trx, ctx.body, { actor: clientActor(ctx.caller.clientId) }) } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/payrolls',
    operationId: 'list_payrolls',
    summary: 'List payrolls',
    description: 'Operators: list payrolls, newest first, optionally of one employer or payroll provider',
    tags: ['Payrolls'],
    auth: read,
    query: payrollsQuery,
    responses: {
      200: { description: 'A page of payrolls', schema: payrollRecordsPageSchema },
      400: { description: 'Invalid query or cursor', ...problem },
    },
    handler: async (ctx) => {
      const { employer_id: employerId, payroll_provider_id: payrollProviderId, ...paging } = ctx.query;
      return { status: 200, body: await listPayrollRecords(deps.db, { employerId, payrollProviderId }, paging) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/payrolls/:payroll_id',
    operationId: 'get_payroll',
    summary: 'Get a payroll',
    description: 'Operators: get a payroll: employer, provider, frequency, currency and bank-holiday region',
    tags: ['Payrolls'],
    auth: read,
    params: payrollParams,
    responses: {
      200: { description: 'The payroll', schema: payrollRecordEnvelopeSchema },
      404: { description: 'Payroll not found', ...problem },
    },
    handler: async (ctx) => ({ status: 200, body: { payroll: await getPayrollRecord(deps.db, ctx.params.payroll_id) } }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id',
    operationId: 'update_payroll',
    summary: 'Change a payroll',
    description:
      "Operators: change a payroll's name, frequency or bank-holiday region; fields left out keep their value. A new region moves the lock dates of its unlocked pay dates; the change is audited",
    tags: ['Payrolls'],
    auth: write,
    params: payrollParams,
    body: payrollChangeSchema,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The payroll, changed, and how many lock dates its new region moved', schema: payrollChangeResultSchema },
      404: { description: 'Payroll not found', ...problem },
      422: { description: 'Invalid body, or nothing to change', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: await changePayroll(trx, ctx.params.payroll_id, ctx.body, { actor: clientActor(ctx.caller.clientId) }, { recomputeLockDates }),
    }),
  });

  // Bank accounts -----------------------------------------------------------------------------------

  defineRoute(app, {
    method: 'POST',
    url: '/admin/collection-accounts',
    operationId: 'set_collection_account',
    summary: 'Set the collection account of a currency',
    description: 'Operators: set the account employers remit into in a currency; the one it replaces is kept, inactive, and the change audited',
    tags: ['Collection accounts'],
    auth: write,
    body: newCollectionAccountRequest,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The new active account and the one it replaced', schema: collectionAccountEnvelopeSchema },
      422: { description: 'Invalid account details or no reason', ...problem },
    },
    effect: async (ctx, trx) => {
      const { reason, ...account } = ctx.body;
      const { previous, current } = await replaceCollectionAccount(trx, account, { actor: clientActor(ctx.caller.clientId), reason });
      return {
        status: 201,
        body: { collection_account: toCollectionAccountResource(current), replaced: previous ? toCollectionAccountResource(previous) : null },
      };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/collection-accounts',
    operationId: 'list_collection_accounts',
    summary: 'List collection accounts',
    description: 'Operators: every collection account, per currency newest first: the active one and those it replaced',
    tags: ['Collection accounts'],
    auth: read,
    query: collectionAccountsQuery,
    responses: {
      200: { description: 'The collection accounts', schema: collectionAccountListSchema },
      400: { description: 'Invalid query', ...problem },
    },
    handler: async (ctx) => ({
      status: 200,
      body: { collection_accounts: (await collectionAccountHistory(deps.db, { currency: ctx.query.currency })).map(toCollectionAccountResource) },
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/billers/:client_id/beneficiary-accounts',
    operationId: 'set_beneficiary_account',
    summary: "Set a biller's beneficiary account",
    description: "Operators: set where a biller's payouts in a currency are paid; the account it replaces is kept, inactive, and the change audited",
    tags: ['Beneficiary accounts'],
    auth: write,
    params: billerParams,
    body: newBeneficiaryAccountRequest,
    idempotencyKey: 'required',
    responses: {
      201: { description: "The biller's new active account and the one it replaced", schema: beneficiaryAccountChangeSchema },
      404: { description: 'Client not found', ...problem },
      409: { description: 'The client is not a biller', ...problem },
      422: { description: 'Invalid account details or no reason', ...problem },
    },
    effect: async (ctx, trx) => {
      const { reason, ...account } = ctx.body;
      const { previous, current } = await replaceBeneficiaryAccount(trx, ctx.params.client_id, account, { actor: clientActor(ctx.caller.clientId), reason });
      return {
        status: 201,
        body: { beneficiary_account: toBeneficiaryAccountResource(current), replaced: previous ? toBeneficiaryAccountResource(previous) : null },
      };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/billers/:client_id/beneficiary-accounts',
    operationId: 'list_beneficiary_accounts',
    summary: "List a biller's beneficiary accounts",
    description: "Operators: a biller's beneficiary accounts per currency newest first: the active one and every one it replaced",
    tags: ['Beneficiary accounts'],
    auth: read,
    params: billerParams,
    responses: {
      200: { description: "The biller's accounts", schema: beneficiaryAccountListSchema },
      404: { description: 'Biller not found', ...problem },
    },
    handler: async (ctx) => ({
      status: 200,
      body: { beneficiary_accounts: (await beneficiaryAccountHistory(deps.db, ctx.params.client_id)).map(toBeneficiaryAccountResource) },
    }),
  });
};
