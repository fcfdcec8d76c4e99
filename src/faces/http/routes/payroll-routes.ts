import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { employeeEnvelopeSchema, employeeRecordRequestSchema } from '../../../directory/payrolls/employee-resource.ts';
import { payrollScheduleResponseSchema } from '../../../directory/payrolls/payroll-resource.ts';
import { getPayrollSchedule, putEmployee } from '../../../collections/employee-changes/payroll-service.ts';

// Ids stay plain strings here: a malformed id names nothing, so the service answers 404, not 400.
const payrollParams = z.strictObject({ payroll_id: z.string() });
const employeeParams = z.strictObject({ payroll_id: z.string(), employee_id: z.string() });

export const registerPayrollRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/payrolls/:payroll_id',
    operationId: 'get_payroll_information',
    summary: 'Get payroll information',
    description:
      'A payroll and its calendar: every pay date with its pay period and lock date. A live biller reads any live ' +
      "payroll, a sandbox biller its own sandbox's payrolls only; a payroll provider only its own.",
    tags: ['Payrolls'],
    // Each caller reads the payrolls it reaches (directoryReachOf, applied in the service).
    auth: { kind: 'both', scope: 'availability:check' },
    params: payrollParams,
    responses: {
      200: { description: 'The payroll and every pay date', schema: payrollScheduleResponseSchema },
      404: {
        description: "Unknown payroll, or one the caller does not reach: another provider's, another sandbox's, or live and sandbox crossed",
        schema: problemDetailsSchema,
        contentType: 'application/problem+json',
      },
    },
    handler: async (ctx) => ({ status: 200, body: await getPayrollSchedule(deps.db, ctx.caller, ctx.params.payroll_id) }),
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/payrolls/:payroll_id/employees/:employee_id',
    operationId: 'put_payroll_employee',
    summary: 'Create or replace an employee',
    description:
      'Payroll providers: creates an employee on one of their payrolls (201), or replaces what is known of them ' +
      '(200), identified by the id in the path. A national registration number or payroll reference that belongs ' +
      'to another employee is refused (409).',
    tags: ['Payrolls'],
    auth: { kind: 'both', scope: 'payroll_data:write', roles: ['payroll_provider'] },
    params: employeeParams,
    body: employeeRecordRequestSchema,
    responses: {
      200: { description: 'The employee was updated', schema: employeeEnvelopeSchema },
      201: { description: 'The employee was added to the payroll', schema: employeeEnvelopeSchema },
      404: { description: "Unknown payroll, or another provider's", schema: problemDetailsSchema, contentType: 'application/problem+json' },
      409: {
        description: 'The national registration number or payroll reference belongs to another employee',
        schema: problemDetailsSchema,
        contentType: 'application/problem+json',
      },
      422: { description: "A currency other than the payroll's", schema: problemDetailsSchema, contentType: 'application/problem+json' },
    },
    handler: async (ctx) => {
      const result = await deps.db
        .transaction()
        .execute((trx) => putEmployee(trx, ctx.caller, { payrollId: ctx.params.payroll_id, employeeId: ctx.params.employee_id }, ctx.body.employee));
      return { status: result.created ? 201 : 200, body: { employee: result.employee } };
    },
  });
};
