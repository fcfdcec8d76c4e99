import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { defineRoute } from '../route.ts';
import { isoDateSchema, uuidSchema } from '../../../platform/shared/schemas.ts';
import { openReconciliationCsvStream, reconciliationColumns, reconciliationFileName } from '../../../settlement/reports/reconciliation-report.ts';
import { exampleIds } from '../../../platform/shared/examples.ts';
import { readSource } from '../../../platform/db/read-replica.ts';
import { openThreeWayCsvStream, threeWayColumns, threeWayFileName, threeWayReport, toThreeWayRecord } from '../../../settlement/reports/three-way-report.ts';

const reconciliationQuery = z.strictObject({ pay_date: isoDateSchema, payroll_id: uuidSchema.optional() });

const threeWayQuery = z.strictObject({
  pay_date: isoDateSchema,
  format: z.enum(['csv', 'json']).optional().meta({ description: 'csv (the default) or json; `Accept: application/json` asks for json too.' }),
});

const decimal = (description: string) => z.string().meta({ description: `${description} (decimal string in major units of \`currency\`).` });

const threeWayRowFields = z.object({
  payroll_id: z.uuid(),
  employer: z.string(),
  payroll: z.string(),
  pay_date: z.iso.date(),
  currency: z.string(),
  payment_reference: z.string().meta({ description: 'The reference the employer was asked to quote when remitting.' }),
  requested: decimal('What the deduction data asked payroll to deduct'),
  deducted: decimal('What payroll reported it deducted; empty until it has reported'),
  expected: decimal('What the employer owes: deducted once reported, requested before'),
  received: decimal('Matched to the remittance from bank statements'),
  remittance_status: z.enum(['expected', 'received', 'short', 'over', 'late', 'shortfall']),
  due_date: z.iso.date().meta({ description: 'After this day a remittance with nothing received is late.' }),
  funded: decimal('Collections made payable to billers (by cash received, or trust in the employer)'),
  paid_out: decimal('Collections in payouts that have not failed'),
  held_back: decimal('Collections waiting for the remittance before they can be paid out'),
  explanation: z.string().meta({
    description:
      'Why the figures differ, in one sentence that accounts for every penny between requested, deducted, expected, received, funded and paid out (cash received that does not yet fund a whole payment request included); "All paid out." when they agree.',
  }),
  shortfall: decimal('Paid out beyond what was received, after the bank reversed a credit already paid out: owed back'),
});

const threeWayExample: z.input<typeof threeWayRowFields> = {
  payroll_id: exampleIds.payroll,
  employer: 'Acme Manufacturing Ltd',
  payroll: 'Monthly',
  pay_date: '2026-11-27',
  currency: 'GBP',
  payment_reference: 'SDR261127P00000012',
  requested: '248.00',
  deducted: '208.00',
  expected: '208.00',
  received: '160.00',
  remittance_status: 'short',
  due_date: '2026-12-02',
  funded: '125.50',
  paid_out: '125.50',
  held_back: '82.50',
  explanation:
    'Payroll deducted £40.00 less than requested; employer remitted £48.00 less than deducted (short); £34.50 received, not enough to fund the next whole payment request (£82.50); £82.50 held back until £48.00 more arrives.',
  shortfall: '0.00',
};

const threeWayRowSchema = threeWayRowFields.meta({
  id: 'ThreeWayRow',
  description: "One payroll pay date's requested, deducted, received and paid out figures.",
  example: threeWayExample,
});

/** Whether the caller asked for JSON: `format` wins, else an Accept header naming application/json. */
function wantsJson(format: 'csv' | 'json' | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'json';
  return (accept ?? '').split(',').some((range) => range.split(';')[0]!.trim().toLowerCase() === 'application/json');
}

