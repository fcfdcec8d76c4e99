import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import {
  fullAvailabilityRequestSchema,
  fullAvailabilityResponseSchema,
  lightAvailabilityRequestSchema,
  lightAvailabilityResponseSchema,
} from '../../../collections/availability/availability-resource.ts';
import { availabilityChecks } from '../../../collections/availability/availability-service.ts';

const problem = (description: string) => ({ description, schema: problemDetailsSchema, contentType: 'application/problem+json' });

// The answers name a person's employer and salary: no cache may keep them.
const PERSONAL_DATA_HEADERS = { 'cache-control': 'no-store' };

/**
 * Availability checks are questions, not changes: each one is answered afresh (and recorded), so
 * they take no Idempotency-Key. Replaying a stored answer would also keep the person's employer and
 * salary in the idempotency store for its whole retention, and skip the per-biller limit.
 */
export const registerAvailabilityRoutes: RouteModule = (app, deps) => {
  const checks = availabilityChecks({ db: deps.db, redis: deps.redis, config: deps.config, adapterFor: deps.adapterFor, log: app.log });

  defineRoute(app, {
    method: 'POST',
    url: '/deductions/availability/full',
    operationId: 'full_availability_check',
    summary: 'Full availability check',
    description:
      'Looks a person up by national registration number, date of birth and family name (all three must match) ' +
      'and answers whether they can pay by salary deduction, with their employments, employers, payrolls and the ' +
      "pay dates still open. Each check is recorded and counted against the caller's availability limit. " +
      'Personal data: the answer must not be cached.',
    tags: ['Availability'],
    auth: { kind: 'both', scope: 'availability:check', roles: ['biller'] },
    body: fullAvailabilityRequestSchema,
    responses: {
      200: {
        description: 'The availability and what it rests on; not_found unless the national registration number, date of birth and family name all match',
        schema: fullAvailabilityResponseSchema,
      },
      429: problem('Too many availability checks by this biller; see Retry-After'),
      502: problem('A payroll provider failed and no other source knows the person'),
      504: problem('A payroll provider timed out and no other source knows the person'),
    },
    handler: async (ctx) => ({
      status: 200,
      headers: PERSONAL_DATA_HEADERS,
      body: await checks.full({ billerClientId: ctx.caller.clientId, sandbox: ctx.caller.sandbox ?? false, person: ctx.body.availability_check, log: ctx.request.log }),
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/deductions/availability/light',
    operationId: 'light_availability_check',
    summary: 'Light availability check',
    description:
      'Whether one person can pay by salary deduction, and through how many employments, without any personal ' +
      'data in the answer. The person is matched as in the full check; each check is recorded and counted ' +
      "against the caller's availability limit.",
    tags: ['Availability'],
    auth: { kind: 'both', scope: 'availability:check', roles: ['biller'] },
    body: lightAvailabilityRequestSchema,
    responses: {
      200: {
        description: 'The availability and the number of employments; not_found unless the national registration number, date of birth and family name all match',
        schema: lightAvailabilityResponseSchema,
      },
      429: problem('Too many availability checks by this biller; see Retry-After'),
      502: problem('A payroll provider failed and no other source knows the person'),
      504: problem('A payroll provider timed out and no other source knows the person'),
    },
    handler: async (ctx) => ({
      status: 200,
      headers: PERSONAL_DATA_HEADERS,
      body: await checks.light({ billerClientId: ctx.caller.clientId, sandbox: ctx.caller.sandbox ?? false, person: ctx.body.availability_check, log: ctx.request.log }),
    }),
  });
};
