import { listPayrollReadiness, type PayrollReadiness } from '../../../cycle/nightly/go-live-readiness-service.ts';
import { listRuns } from '../../../cycle/runs/run-history-service.ts';
import { groupedBarChart, lineChart } from '../charts.ts';
import { listNightlyRunDurations, listPayDateTotals, listPayrollsByExceptions } from '../console-chart-repository.ts';
import { dataTable, statusBadge } from '../console-layout.ts';
import { describeReadSource, readSource } from '../../../platform/db/read-replica.ts';
import type { ConsolePageModule } from '../console-plugin.ts';
import { formatDuration, formatInstant } from '../console-format.ts';
import { formatMoney } from '../../../platform/money/money-text.ts';
import { html, type Html } from '../html.ts';
import { collectAttention } from '../../attention/attention-service.ts';
import { attentionSection } from './attention-section.ts';

const PAY_DATES_CHARTED = 12;
const NIGHTLY_RUNS_CHARTED = 30;
const EXCEPTION_DAYS = 90;
const PAYROLLS_CHARTED = 10;
const DEFAULT_CURRENCY = 'GBP';

type PayDateTotals = Awaited<ReturnType<typeof listPayDateTotals>>[number];

/**
 * One currency at a time (amounts in different currencies do not add up): the one asked for, else
 * GBP, else the one on most of the pay dates.
 */
