import type { FastifyReply, FastifyRequest } from 'fastify';
import { listRuns, runKindSchema, showRun, type RunKind } from '../../../cycle/runs/run-history-service.ts';
import { payrollName } from '../../../directory/payrolls/payroll-names.ts';
import { findPayrollForProvider } from '../../../cycle/snapshots/snapshot-repository.ts';
import { describeReconciliationRunRow, type ReconciliationRunRowFacts } from '../../../cycle/reconciliation/reconciliation-run-text.ts';
import { NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { consolePermits } from '../console-permissions.ts';
import { nightlyRetryForm } from './nightly-retry-action.ts';
import { dataTable, statusBadge } from '../console-layout.ts';
import { describeReadSource, readSource } from '../../../platform/db/read-replica.ts';
import type { ConsoleContext, ConsolePageModule } from '../console-plugin.ts';
import { formatDuration, formatInstant } from '../console-format.ts';
import { formatMoney } from '../../../platform/money/money-text.ts';
import { findSnapshotVersion } from '../pay-date-detail-repository.ts';
import { html, type Html } from '../html.ts';

const LIMIT_CHOICES = [25, 50, 100, 200] as const;
const DEFAULT_LIMIT = 50;
/** A re-run in progress reloads this often until its result is in. */
const RERUN_REFRESH_SECONDS = 2;

type Detail = Record<string, unknown>;

const text = (value: unknown): string => (value === null || value === undefined ? '—' : String(value));
const instant = (value: unknown) => formatInstant(value as Date | null);
const durationBetween = (started: unknown, finished: unknown) =>
  started instanceof Date && finished instanceof Date ? formatDuration(finished.getTime() - started.getTime()) : '—';

/** "Employer: Payroll" from a run detail's joined names. */
const payrollOf = (detail: Detail) => payrollName({ employer_name: String(detail['employer_name']), payroll_name: String(detail['payroll_name']) });

export function payDatePath(payrollId: string, payDate: string): string {
  return `/console/payrolls/${encodeURIComponent(payrollId)}/pay-dates/${encodeURIComponent(payDate)}`;
}

/** Label/value pairs as a description list. */
function facts(pairs: ReadonlyArray<readonly [string, Html | string | number]>): Html {
  return html`<dl class="facts">${pairs.map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl>`;
}

function outcomeOf(detail: Detail): string {
  if (detail['finished_at'] === null || detail['finished_at'] === undefined) return 'unfinished';
  return typeof detail['outcome'] === 'string' ? detail['outcome'] : 'completed';
}

/** `retry`: the retry button, for someone allowed to use it. */
function nightlyBody(run: Detail, retry: Html | null): Html {
  const payDates = run['payDates'] as Array<Record<string, unknown>>;
  const count = (outcome: string) => payDates.filter((row) => row['outcome'] === outcome).length;
  const failed = count('failed');
  const outcome = run['finished_at'] === null ? 'unfinished' : failed > 0 ? 'failed' : 'completed';
  return html`${facts([
    ['Run date', text(run['run_date'])],
    ['Trigger', run['trigger'] === 'manual' ? `manual, by ${text(run['triggered_by'])}` : text(run['trigger'])],
    ['Started', instant(run['started_at'])],
    ['Finished', instant(run['finished_at'])],
    ['Duration', durationBetween(run['started_at'], run['finished_at'])],
    ['Outcome', statusBadge(outcome)],
    ['Pay dates due', text(run['pay_dates_due'])],
    ['Locked', count('locked') + count('already_locked')],
    ['Failed', failed],
    ['Skipped (payroll not ready)', count('skipped')],
    ['Pending', count('pending')],
  ])}
${
  count('skipped') + failed > 0
    ? html`<p>Skipped pay dates are locked as soon as their payroll is ready: the worker retries them. <code>deductions nightly retry --run ${text(run['id'])}</code> retries the skipped and failed ones now.</p>${retry ?? ''}`
    : ''
}
${dataTable(
  'Pay dates of this run',
  ['Payroll', 'Pay date', 'Outcome', 'Employees', 'Total', 'Why it failed or was skipped'],
  payDates.map((row) => [
    payrollOf(row),
    html`<a href="${payDatePath(String(row['payroll_id']), String(row['pay_date']))}">${text(row['pay_date'])}</a>`,
    statusBadge(String(row['outcome'])),
    text(row['employee_count']),
    row['total_amount'] === null || row['currency'] === null ? '—' : formatMoney(row['total_amount'] as number, String(row['currency'])),
    text(row['failure_reason']),
  ]),
  'No pay date was due.',
)}`;
}

async function rerunBody(context: ConsoleContext, rerun: Detail, reloading: boolean): Promise<{ body: Html; finished: boolean }> {
  const requests = rerun['requests'] as Array<Record<string, unknown>>;
  const finished = rerun['completed_at'] !== null;
  const created = finished && rerun['new_snapshot_id'] ? await findSnapshotVersion(context.deps.db, String(rerun['new_snapshot_id'])) : undefined;
  const previous = rerun['previous_snapshot_id'] ? await findSnapshotVersion(context.deps.db, String(rerun['previous_snapshot_id'])) : undefined;
  const payDateLink = html`<a href="${payDatePath(String(rerun['payroll_id']), String(rerun['pay_date']))}">${payrollOf(rerun)}, pay date ${text(rerun['pay_date'])}</a>`;
  const result = created
    ? html`<p class="result">Done: snapshot version ${created.snapshot_version}${previous ? ` replaces version ${previous.snapshot_version}` : ''}, ${created.employee_count} employees, ${formatMoney(created.total_amount, created.currency)}.</p>`
    : reloading
      ? html`<p class="progress" role="status">In progress: the re-run is queued or locking a new snapshot version. This page reloads every ${RERUN_REFRESH_SECONDS} seconds with its progress and result. <a href="?reload=off">Stop reloading</a></p>`
      : html`<p class="progress" role="status">In progress: the re-run is queued or locking a new snapshot version. <a href="?reload=off">Check again</a> or <a href="?">reload automatically</a>.</p>`;
  return {
    finished,
    body: html`${result}
${facts([
  ['Pay date', payDateLink],
  ['Payroll id', text(rerun['payroll_id'])],
  ['Status', statusBadge(finished ? 'completed' : 'in progress')],
  ['Requested', instant(rerun['requested_at'])],
  ['Completed', instant(rerun['completed_at'])],
  ['Duration', durationBetween(rerun['requested_at'], rerun['completed_at'])],
  ['Previous snapshot version', previous ? previous.snapshot_version : '—'],
  ['New snapshot version', created ? created.snapshot_version : '—'],
])}
${dataTable(
  'Requests this re-run answers',
  ['Requested by', 'Reason', 'When'],
  requests.map((request) => [text(request['requested_by']), text(request['reason']), instant(request['requested_at'])]),
)}`,
  };
}

function reconciliationBody(run: Detail, currency: string | undefined): Html {
  const collected = run['collected'];
  const words = describeReconciliationRunRow(run as unknown as ReconciliationRunRowFacts);
  return facts([
    ['Pay date', html`<a href="${payDatePath(String(run['payroll_id']), String(run['pay_date']))}">${payrollOf(run)}, pay date ${text(run['pay_date'])}</a>`],
    ['Payroll id', text(run['payroll_id'])],
    ['What started it', words.started],
    ['Started', instant(run['started_at'])],
    ['Finished', instant(run['finished_at'])],
    ['Duration', durationBetween(run['started_at'], run['finished_at'])],
    ['Outcome', statusBadge(outcomeOf(run))],
    ['Failure', text(run['failure_reason'])],
    ['Employees', text(run['employees'])],
    // The run row keeps minor units; a payroll collects in its own currency. The pay date's total, not this run's.
    [
      'Collected',
      collected === null || collected === undefined || currency === undefined ? text(collected) : `${formatMoney(collected as number, currency)} in all on this pay date`,
    ],
    ['This run changed', words.changed],
  ]);
}

function payoutBody(run: Detail): Html {
  const totals = Object.entries((run['totals_by_currency'] ?? {}) as Record<string, number>);
  const payouts = run['payouts'] as Array<Record<string, unknown>>;
  return html`${facts([
    ['Run date', text(run['run_date'])],
    ['Trigger', `${text(run['trigger'])}${run['triggered_by'] ? ` by ${text(run['triggered_by'])}` : ''}`],
    ['Settled through', text(run['settled_through'])],
    ['Started', instant(run['started_at'])],
    ['Finished', instant(run['finished_at'])],
    ['Duration', durationBetween(run['started_at'], run['finished_at'])],
    ['Outcome', statusBadge(outcomeOf(run))],
    ['Failure', text(run['failure_reason'])],
    ['Payouts made', text(run['payouts_made'])],
    ['Failed groups', text(run['failed_groups'])],
    ['Totals', totals.length === 0 ? 'nothing paid out' : totals.map(([currency, amount]) => formatMoney(amount, currency)).join(', ')],
  ])}
${dataTable(
  'Payouts made',
  ['Biller', 'Amount', 'Reference', 'Payout date', 'Status'],
  payouts.map((payout) => [
    text(payout['biller_name']),
    formatMoney(payout['amount'] as number, String(payout['currency'])),
    text(payout['reference']),
    text(payout['payout_date']),
    statusBadge(String(payout['status'])),
  ]),
)}`;
}

function kindFilter(selected: RunKind | undefined, limit: number): Html {
  const kinds: Array<{ value: string; label: string }> = [{ value: '', label: 'All kinds' }, ...runKindSchema.options.map((kind) => ({ value: kind, label: kind }))];
  return html`<form method="get" action="/console/runs" class="filter">
<label for="runs-kind">Kind</label>
<select id="runs-kind" name="kind">${kinds.map(
    (kind) => html`<option value="${kind.value}"${(selected ?? '') === kind.value ? html` selected` : ''}>${kind.label}</option>`,
  )}</select>
<label for="runs-limit">Show</label>
<select id="runs-limit" name="limit">${LIMIT_CHOICES.map((choice) => html`<option value="${choice}"${choice === limit ? html` selected` : ''}>${choice}</option>`)}</select>
<button type="submit">Filter</button>
</form>`;
}

/** Run history: every nightly run, re-run, reconciliation run and payout run, and each one's detail. */
export const registerRunsPages: ConsolePageModule = (app, context) => {
  // The list only reads, off the replica within its lag bound (readSource). A run's own page stays on
  // the primary: a re-run and a nightly retry redirect there, and it must show the run just asked for.
  app.get<{ Querystring: { kind?: string; limit?: string } }>('/runs', async (request, reply) => {
    const parsedKind = runKindSchema.safeParse(request.query.kind);
    const kind = parsedKind.success ? parsedKind.data : undefined;
    const askedLimit = Number.parseInt(request.query.limit ?? '', 10);
    const limit = (LIMIT_CHOICES as readonly number[]).includes(askedLimit) ? askedLimit : DEFAULT_LIMIT;
    const source = await readSource(context.deps);
    const runs = await listRuns(source.db, kind ? { kind, limit } : { limit });
    return context.page(request, reply, {
      title: 'Runs',
      section: 'runs',
      dataAsOf: describeReadSource(source),
      body: html`${kindFilter(kind, limit)}
${dataTable(
  kind ? `The ${limit} latest ${kind} runs` : `The ${limit} latest runs of every kind`,
  ['Kind', 'Started', 'Finished', 'Outcome', 'Summary'],
  runs.map((run) => [
    run.kind,
    formatInstant(run.startedAt),
    formatInstant(run.finishedAt),
    statusBadge(run.outcome),
    html`<a href="/console/runs/${run.kind}/${run.id}">${run.summary}</a>`,
  ]),
  'No runs yet.',
)}`,
    });
  });

  app.get<{ Params: { kind: string; id: string } }>('/runs/:kind/:id', async (request: FastifyRequest<{ Params: { kind: string; id: string } }>, reply: FastifyReply) => {
    const parsedKind = runKindSchema.safeParse(request.params.kind);
    if (!parsedKind.success) throw new NotFoundError(`Run kind ${request.params.kind}`);
    const kind = parsedKind.data;
    const detail = await showRun(context.deps.db, kind, request.params.id);
    const back = html`<p><a href="/console/runs?kind=${kind}">All ${kind === 'rerun' ? 're-runs' : `${kind} runs`}</a></p>`;
    if (kind === 'rerun') {
      // Reloading is the person's to stop (WCAG 2.2.1: a time limit the user can turn off).
      const reloading = (request.query as { reload?: string }).reload !== 'off';
      const { body, finished } = await rerunBody(context, detail, reloading);
      return context.page(request, reply, {
        title: `Re-run ${detail.id}`,
        section: 'runs',
        ...(finished || !reloading ? {} : { refreshSeconds: RERUN_REFRESH_SECONDS }),
        body: html`${body}${back}`,
      });
    }
    const titles: Record<Exclude<RunKind, 'rerun'>, string> = { nightly: 'Nightly run', reconciliation: 'Reconciliation run', payout: 'Payout run' };
    const body =
      kind === 'nightly'
        ? nightlyBody(detail, consolePermits(context.session(request).role, 'rerun') ? nightlyRetryForm(detail.id, context.csrfToken(request, reply)) : null)
        : kind === 'reconciliation'
          ? reconciliationBody(detail, (await findPayrollForProvider(context.deps.db, String(detail['payroll_id'])))?.currency)
          : payoutBody(detail);
    return context.page(request, reply, { title: `${titles[kind]} ${detail.id}`, section: 'runs', body: html`${body}${back}` });
  });
};
