import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { defineRoute } from '../route.ts';
import { isoDateSchema, uuidSchema } from '../../shared/schemas.ts';
import { openReconciliationCsvStream, reconciliationColumns, reconciliationFileName } from '../../reports/reconciliation-report.ts';
import { exampleIds } from '../../shared/examples.ts';

const reconciliationQuery = z.strictObject({ pay_date: isoDateSchema, payroll_id: uuidSchema.optional() });

export const registerReportRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/reports/reconciliation',
    operationId: 'get_reconciliation_report',
    summary: 'Download a reconciliation report',
    description:
      'The reconciliation CSV of a pay date, optionally for one payroll, streamed as an attachment: one row per ' +
      'payment request per collection attempt, money as decimal strings. A biller gets its own payment requests ' +
      "only; an operator gets every biller's.",
    tags: ['Reports'],
    auth: { kind: 'both', scope: 'reports:read', roles: ['biller', 'operator'] },
    query: reconciliationQuery,
    responses: {
      200: {
        description: 'The reconciliation CSV (attachment)',
        schema: z.string().meta({
          description: 'CSV with a header row; money as decimal strings in major units.',
          example:
            `${reconciliationColumns.join(',')}\n` +
            `${exampleIds.payroll},Acme Manufacturing Ltd,2026-11-27,8-2026,${exampleIds.employee},${exampleIds.mandate},` +
            `${exampleIds.payment},Northwind Lending,GBP,25.00,25.00,25.00,0.00,,collected,1,${exampleIds.payout}\n`,
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
      const csv = await openReconciliationCsvStream(deps.db, filter);
      return reply
        .code(200)
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${reconciliationFileName(query.pay_date)}"`)
        .send(csv);
    },
  });
};