function chartCurrency(totals: readonly PayDateTotals[], asked: string | undefined): string | undefined {
  const payDatesPerCurrency = new Map<string, number>();
  for (const row of totals) payDatesPerCurrency.set(row.currency, (payDatesPerCurrency.get(row.currency) ?? 0) + 1);
  if (asked !== undefined && payDatesPerCurrency.has(asked)) return asked;
  if (payDatesPerCurrency.has(DEFAULT_CURRENCY)) return DEFAULT_CURRENCY;
  return [...payDatesPerCurrency.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
}

function moneyChart(totals: readonly PayDateTotals[], asked: string | undefined): Html {
  const currency = chartCurrency(totals, asked);
  const rows = totals.filter((row) => row.currency === currency);
  const others = [...new Set(totals.map((row) => row.currency))].filter((other) => other !== currency);
  // Cash is what finance watches: what the employers sent and what left for billers, beside the
  // figures payroll and reconciliation give.
  const chart = groupedBarChart({
    id: 'chart-collections',
    title: `Requested, deducted, collected, received and paid out per pay date${currency ? ` (${currency})` : ''}`,
    description:
      `For the latest ${PAY_DATES_CHARTED} reconciled pay dates of live payrolls: what billers requested, what payroll deducted and what was collected, ` +
      `as the reconciliation summary counts them; what the employers sent, as matched to the pay date's remittances; and what was paid out to billers ` +
      `for the pay date (in payouts that have not failed), as the three-way reconciliation counts them.`,
    categoryHeading: 'Pay date',
    categories: rows.map((row) => row.pay_date),
    series: [
      { name: 'Requested', values: rows.map((row) => row.requested) },
      { name: 'Deducted', values: rows.map((row) => row.deducted) },
      { name: 'Collected', values: rows.map((row) => row.collected) },
      { name: 'Received', values: rows.map((row) => row.received) },
      { name: 'Paid out', values: rows.map((row) => row.paid_out) },
    ],
    formatValue: (minor) => formatMoney(minor, currency ?? DEFAULT_CURRENCY),
  });
  return html`${chart}${others.length > 0 ? html`<p>Also in: ${others.map((other, index) => html`${index > 0 ? ', ' : ''}<a href="/console?currency=${other}#chart-collections">${other}</a>`)}</p>` : ''}`;
}

/** Payrolls the nightly run skips as they are, each with what it still needs; nothing when all are ready. */
function notReadySection(notReady: readonly PayrollReadiness[]): Html | string {
  if (notReady.length === 0) return '';
  return html`<section aria-labelledby="not-ready">
<h2 id="not-ready">Payrolls not ready</h2>
<p>The nightly run skips the pay dates of these payrolls, saying why, and locks them once they are ready. <code>deductions payrolls readiness</code> lists the same.</p>
${dataTable(
  'Payrolls the nightly run cannot lock yet, and what each still needs',
  ['Employer', 'Payroll', 'Go-live date', 'Missing'],
  notReady.map((payroll) => [
    payroll.employer,
    payroll.payroll,
    payroll.goLiveDate ?? 'none',
    html`<ul>${payroll.findings.filter((finding) => finding.severity === 'missing').map((finding) => html`<li>${finding.message}</li>`)}</ul>`,
  ]),
)}
</section>`;
}

/** The landing page: how last night went, the trends, and where to look next. */
export const registerOverviewPage: ConsolePageModule = (app, context) => {
  // Read only and no action lands here: off the replica within its lag bound (readSource); what needs
  // attention is about runs and pay dates hours old, which a lag of seconds does not change.
  app.get('/', async (request, reply) => {
    const { redis, config } = context.deps;
    const source = await readSource(context.deps);
    const { db } = source;
    const now = new Date();
    const attention = await collectAttention(
      {
        db,
        workers: { redis, prefix: config.QUEUE_PREFIX },
        queues: () => context.queues.all(),
        nightlyCron: config.NIGHTLY_CRON,
        timeZone: config.SERVICE_TIME_ZONE,
      },
      now,
    );
    const asked = (request.query as { currency?: unknown }).currency;
    const [lastNightly] = await listRuns(db, { kind: 'nightly', limit: 1 });
    const recent = await listRuns(db, { limit: 10 });
    const [readiness, totals, durations, exceptions] = await Promise.all([
      listPayrollReadiness(db, { now: new Date(), timeZone: context.deps.config.SERVICE_TIME_ZONE }),
      listPayDateTotals(db, PAY_DATES_CHARTED),
      listNightlyRunDurations(db, NIGHTLY_RUNS_CHARTED),
      listPayrollsByExceptions(db, new Date(Date.now() - EXCEPTION_DAYS * 86_400_000), PAYROLLS_CHARTED),
    ]);
    return context.page(request, reply, {
      title: 'Overview',
      section: 'overview',
      dataAsOf: describeReadSource(source),
      body: html`${attentionSection(attention, now)}
<section aria-labelledby="last-night">
<h2 id="last-night">Last nightly run</h2>
${
  lastNightly
    ? html`<p class="last-run">${statusBadge(lastNightly.outcome)} <a href="/console/runs/nightly/${lastNightly.id}">${lastNightly.summary}</a>, started ${formatInstant(lastNightly.startedAt)}, finished ${formatInstant(lastNightly.finishedAt)}.</p>`
    : html`<p class="empty">No nightly run yet.</p>`
}
</section>
${notReadySection(readiness.filter((payroll) => !payroll.ready))}
<section aria-labelledby="recent-runs">
<h2 id="recent-runs">Recent runs</h2>
${dataTable(
  'The ten latest runs of every kind',
  ['Kind', 'Started', 'Outcome', 'Summary'],
  recent.map((run) => [run.kind, formatInstant(run.startedAt), statusBadge(run.outcome), html`<a href="/console/runs/${run.kind}/${run.id}">${run.summary}</a>`]),
)}
</section>
<section aria-labelledby="trends">
<h2 id="trends">Trends</h2>
${moneyChart(totals, typeof asked === 'string' ? asked : undefined)}
${lineChart({
  id: 'chart-nightly-durations',
  title: 'Nightly run duration',
  description: `How long each of the latest ${NIGHTLY_RUNS_CHARTED} finished nightly runs took, oldest first; a run far longer than the others is drawn above the scale, with its duration.`,
  categoryHeading: 'Run date',
  categories: durations.map((run) => run.run_date),
  series: [{ name: 'Duration', values: durations.map((run) => run.duration_ms) }],
  formatValue: formatDuration,
  // Every finished run stays on the chart, failed ones too: how long a run took when it failed (a stall)
  // is worth seeing. But one catch-up of hours among runs of seconds would flatten the others onto
  // the zero line, so the axis fits the typical runs and the few far longer are drawn above it,
  // labelled with their real duration (clippedMaximum, charts.ts); the table keeps every value.
  clipOutliers: true,
})}
${groupedBarChart({
  id: 'chart-exceptions',
  title: `Reconciliation exceptions per payroll, last ${EXCEPTION_DAYS} days`,
  description: `The ${PAYROLLS_CHARTED} live payrolls with the most current reconciliation exceptions raised in the last ${EXCEPTION_DAYS} days.`,
  categoryHeading: 'Payroll',
  categories: exceptions.map((row) => `${row.employer_name}: ${row.payroll_name}`),
  series: [{ name: 'Exceptions', values: exceptions.map((row) => row.exceptions) }],
  formatValue: (count) => String(count),
})}
</section>`,
    });
  });
};
