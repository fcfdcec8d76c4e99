import { z } from 'zod';
import { instructionFileHeaders } from '../../../cycle/instructions/instruction-service.ts';
import type { RouteModule } from '../app.ts';
import { defineRoute } from '../route.ts';
import { deductionDataResponseSchema } from '../../../cycle/deduction-data/deduction-data-resource.ts';
import { getDeductionData, requireProvidersPayroll } from '../../../cycle/deduction-data/deduction-data-service.ts';
import { findInstructionFile } from '../../../cycle/instructions/instruction-repository.ts';
import { NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import { exampleIds } from '../../../platform/shared/examples.ts';
import { instructionFileColumns, renderInstructionFile } from '../../../cycle/instructions/instruction-file.ts';

/** The reference's example file, made by the code that writes real ones, so the two cannot differ. */
const instructionFileExample = renderInstructionFile(
  {
    employer_name: 'Acme Widgets Ltd',
    employer_external_id: 'EMP-0042',
    payroll_name: 'Acme monthly',
    payroll_external_id: 'PAY-7',
    pay_date: '2026-11-27',
    pay_period: '8-2026',
    currency: 'GBP',
    file_version: 1,
  },
  [
    {
      employee_id: exampleIds.employee,
      payroll_reference: 'W-004211',
      amount: 7500,
      previous_amount: null,
      currency: 'GBP',
      payment_reference: 'SD00000042',
      pay_period: '8-2026',
      action: 'new',
    },
    {
      employee_id: exampleIds.employee,
      payroll_reference: 'W-004212',
      amount: 2550,
      previous_amount: 2000,
      currency: 'GBP',
      payment_reference: 'SD00000043',
      pay_period: '8-2026',
      action: 'amend',
    },
  ],
).toString('utf8');

export const registerDeductionDataRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/deductions/:payroll_id',
    operationId: 'get_salary_deduction_data',
    summary: 'Salary Deduction Data Request',
    description:
      'Payroll providers: the deductions to make on one pay date of a payroll, as locked on its lock date ' +
      '(409 before that). `pay_date` takes a date or a timestamp; `pay_period`, when given, must be the ' +
      "calendar's.",
    tags: ['Salary deduction exchange'],
    // The salary-deduction interface shows the API key and the bearer token as alternatives here.
    auth: { kind: 'either', scope: 'deduction_data:request', roles: ['payroll_provider'] },
    params: z.object({ payroll_id: z.string() }),
    query: z.strictObject({
      pay_date: z.string({ message: 'is required (ISO 8601 date or timestamp)' }).min(1),
      pay_period: z
        .string()
        .regex(/^[0-9]+-[0-9]+$/, 'must be of the form <n>-<n>')
        .optional(),
    }),
    responses: {
      200: { description: 'The deduction data', schema: deductionDataResponseSchema },
      404: { description: 'Unknown payroll or pay date, or a payroll of another provider' },
      409: { description: 'Not final yet: the pay date has not been locked' },
      422: { description: 'Pay period does not match the calendar, or a malformed pay_date' },
    },
    handler: async ({ params, query, caller }) => ({
      status: 200,
      body: await getDeductionData(deps.db, caller, { payrollId: params.payroll_id, payDate: query.pay_date, payPeriod: query.pay_period }, deps.config.SERVICE_TIME_ZONE),
    }),
  });
};

export const registerInstructionFileRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/deductions/:payroll_id/instruction-file',
    operationId: 'get_instruction_file',
    summary: 'Download an instruction file',
    description:
      'Payroll providers: the CSV instruction file of a payroll pay date, as an attachment with a `Digest` ' +
      'header; the newest version unless `version` names an earlier one.',
    tags: ['Salary deduction exchange'],
    auth: { kind: 'either', scope: 'deduction_data:request', roles: ['payroll_provider'] },
    params: z.object({ payroll_id: z.string() }),
    query: z.strictObject({ pay_date: isoDateSchema, version: z.coerce.number().int().positive().optional() }),
    responses: {
      200: {
        description: 'The instruction file',
        schema: z.string().meta({
          description:
            `CSV (UTF-8, RFC 4180, CRLF line ends): one line naming the ${instructionFileColumns.length} columns (${instructionFileColumns.map((c) => `\`${c}\``).join(', ')}), ` +
            'then records that all have every column, `record_type` first. One `header` record says whose file it is (currency, pay period, pay date, ' +
            'employer and payroll names and external ids, file version); one `item` record per employee, in payroll reference order, says what to key ' +
            '(payroll reference, action `new`, `amend`, `stop` or `continue`, amount, previous amount, currency, payment reference, pay period, pay date); ' +
            'one `trailer` record last carries the item count (`line_count`) and their sum (`total_amount`), so a file cut off in transit has no trailer. ' +
            "Each kind fills only its own columns. Money is a decimal string in the currency's decimal places; text from outside that starts with " +
            "`=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`.",
          example: instructionFileExample,
        }),
        contentType: 'text/csv',
      },
      404: { description: 'No such payroll, pay date or file' },
    },
    handler: async ({ params, query, caller, reply }) => {
      await requireProvidersPayroll(deps.db, caller, params.payroll_id);
      const file = await findInstructionFile(deps.db, params.payroll_id, query.pay_date, query.version);
      if (!file) throw new NotFoundError(`Instruction file for ${query.pay_date}`);
      return reply.code(200).headers(instructionFileHeaders(file)).send(file.content);
    },
  });
};
