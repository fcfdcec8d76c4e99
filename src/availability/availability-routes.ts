import type { RouteModule } from '../http/app.ts';
import { problemDetailsSchema } from '../http/problem.ts';
import { defineRoute } from '../http/route.ts';
import {
  fullAvailabilityRequestSchema,
  lightAvailabilityRequestSchema,
} from '../payroll-providers/reference-schemas.ts';
import { fullAvailabilityResponseSchema, lightAvailabilityResponseSchema } from './availability-resource.ts';
import { fullAvailabilityCheck, lightAvailabilityCheck } from './availability-service.ts';

const problem = (description: string) => ({ description, schema: problemDetailsSchema, contentType: 'application/problem+json' });

export const registerAvailabilityRoutes: RouteModule = (app, deps) => {
  const availabilityDeps = (log: { warn(details: object, message: string): void }) => ({
    adapterFor: deps.adapterFor,
    timeZone: deps.config.SERVICE_TIME_ZONE,
    log,
  });

  defineRoute(app, {
    method: 'POST',
    url: '/deductions/availability/full',
    operationId: 'full_availability_check',
    summary: 'Full availability check: employments, employer, payrolls and open pay dates of one person',
    tags: ['Availability'],
    auth: { kind: 'both', scope: 'availability:check', roles: ['biller'] },
    idempotencyKey: 'optional',
    body: fullAvailabilityRequestSchema,
    responses: {
      200: { description: 'The availability and what it rests on', schema: fullAvailabilityResponseSchema },
      422: problem('Invalid fields, or too little to identify the person'),
      502: problem('A payroll provider failed and no other source knows the person'),
      504: problem('A payroll provider timed out and no other source knows the person'),
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: await fullAvailabilityCheck(trx, ctx.body.availability_check, availabilityDeps(ctx.request.log)),
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/deductions/availability/light',
    operationId: 'light_availability_check',
    summary: 'Light availability check: whether one person can use salary deduction, without personal data',
    tags: ['Availability'],
    auth: { kind: 'both', scope: 'availability:check', roles: ['biller'] },
    idempotencyKey: 'optional',
    body: lightAvailabilityRequestSchema,
    responses: {
      200: { description: 'The availability and the number of employments', schema: lightAvailabilityResponseSchema },
      422: problem('Invalid fields, or too little to identify the person'),
      502: problem('A payroll provider failed and no other source knows the person'),
      504: problem('A payroll provider timed out and no other source knows the person'),
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: await lightAvailabilityCheck(trx, ctx.body.availability_check, availabilityDeps(ctx.request.log)),
    }),
  });
};
