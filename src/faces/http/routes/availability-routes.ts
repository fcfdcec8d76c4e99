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
 * Availability checks are questions, not changes: each one asked is answered afresh and recorded. An
 * Idempotency-Key lets a client retry one (after a timeout) and get the answer it missed instead of
 * asking again and spending its availability limit; the answer is kept for a day only, since it names
 * the person's employer and salary (the 30-day retention of mutations would keep that a month).
 */
const ANSWER_REPLAY_HOURS = 24;
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
      'pay dates still open. The status follows the same rule as the light check, so the two never disagree: a ' +
      'payroll provider with an API answers for its own employees (its not_found included, even where our directory ' +
      'still holds an employment there), unless our directory holds the number there under another date of birth or ' +
      'family name (not_found); our directory answers where the provider has no API or failed. Naming a currency ' +
      "narrows the question to employments paid in it. Each check is recorded and counted against the caller's " +
      'availability limit. Personal data: the answer must not be cached.',
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
    idempotencyKey: 'optional',
    replayRetentionHours: ANSWER_REPLAY_HOURS,
    ask: async (ctx) => ({
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
      'data in the answer. The person is matched, and the status decided, by the same rule as the full check, so ' +
      'the two never disagree: a payroll provider with an API answers for its own employees (the count is its own), ' +
      'unless our directory holds the number there under another date of birth or family name (not_found); our ' +
      "directory answers where the provider has no API or failed. Each check is recorded and counted against the caller's " +
      'availability limit.',
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
    idempotencyKey: 'optional',
    replayRetentionHours: ANSWER_REPLAY_HOURS,
    ask: async (ctx) => ({
      status: 200,
      headers: PERSONAL_DATA_HEADERS,
      body: await checks.light({ billerClientId: ctx.caller.clientId, sandbox: ctx.caller.sandbox ?? false, person: ctx.body.availability_check, log: ctx.request.log }),
    }),
  });
};
