import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { employeePushRecordSchema } from '../../../directory/payroll-providers/reference-schemas.ts';
import { employeePushResponseSchema } from '../../../cycle/deduction-records/push-resource.ts';
import { acceptEmployeePush } from '../../../cycle/deduction-records/push-service.ts';
import { reportedLimitsOf } from '../../../cycle/deduction-records/reported-limits.ts';

// A malformed payroll id names nothing: the service answers 404, not a validation error.
const payrollParams = z.strictObject({ payroll_id: z.string() });
const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

export const registerEmployeePushRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/deductions/payroll/:payroll_id',
    operationId: 'push_employee_deduction',
    summary: 'Salary Deduction Employee Data Push',
    description:
      'Payroll providers: what payroll deducted from one employee on one pay date, as a numbered version. A ' +
      'higher version replaces the lower; the same version with the same content again is accepted and changes ' +
      'nothing; a lower version, or the current one with other content, is refused (409).',
    tags: ['Salary deduction exchange'],
    auth: { kind: 'both', scope: 'deduction_data:submit', roles: ['payroll_provider'] },
    idempotencyKey: 'optional',
    params: payrollParams,
    body: employeePushRecordSchema,
    responses: {
      200: { description: 'Accepted: stored as a new version, or the same version and content again', schema: employeePushResponseSchema },
      404: { description: 'Unknown payroll, or another provider’s', ...problem },
      409: {
        description: 'A lower version, the current version with other content, or a re-send of a version an operator voided; `current_version` names it',
        ...problem,
      },
      422: {
        description:
          'Pay period not in the calendar, employee not on the payroll, wrong currency, too many decimals, or an amount over ' +
          'MAX_REPORTED_DEDUCTION_MINOR or one taking the pay date over MAX_REPORTED_PAY_DATE_TOTAL_MINOR (type reported-amount-over-limit)',
        ...problem,
      },
    },
    effect: async (ctx, trx) => {
      const outcome = await acceptEmployeePush(trx, ctx.caller, ctx.params.payroll_id, ctx.body, reportedLimitsOf(deps.config));
      const payDate = outcome.storedForPayDate;
      return {
        status: 200,
        body: outcome.response,
        ...(payDate === null ? {} : { afterCommit: () => deps.reconciliation.request(outcome.response.payroll_id, payDate) }),
      };
    },
  });
};
