import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { pagingQuerySchema } from '../../shared/paging.ts';
import { currencySchema, isoDateSchema, isoInstant, metadataSchema, minorUnitsSchema, uuidSchema } from '../../shared/schemas.ts';
import {
  AUTHORISATION_SOURCE_TYPES,
  mandateDeleteResponseSchema,
  mandateEnvelopeSchema,
  mandatesPageSchema,
  mandateStatusSchema,
} from '../../mandates/mandate-resource.ts';
import { createMandate, DEFAULT_MANDATE_CURRENCY, getMandate, listMandateResources, revokeMandate } from '../../mandates/mandate-service.ts';

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
  .meta({ id: 'ConsumerData' });

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
  .meta({ id: 'MandateLimitations' });

const authorisationSourceSchema = z
  .strictObject({
    type: z.enum(AUTHORISATION_SOURCE_TYPES),
    reference: z.string().min(1).max(200).nullish(),
    authorised_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }),
    ip_address: z.union([z.ipv4(), z.ipv6()], { message: 'must be an IPv4 or IPv6 address' }).nullish(),
  })
  .meta({ id: 'AuthorisationSource' });

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
  .meta({ id: 'MandateRecordRequest' });

const createMandateBody = z.strictObject({ mandate_record: mandateRecordSchema }).meta({ id: 'MandateCreation' });

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
    summary: 'Create a mandate for an employee on a payroll; it waits for enablement (pending_enablement)',
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:write', roles: ['biller'] },
    idempotencyKey: 'required',
    body: createMandateBody,
    responses: {
      201: { description: 'Mandate created', schema: mandateEnvelopeSchema },
      400: { description: 'Idempotency-Key missing or invalid', ...problem },
      422: { description: 'Invalid body, employee not on the payroll or a leaver, or currency mismatch', ...problem },
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
      );
      return { status: 201, headers: { location: `/mandates/${mandate.id}` }, body: { mandate } };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/mandates/:mandate_id',
    operationId: 'revoke_mandate',
    summary: 'Revoke a mandate; its pending payment requests are cancelled. Repeating it answers the same and changes nothing',
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:write', roles: ['biller'] },
    params: mandateParams,
    responses: {
      200: { description: 'Mandate revoked', schema: mandateDeleteResponseSchema },
      404: { description: 'Mandate not found', ...problem },
      409: { description: 'The mandate already ended (cancelled, expired or failed)', ...problem },
    },
    handler: async (ctx) => {
      const revocation = await deps.db
        .transaction()
        .execute((trx) => revokeMandate(trx, ctx.caller.clientId, ctx.params.mandate_id));
      return { status: 200, body: revocation };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/mandates/:mandate_id',
    operationId: 'get_mandate',
    summary: 'Get a mandate',
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
    summary: 'List mandates, newest first, optionally filtered by status, employee or payroll',
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:read', roles: ['biller'] },
    query: listMandatesQuery,
    responses: {
      200: { description: 'A page of mandates', schema: mandatesPageSchema },
      400: { description: 'Invalid query or cursor', ...problem },
    },
    handler: async (ctx) => {
      const { status, employee_id, payroll_id, ...paging } = ctx.query;
      return {
        status: 200,
        body: await listMandateResources(
          deps.db,
          ctx.caller.clientId,
          { status, employeeId: employee_id, payrollId: payroll_id },
          paging,
        ),
      };
    },
  });
};