export const registerReportRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/reports/reconciliation',
    operationId: 'get_reconciliation_report',
    summary: 'Download a reconciliation report',
    description:
      'The reconciliation CSV of a pay date, optionally for one payroll, streamed as an attachment: one row per ' +
      'payment request per collection attempt, money as decimal strings, each row naming its employer, biller, ' +
      "payroll and employee (the name as the payroll spells it) with the employee's payroll reference (works number). " +
      "A biller gets its own payment requests only; an operator gets every biller's.",
    tags: ['Reports'],
    auth: { kind: 'both', scope: 'reports:read', roles: ['biller', 'operator'] },
    query: reconciliationQuery,
    responses: {
      200: {
        description: 'The reconciliation CSV (attachment)',
        schema: z.string().meta({
          description:
            'CSV with a header row; money as decimal strings in major units. Columns are only ever added at the end ' +
            '(`payroll`, `employee_name` and `payroll_reference` came after `payout_id`).',
          example:
            `${reconciliationColumns.join(',')}\n` +
            `${exampleIds.payroll},Acme Manufacturing Ltd,2026-11-27,8-2026,${exampleIds.employee},${exampleIds.mandate},` +
            `${exampleIds.payment},Northwind Lending,GBP,25.00,25.00,25.00,0.00,,collected,1,${exampleIds.payout},Monthly staff,Siobhán O'Donnell,WN1042\n`,
        }),
        contentType: 'text/csv',
      },
    },
    handler: async ({ query, caller, reply }) => {
      const filter = {
        payDate: query.pay_date,
        payrollId: query.payroll_id,
        // Operators reconcile the whole service; everyone else sees only their own payment requests.
        billerClientId: caller.role === 'operator' ? undefined : caller.clientId,
      };
      // A report tolerates the read replica's bounded lag (docs/operators.md, *Reports off a read replica*).
      const { db } = await readSource(deps);
      const csv = await openReconciliationCsvStream(db, filter);
      return reply
        .code(200)
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${reconciliationFileName(query.pay_date)}"`)
        .send(csv);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/reports/three-way',
    operationId: 'get_three_way_report',
    summary: 'Download the three-way reconciliation of a pay date',
    description:
      'Per payroll paying on the date: what was requested, what payroll deducted, what the employer remitted ' +
      'and what was paid out to billers, with a sentence explaining each difference. A CSV attachment by ' +
      'default; JSON rows (the same values) with `format=json` or `Accept: application/json`. Operators only; ' +
      'sandbox payrolls are left out.',
    tags: ['Reports'],
    auth: { kind: 'both', scope: 'reports:read', roles: ['operator'] },
    query: threeWayQuery,
    responses: {
      200: {
        description: 'The three-way reconciliation CSV (attachment), or its rows as JSON',
        schema: z.string().meta({
          description: 'CSV with a header row; money as decimal strings in major units, `deducted` empty until payroll has reported.',
          example: `${threeWayColumns.join(',')}\n${threeWayColumns.map((column) => (column === 'explanation' ? `"${threeWayExample.explanation}"` : threeWayExample[column])).join(',')}\n`,
        }),
        contentType: 'text/csv',
        alternatives: [
          {
            contentType: 'application/json',
            schema: z
              .object({ pay_date: z.iso.date(), rows: z.array(threeWayRowSchema) })
              .meta({ id: 'ThreeWayReport', description: 'The rows of the CSV, in its order.', example: { pay_date: '2026-11-27', rows: [threeWayExample] } }),
          },
        ],
      },
    },
    handler: async ({ query, request, reply }) => {
      const { db } = await readSource(deps);
      if (wantsJson(query.format, request.headers.accept)) {
        const rows = await threeWayReport(db, query.pay_date);
        return { status: 200, body: { pay_date: query.pay_date, rows: rows.map(toThreeWayRecord) } };
      }
      const csv = await openThreeWayCsvStream(db, query.pay_date);
      return reply
        .code(200)
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${threeWayFileName(query.pay_date)}"`)
        .send(csv);
    },
  });
};
