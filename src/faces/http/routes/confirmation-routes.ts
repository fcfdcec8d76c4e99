import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { confirmationResponseSchema, confirmationSubmissionSchema } from '../../../cycle/deduction-records/confirmation-resource.ts';
import { submitConfirmation } from '../../../cycle/deduction-records/confirmation-service.ts';
import { reportedLimitsOf } from '../../../cycle/deduction-records/reported-limits.ts';

const OPERATION_ID = 'submit_deduction_confirmation';
/**
 * 100,000 lines of about 90 bytes each are ~9 MB of JSON, over the general body limit; this one
 * route takes whole pay dates, so it gets room for them.
 */
export const CONFIRMATION_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

const payrollParams = z.strictObject({ payroll_id: z.string() });
const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

export const registerConfirmationRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/deductions/:payroll_id/confirmation',
    operationId: OPERATION_ID,
    bodyLimit: CONFIRMATION_BODY_LIMIT_BYTES,
    summary: 'Salary Deduction Confirmation Submission',
    description:
      'Payroll providers: what payroll deducted on a whole pay date, one line per employee, against the deduction ' +
      'data it answers. Stores one new record version per employee; the total must be the sum of the lines. ' +
      'Deduction data superseded by a re-run is refused (409), naming the current one.',
    tags: ['Salary deduction exchange'],
    auth: { kind: 'both', scope: 'deduction_data:submit', roles: ['payroll_provider'] },
    idempotencyKey: 'optional',
    params: payrollParams,
    body: confirmationSubmissionSchema,
    responses: {
      201: { description: 'Stored: one new record version per employee', schema: confirmationResponseSchema },
      404: { description: 'Unknown payroll or deduction data, or another provider’s', ...problem },
      409: { description: 'The deduction data was superseded by a re-run; `current_deduction_data_id` names the current one', ...problem },
      422: {
        description:
          'Pay period or currency other than the deduction data’s, duplicate or unknown employees, a total that is not the sum of the lines, ' +
          'a line over MAX_REPORTED_DEDUCTION_MINOR or a pay date taken over MAX_REPORTED_PAY_DATE_TOTAL_MINOR (type reported-amount-over-limit)',
        ...problem,
      },
    },
    effect: async (ctx, trx) => {
      const body = await submitConfirmation(trx, ctx.caller, ctx.params.payroll_id, ctx.body.confirmation, reportedLimitsOf(deps.config));
      const { payroll_id: payrollId, pay_date: payDate } = body.confirmation;
      return { status: 201, body, afterCommit: () => deps.reconciliation.request(payrollId, payDate) };
    },
  });
};
