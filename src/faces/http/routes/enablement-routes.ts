import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { enablementRequestSchema, enablementResponseSchema } from '../../../directory/payroll-providers/reference-schemas.ts';
import { enableMandate } from '../../../collections/enablement/enablement-service.ts';

const problem = (description: string) => ({ description, schema: problemDetailsSchema, contentType: 'application/problem+json' });

export const registerEnablementRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/deductions/enablement',
    operationId: 'salary_deduction_enablement',
    summary: 'Salary deduction enablement',
    description:
      'Asks the payroll provider to start deductions for a mandate that is `pending_enablement`. The answer says ' +
      'whether payroll enabled it, rejected it, or has not decided yet.',
    tags: ['Mandates'],
    auth: { kind: 'both', scope: 'mandates:write', roles: ['biller'] },
    idempotencyKey: 'optional',
    body: enablementRequestSchema,
    responses: {
      200: { description: 'Enabled, rejected or still pending', schema: enablementResponseSchema },
      404: problem('No such mandate of the caller'),
      409: problem('The mandate is not pending enablement'),
      422: problem("The employee or payroll is not the mandate's"),
      502: problem('The payroll provider failed'),
      504: problem('The payroll provider timed out'),
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: await enableMandate(trx, ctx.caller, ctx.body.enablement, { adapterFor: deps.adapterFor }),
    }),
  });
};
