import { PassThrough } from 'node:stream';
import { serviceToday } from '../../../directory/calendars/lock-date.ts';
import {
  openReconciliationCsvStream,
  reconciliationFileName,
  reconciliationSummary,
  reconciliationSummaryFileName,
  unaccountedAmount,
  writeReconciliationSummaryCsv,
} from '../../../settlement/reports/reconciliation-report.ts';
import { MalformedRequestError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import { findLatestReconciliationPayDate, listCurrentExceptionsOn } from '../console-money-repository.ts';
import { formatEmployee, formatInstant } from '../console-format.ts';
import { formatMoney } from '../../../platform/money/money-text.ts';
import { dataTable } from '../console-layout.ts';
import type { ConsolePageModule } from '../console-plugin.ts';
import { html } from '../html.ts';
import { describeReadSource, readSource } from '../../../platform/db/read-replica.ts';

/** A pay date from the address or the form; anything else is a 400 page naming the field. */
function payDateFrom(value: unknown, field: string): string {
  const parsed = isoDateSchema.safeParse(value);
  if (!parsed.success) throw new MalformedRequestError('invalid-pay-date', `${field} must be a date as YYYY-MM-DD`);
  return parsed.data;
}

const exceptionKindLabels: Record<string, string> = {
  over_deduction: 'Over-deduction',
  unexpected_employee: 'Unexpected employee',
  missing_confirmation: 'Missing confirmation',
};

/**
 * A pay date's reconciliation: the per-payroll summary finance checks (collected + held = reported),
 * the exceptions held, and the same CSV files the API and the CLI give operators.
 */
export const registerReconciliationPages: ConsolePageModule = (app, context) => {
  const { config } = context.deps;

  // Every page and file here only reads, and none is where an action lands: all read off the replica
  // within its lag bound (readSource).
  app.get<{ Querystring: { pay_date?: string } }>('/reconciliation', async (request, reply) => {
    const source = await readSource(context.deps);
    const { db } = source;
    const asked = request.query.pay_date;
    const payDate =
      asked !== undefined && asked !== ''
        ? payDateFrom(asked, 'pay_date')
        : ((await findLatestReconciliationPayDate(db)) ?? serviceToday(new Date(), config.SERVICE_TIME_ZONE));
    const [summary, exceptions] = await Promise.all([reconciliationSummary(db, { payDate }), listCurrentExceptionsOn(db, payDate)]);
    const files = `/console/reconciliation/${payDate}`;
    return context.page(request, reply, {
      title: `Reconciliation for ${payDate}`,
      section: 'reconciliation',
      dataAsOf: describeReadSource(source),
      body: html`<form method="get" action="/console/reconciliation" class="filters">
<label for="pay_date">Pay date</label>
<input type="date" id="pay_date" name="pay_date" value="${payDate}" required>
<button type="submit">Show</button>
</form>
<p>Download: <a href="${files}/reconciliation.csv" download>reconciliation CSV (one row per payment request per attempt)</a> ·
<a href="${files}/summary.csv" download>summary CSV (one row per payroll)</a></p>
<p><a href="/console/reconciliation/three-way?pay_date=${payDate}">Three-way reconciliation</a>: requested, deducted, received and paid out per payroll, with the differences explained.</p>
<section aria-labelledby="summary-heading">
<h2 id="summary-heading">Per payroll</h2>
${dataTable(
  `Reconciliation summary for pay date ${payDate}: collected plus held should equal reported`,
  ['Payroll', 'Employer', 'Requested', 'Deducted', 'Collected', 'Shortfall', 'Reported', 'Held over-deductions', 'Held unexpected employees', 'Unaccounted', 'Exceptions'],
  summary.map((row) => [
    html`<a href="/console/payrolls/${row.payroll_id}/pay-dates/${payDate}">${row.payroll}</a>`,
    row.employer,
    formatMoney(row.requested, row.currency),
    formatMoney(row.deducted, row.currency),
    formatMoney(row.collected, row.currency),
    formatMoney(row.shortfall, row.currency),
    formatMoney(row.reported, row.currency),
    formatMoney(row.held_over_deductions, row.currency),
    formatMoney(row.held_unexpected_employees, row.currency),
    formatMoney(unaccountedAmount(row), row.currency),
    String(row.exceptions),
  ]),
  'no payroll has reconciliation data for this pay date.',
)}
</section>
<section aria-labelledby="exceptions-heading">
<h2 id="exceptions-heading">Exceptions</h2>
${dataTable(
  `Exceptions held for pay date ${payDate}`,
  ['Payroll', 'Employer', 'Employee (works number)', 'Kind', 'Amount', 'Detail', 'Found'],
  exceptions.map((exception) => [
    html`<a href="/console/payrolls/${exception.payroll_id}/pay-dates/${payDate}">${exception.payroll}</a>`,
    exception.employer,
    formatEmployee({ name: exception.employee_name, worksNumber: exception.payroll_reference, id: exception.employee_id }),
    exceptionKindLabels[exception.kind] ?? exception.kind,
    exception.amount === null || exception.currency === null ? '—' : formatMoney(exception.amount, exception.currency),
    exception.detail,
    formatInstant(exception.created_at),
  ]),
  'none held.',
)}
</section>`,
    });
  });

  app.get<{ Params: { payDate: string } }>('/reconciliation/:payDate/reconciliation.csv', async (request, reply) => {
    const payDate = payDateFrom(request.params.payDate, 'The pay date');
    // Every live biller's rows, as an operator's API report: no biller filter, sandbox payrolls left out.
    const { db } = await readSource(context.deps);
    const csv = await openReconciliationCsvStream(db, { payDate });
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${reconciliationFileName(payDate)}"`)
      .send(csv);
  });

  app.get<{ Params: { payDate: string } }>('/reconciliation/:payDate/summary.csv', async (request, reply) => {
    const payDate = payDateFrom(request.params.payDate, 'The pay date');
    // Fastify sends the headers with the first byte, so a failed query still ends as an error page.
    const csv = new PassThrough();
    const { db } = await readSource(context.deps);
    writeReconciliationSummaryCsv(db, { payDate }, csv).catch((error: unknown) => csv.destroy(error as Error));
    return reply
      .code(200)
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${reconciliationSummaryFileName(payDate)}"`)
      .send(csv);
  });
};
