import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { exampleIds } from '../../../platform/shared/examples.ts';
import { pagingQuerySchema } from '../../../platform/shared/paging.ts';

const consumerExample = {
  given_name: 'Alex',
  family_name: 'Taylor',
  email_address: 'alex.taylor@example.com',
  date_of_birth: '1988-04-12',
  national_registration_number: 'QQ123456C',
  external_reference: 'CUST-000042',
};
const limitationsExample = { max_amount_per_pay_date: 10000, max_total_amount: 120000, valid_from: '2026-11-01' };
const authorisationSourceExample = { type: 'online', reference: 'consent-8f3a', authorised_at: '2026-11-02T09:14:03Z', ip_address: '203.0.113.24' };
import { currencySchema, isoDateSchema, isoInstant, metadataSchema, minorUnitsSchema, uuidSchema } from '../../../platform/shared/schemas.ts';
import {
  AUTHORISATION_SOURCE_TYPES,
  mandateDeleteResponseSchema,
  mandateEnvelopeSchema,
  mandatesPageSchema,
  mandateStatusSchema,
} from '../../../collections/mandates/mandate-resource.ts';
import { createMandate, DEFAULT_MANDATE_CURRENCY, getMandate, listMandateResources, revokeMandate } from '../../../collections/mandates/mandate-service.ts';
import { consumerIdentityViolation } from '../../../collections/mandates/consumer-identity.ts';

const consumerDataSchema = z
  .strictObject({
    given_name: z.string().min(1).max(200),
    family_name: z.string().min(1).max(200),
    email_address: z.email().max(254).nullish(),
    phone_number: z.string().min(3).max(32).nullish(),
    date_of_birth: isoDateSchema.nullish(),
    postal_code: z.string().min(2).max(16).nullish(),
    national_registration_number: z.string().min(1).max(32).nullish(),
    external_reference: z.string().min(1).max(200).nullish(),
  })
  .meta({
    id: 'ConsumerData',
    description:
      'The employee as the biller knows them; kept with the mandate and shown back on it. `date_of_birth` and `family_name` ' +
      "(and `national_registration_number`, when given) must be the employee's, matched as an availability check matches them.",
    example: consumerExample,
  });

const mandateLimitationsSchema = z
  .strictObject({
    max_amount_per_pay_date: minorUnitsSchema.nullish(),
    max_total_amount: minorUnitsSchema.nullish(),
    valid_from: isoDateSchema.nullish(),
    valid_to: isoDateSchema.nullish(),
  })
  .refine((limits) => !limits.valid_from || !limits.valid_to || limits.valid_from <= limits.valid_to, {
    message: 'must not be before valid_from',
    path: ['valid_to'],
  })
  .meta({
    id: 'MandateLimitations',
    description: 'Optional caps in integer minor units (per pay date, in total) and a validity window; payment requests beyond them are refused.',
    example: limitationsExample,
  });

const authorisationSourceSchema = z
  .strictObject({
    type: z.enum(AUTHORISATION_SOURCE_TYPES),
    reference: z.string().min(1).max(200).nullish(),
    authorised_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }),
    ip_address: z.union([z.ipv4(), z.ipv6()], { message: 'must be an IPv4 or IPv6 address' }).nullish(),
  })
  .meta({
    id: 'AuthorisationSource',
    description: 'How and when the employee authorised the deductions, as evidence for the mandate.',
    example: authorisationSourceExample,
  });

const mandateRecordSchema = z
  .strictObject({
    employee_id: uuidSchema,
    payroll_id: uuidSchema,
    consumer: consumerDataSchema,
    currency: currencySchema.nullish(),
    limitations: mandateLimitationsSchema.nullish(),
    authorisation_source: authorisationSourceSchema,
    reference: z.string().min(1).max(140).nullish(),
    metadata: metadataSchema.nullish(),
  })
  .meta({
    id: 'MandateRecordRequest',
    description:
      'The mandate to record: the employee and payroll (as an availability check found them), the consumer, optional limits, ' +
      "and how the authorisation was given. `currency` defaults to GBP and must be the payroll's.",
    example: {
      employee_id: exampleIds.employee,
      payroll_id: exampleIds.payroll,
      consumer: consumerExample,
      currency: 'GBP',
      limitations: limitationsExample,
      authorisation_source: authorisationSourceExample,
      reference: 'LOAN-2026-0042',
      metadata: { loan_id: 'L-88231' },
    },
  });

const createMandateBody = z.strictObject({ mandate_record: mandateRecordSchema }).meta({
  id: 'MandateCreation',
  description: 'The mandate to create.',
  example: {
    mandate_record: {
      employee_id: exampleIds.employee,
      payroll_id: exampleIds.payroll,
      consumer: { given_name: 'Alex', family_name: 'Taylor' },
      authorisation_source: authorisationSourceExample,
    },
  },
});

// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const mandateParams = z.strictObject({ mandate_id: z.string() });

const listMandatesQuery = pagingQuerySchema.extend({
  status: mandateStatusSchema.optional(),
  employee_id: uuidSchema.optional(),
  payroll_id: uuidSchema.optional(),
});

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

export const registerMandateRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/mandates',
    operationId: 'create_mandate',
    summary: 'Create a mandate',
    description:
      "Records the employee's authority for the caller to deduct from their pay on one payroll, with the " +
      "consumer's details, optional limits (per pay date, in total, a validity window) and how the authorisation " +
      'was given. The mandate starts as `pending_enablement`: call `POST /deductions/enablement` to have payroll ' +
      'accept it.',
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:write', roles: ['biller'] },
    idempotencyKey: 'required',
    body: createMandateBody,
    responses: {
      201: { description: 'Mandate created', schema: mandateEnvelopeSchema },
      422: {
        description: 'Employee not on the payroll or a leaver, currency mismatch, or a consumer who is not the employee (consumer-not-employee, consumer-identity-incomplete)',
        ...problem,
      },
    },
    effect: async (ctx, trx) => {
      const record = ctx.body.mandate_record;
      const source = record.authorisation_source;
      const mandate = await createMandate(
        trx,
        {
          billerClientId: ctx.caller.clientId,
          sandbox: ctx.caller.sandbox ?? false,
          employeeId: record.employee_id,
          payrollId: record.payroll_id,
          consumer: {
            given_name: record.consumer.given_name,
            family_name: record.consumer.family_name,
            email_address: record.consumer.email_address ?? null,
            phone_number: record.consumer.phone_number ?? null,
            date_of_birth: record.consumer.date_of_birth ?? null,
            postal_code: record.consumer.postal_code ?? null,
            national_registration_number: record.consumer.national_registration_number ?? null,
            external_reference: record.consumer.external_reference ?? null,
          },
          currency: record.currency ?? DEFAULT_MANDATE_CURRENCY,
          limitations: {
            maxAmountPerPayDate: record.limitations?.max_amount_per_pay_date ?? null,
            maxTotalAmount: record.limitations?.max_total_amount ?? null,
            validFrom: record.limitations?.valid_from ?? null,
            validTo: record.limitations?.valid_to ?? null,
          },
          authorisationSource: {
            type: source.type,
            reference: source.reference ?? null,
            authorised_at: isoInstant(source.authorised_at),
            ip_address: source.ip_address ?? null,
          },
          reference: record.reference ?? null,
          metadata: record.metadata ?? null,
        },
        { now: new Date(), timeZone: deps.config.SERVICE_TIME_ZONE },
        { consumerIdentity: consumerIdentityViolation },
      );
      return { status: 201, headers: { location: `/mandates/${mandate.id}` }, body: { mandate } };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/mandates/:mandate_id',
    operationId: 'revoke_mandate',
    summary: 'Revoke a mandate',
    description:
      'Ends a mandate: its payment requests not yet instructed to payroll are cancelled. Revoking a revoked ' +
      'mandate answers the same and changes nothing; one that ended otherwise (cancelled, expired, failed) ' +
      'answers 409.',
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:write', roles: ['biller'] },
    params: mandateParams,
    responses: {
      200: { description: 'Mandate revoked', schema: mandateDeleteResponseSchema },
      404: { description: 'Mandate not found', ...problem },
      409: { description: 'The mandate already ended (cancelled, expired or failed)', ...problem },
    },
    handler: async (ctx) => {
      const revocation = await deps.db.transaction().execute((trx) => revokeMandate(trx, ctx.caller.clientId, ctx.params.mandate_id));
      return { status: 200, body: revocation };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/mandates/:mandate_id',
    operationId: 'get_mandate',
    summary: 'Get a mandate',
    description: 'A mandate of the caller, with its status, limits and consumer details.',
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:read', roles: ['biller'] },
    params: mandateParams,
    responses: {
      200: { description: 'The mandate', schema: mandateEnvelopeSchema },
      404: { description: 'Mandate not found', ...problem },
    },
    handler: async (ctx) => ({
      status: 200,
      body: { mandate: await getMandate(deps.db, ctx.caller.clientId, ctx.params.mandate_id) },
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/mandates',
    operationId: 'list_mandates',
    summary: 'List mandates',
    description: "The caller's mandates, newest first, one page at a time; filter by status, employee or payroll.",
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:read', roles: ['biller'] },
    query: listMandatesQuery,
    responses: {
      200: { description: 'A page of mandates', schema: mandatesPageSchema },
    },
    handler: async (ctx) => {
      const { status, employee_id, payroll_id, ...paging } = ctx.query;
      return {
        status: 200,
        body: await listMandateResources(deps.db, ctx.caller.clientId, { status, employeeId: employee_id, payrollId: payroll_id }, paging),
      };
    },
  });
};
