import { serviceToday } from '../../../directory/calendars/lock-date.ts';
import { explainThreeWay, openThreeWayCsvStream, threeWayFileName, threeWayReport, threeWayTotals } from '../../../settlement/reports/three-way-report.ts';
import { MalformedRequestError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import { findLatestReconciliationPayDate } from '../console-money-repository.ts';
import { formatMoney } from '../../../platform/money/money-text.ts';
import { dataTable, statusBadge } from '../console-layout.ts';
import type { ConsolePageModule } from '../console-plugin.ts';
import { html } from '../html.ts';
import { describeReadSource, readSource } from '../../../platform/db/read-replica.ts';

function payDateFrom(value: unknown, field: string): string {
  const parsed = isoDateSchema.safeParse(value);
  if (!parsed.success) throw new MalformedRequestError('invalid-pay-date', `${field} must be a date as YYYY-MM-DD`);
  return parsed.data;
}

/**
 * The three-way reconciliation of a pay date: per payroll, requested against deducted against received
 * against paid out, with why they differ, the totals, and the same CSV the API and the CLI give operators.
 */
export const registerThreeWayPage: ConsolePageModule = (app, context) => {
  const { config } = context.deps;

  // Read only, and no action lands here: off the replica within its lag bound (readSource).
  app.get<{ Querystring: { pay_date?: string } }>('/reconciliation/three-way', async (request, reply) => {
    const source = await readSource(context.deps);
    const { db } = source;
    const asked = request.query.pay_date;
    const payDate =
      asked !== undefined && asked !== ''
        ? payDateFrom(asked, 'pay_date')
        : ((await findLatestReconciliationPayDate(db)) ?? serviceToday(new Date(), config.SERVICE_TIME_ZONE));
    const rows = await threeWayReport(db, payDate);
    const totals = threeWayTotals(rows);
    const money = (minor: number | bigint | null, currency: string) => (minor === null ? '—' : formatMoney(minor, currency));
    return context.page(request, reply, {
      title: `Three-way reconciliation for ${payDate}`,
      section: 'reconciliation',
      dataAsOf: describeReadSource(source),
      body: html`<form method="get" action="/console/reconciliation/three-way" class="filters">
<label for="pay_date">Pay date</label>
<input type="date" id="pay_date" name="pay_date" value="${payDate}" required>
<button type="submit">Show</button>
</form>
<p><a href="/console/reconciliation?pay_date=${payDate}">Reconciliation of ${payDate}</a> ·
Download: <a href="/console/reconciliation/${payDate}/three-way.csv" download>three-way CSV (one row per payroll)</a></p>
${dataTable(
  `Requested, deducted, received and paid out per payroll for pay date ${payDate}`,
  ['Payroll', 'Employer', 'Reference', 'Requested', 'Deducted', 'Received', 'Remittance', 'Paid out', 'Held back', 'Owed back', 'Explanation'],
  [
    ...rows.map((row) => [
      html`<a href="/console/payrolls/${row.payroll_id}/pay-dates/${payDate}">${row.payroll}</a>`,
      row.employer,
      row.payment_reference,
      money(row.requested, row.currency),
      money(row.deducted, row.currency),
      money(row.received, row.currency),
      statusBadge(row.remittance_status),
      money(row.paid_out, row.currency),
      money(row.held_back, row.currency),
      money(row.shortfall, row.currency),
      explainThreeWay(row),
    ]),
    // One totals row per currency: amounts of different currencies are never added together.
    ...totals.map((total) => [
      html`<strong>Total ${total.currency}</strong>`,
      '',
      '',
      money(total.requested, total.currency),
      money(total.deducted, total.currency),
      money(total.received, total.currency),
      '',
      money(total.paid_out, total.currency),
      money(total.held_back, total.currency),
      money(total.shortfall, total.currency),
      '',
    ]),
  ],
  'no payroll has a remittance for this pay date.',
)}`,
    });
  });

  app.get<{ Params: { payDate: string } }>('/reconciliation/:payDate/three-way.csv', async (request, reply) => {
    const payDate = payDateFrom(request.params.payDate, 'The pay date');
    const { db } = await readSource(context.deps);
    const csv = await openThreeWayCsvStream(db, payDate);
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${threeWayFileName(payDate)}"`)
      .send(csv);
  });
};
