import type { FastifyReply, FastifyRequest } from 'fastify';
import { instructionFileHeaders } from '../../../cycle/instructions/instruction-service.ts';
import { consoleActor } from '../../../platform/audit/audit-service.ts';
import { findInstructionFile } from '../../../cycle/instructions/instruction-repository.ts';
import { queueNames } from '../../../platform/queue/job-catalogue.ts';
import { showPayDateVoids } from '../../../cycle/deduction-records/void-service.ts';
import { payDateStateForRerun, requestRerun } from '../../../cycle/reruns/rerun-service.ts';
import { DomainError, NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema, isUuid } from '../../../platform/shared/schemas.ts';
import { rerunNeedsConfirmation, type PayDateState } from '../../../cycle/reruns/rerun-confirmation.ts';
import { enqueueRerun } from '../../workers/rerun-runner.ts';
import { describeReconciliationRunRow } from '../../../cycle/reconciliation/reconciliation-run-text.ts';
import { dataTable, statusBadge } from '../console-layout.ts';
import { consolePermits } from '../console-permissions.ts';
import { CONSOLE_FORM_LIMIT_BYTES, type ConsoleContext, type ConsolePageModule } from '../console-plugin.ts';
import { formatEmployee, formatInstant } from '../console-format.ts';
import { formatDecimalMoney, formatMoney } from '../../../platform/money/money-text.ts';
import { listCurrentExceptionsOn } from '../console-money-repository.ts';
import { html, type Html } from '../html.ts';
import {
  countDeductionRecords,
  countProviderPushes,
  findLatestReconciliationRun,
  findPayDateHeading,
  listConfirmations,
  listRerunsOfPayDate,
  listSnapshotTotals,
  listSnapshotVersions,
  sumCollectionAttempts,
} from '../pay-date-detail-repository.ts';
import { payDatePath } from './runs-pages.ts';
import { deductionReturnSection, returnFileHref } from './deduction-return-pages.ts';

type PayDateParams = { payrollId: string; payDate: string };

/** A path that cannot name a pay date (not a UUID, not a real date) names nothing: 404, never a database error. */
function payDateOf(params: PayDateParams): PayDateParams {
  if (!isUuid(params.payrollId) || !isoDateSchema.safeParse(params.payDate).success) {
    throw new NotFoundError(`Payroll ${params.payrollId} pay date ${params.payDate}`);
  }
  return params;
}

/** What a person is told before re-running a pay date whose money has moved (rerunNeedsConfirmation). */
const CONFIRMATION_WARNINGS: Partial<Record<PayDateState, string>> = {
  reconciled: 'This pay date is reconciled: every deduction payroll reported has been allocated to its payment requests.',
  paid_out: 'This pay date is paid out: its collections have gone to billers.',
};

interface RerunFormState {
  error?: string;
  reason?: string;
  /** The error is about the missing confirmation, not the reason. */
  confirmationMissing?: boolean;
}

function rerunForm(context: ConsoleContext, request: FastifyRequest, reply: FastifyReply, path: string, state: PayDateState | null, form: RerunFormState = {}): Html {
  const session = context.session(request);
  if (!consolePermits(session.role, 'rerun')) {
    return html`<p>Only operators can re-run a pay date.</p>`;
  }
  if (state === null || state === 'open') return html`<p>The pay date has not been locked yet: there is no snapshot to re-run.</p>`;
  const { error, reason = '', confirmationMissing = false } = form;
  const reasonInvalid = error !== undefined && !confirmationMissing;
  const warning = rerunNeedsConfirmation(state) ? CONFIRMATION_WARNINGS[state] : undefined;
  // Stacked, each label right above its field (an inline row put "Reason" a screen-width from its box).
  return html`<form method="post" action="${path}/reruns" class="stacked">
<input type="hidden" name="_csrf" value="${context.csrfToken(request, reply)}">
<p>A re-run locks a new snapshot version and instruction file from the data as it is now. Say why: the reason is kept with the request and in the audit log.</p>
${error ? html`<p class="error" id="rerun-error" role="alert">${error}</p>` : ''}
<div class="field">
<label for="rerun-reason">Reason</label>
<textarea id="rerun-reason" name="reason" rows="3" required${reasonInvalid ? html` aria-invalid="true" aria-describedby="rerun-error"` : ''}>${reason}</textarea>
</div>
${
  warning
    ? html`<p class="warning" id="rerun-warning">${warning} A re-run changes what payroll is asked for after the money has moved.</p>
<div class="choice">
<input type="checkbox" id="rerun-confirm" name="confirm" value="yes" required aria-describedby="rerun-warning"${confirmationMissing ? html` aria-invalid="true"` : ''}>
<label for="rerun-confirm">I have checked: re-run it anyway</label>
</div>`
    : ''
}
<button type="submit">Re-run this pay date</button>
</form>`;
}

async function payDateBody(context: ConsoleContext, request: FastifyRequest, reply: FastifyReply, params: PayDateParams, rerun: RerunFormState = {}) {
  const { db } = context.deps;
  const { payrollId, payDate } = params;
  const heading = await findPayDateHeading(db, payrollId, payDate);
  if (!heading) throw new NotFoundError(`Payroll ${payrollId} pay date ${payDate}`);
  const [versions, pushes, confirmations, records, voids, reconciliation, attempts, exceptions, reruns, state] = await Promise.all([
    listSnapshotVersions(db, payrollId, payDate),
    countProviderPushes(db, payrollId, payDate),
    listConfirmations(db, payrollId, payDate),
    countDeductionRecords(db, payrollId, payDate),
    showPayDateVoids(db, payrollId, payDate),
    findLatestReconciliationRun(db, payrollId, payDate),
    sumCollectionAttempts(db, payrollId, payDate),
    listCurrentExceptionsOn(db, payDate, payrollId),
    listRerunsOfPayDate(db, payrollId, payDate),
    payDateStateForRerun(db, payrollId, payDate),
  ]);
  const totals = await listSnapshotTotals(
    db,
    versions.map((version) => version.id),
  );
  const path = payDatePath(payrollId, payDate);
  const totalsOf = (snapshotId: string, fallback: { total_amount: number; currency: string }) => {
    const lines = totals.filter((row) => row.snapshot_id === snapshotId);
    return lines.length === 0 ? formatMoney(fallback.total_amount, fallback.currency) : lines.map((row) => formatMoney(BigInt(row.total), row.currency)).join(', ');
  };
  const madeBy = (version: (typeof versions)[number]): Html | string => {
    if (version.rerun_id) return html`<a href="/console/runs/rerun/${version.rerun_id}">re-run</a>`;
    if (version.nightly_run_id) {
      const who = version.nightly_trigger === 'manual' ? `nightly run by ${version.nightly_triggered_by ?? 'someone'}` : `nightly run (${version.nightly_trigger})`;
      return html`<a href="/console/runs/nightly/${version.nightly_run_id}">${who}</a>`;
    }
    return 'lock outside a nightly run';
  };

  // What the latest reconciliation changed (nothing, for a repeat over the same records) and what started it, in words.
  const latest = reconciliation ? describeReconciliationRunRow(reconciliation) : undefined;
  const reconciliationWords = latest ? `${latest.changed}. ${latest.started}.` : '';
  const returnSection = await deductionReturnSection(context, request, reply, params);
  const body = html`<dl class="facts">
<dt>Employer</dt><dd>${heading.employer_name}</dd>
<dt>Payroll</dt><dd>${heading.payroll_name} (${heading.payroll_external_id}, ${heading.payroll_id})</dd>
<dt>Pay date</dt><dd>${heading.pay_date} (pay period ${heading.pay_period})</dd>
<dt>Lock date</dt><dd>${heading.lock_date}</dd>
<dt>Locked</dt><dd>${heading.first_locked_at ? formatInstant(heading.first_locked_at) : heading.locked_at ? formatInstant(heading.locked_at) : 'not yet'}</dd>
${
  heading.first_locked_at && heading.locked_at && new Date(heading.locked_at).getTime() !== new Date(heading.first_locked_at).getTime()
    ? html`<dt>Locked again by a re-run</dt><dd>${formatInstant(heading.locked_at)}</dd>`
    : ''
}
</dl>
<section aria-labelledby="snapshots">
<h2 id="snapshots">Snapshot versions</h2>
${dataTable(
  'Snapshot versions, newest first',
  ['Version', 'Created', 'Made by', 'Employees', 'Total', 'Status', 'Instruction file'],
  versions.map((version) => [
    html`${version.snapshot_version}${version.status !== 'superseded' ? html` <strong>(current)</strong>` : ''}`,
    formatInstant(version.locked_at),
    madeBy(version),
    version.employee_count,
    totalsOf(version.id, version),
    statusBadge(version.status),
    version.file_version === null
      ? 'none yet'
      : html`<a href="${path}/instruction-files/${version.file_version}" download>Download ${version.file_name}</a> (${version.item_count} items); <a href="${returnFileHref(payrollId, payDate, version.file_version)}" download>its return file</a>`,
  ]),
  'The pay date has not been locked yet.',
)}
</section>
<section aria-labelledby="provider-push">
<h2 id="provider-push">Provider push</h2>
${dataTable(
  'Changed items pushed to the payroll provider, by file version and status',
  ['File version', 'Status', 'Items', 'Last sent', 'Last error'],
  pushes.map((row) => [row.file_version, statusBadge(row.status), row.pushes, formatInstant(row.last_sent_at), row.last_error ?? '—']),
  'Nothing pushed: the provider has no API, or no item changed.',
)}
</section>
<section aria-labelledby="confirmation">
<h2 id="confirmation">Confirmation</h2>
${dataTable(
  'Confirmations received from the payroll provider',
  ['Received', 'From', 'Employees', 'Total'],
  confirmations.map((row) => [
    formatInstant(row.received_at),
    row.submitted_by_client_id === null ? `${row.submitted_by ?? '—'}, return file` : (row.submitted_by_client_name ?? row.submitted_by_client_id),
    row.employee_count,
    formatMoney(row.total_amount, row.currency),
  ]),
  'No confirmation received.',
)}
${dataTable(
  'Deduction records received',
  ['Source', 'Records', 'Employees', 'Voided', 'Last received'],
  records.map((row) => [row.source, row.records, row.employees, row.voided, formatInstant(row.last_received_at)]),
  'No deduction record received.',
)}
${
  voids.length === 0
    ? ''
    : dataTable(
        'Reports voided by an operator: they no longer count',
        ['Voided', 'By', 'Records', 'Total', 'Reason'],
        voids.map((v) => [formatInstant(v.voided_at), v.voided_by, v.records, formatDecimalMoney(v.total_amount, v.currency), v.reason]),
        '',
      )
}
</section>
${returnSection}
<section aria-labelledby="reconciliation">
<h2 id="reconciliation">Reconciliation</h2>
${
  reconciliation
    ? html`<p>Latest reconciliation: <a href="/console/runs/reconciliation/${reconciliation.id}">started ${formatInstant(reconciliation.started_at)}</a> ${statusBadge(reconciliation.outcome ?? 'unfinished')}${reconciliation.outcome === 'completed' ? `: ${reconciliation.employees} employees` : reconciliation.failure_reason ? `: ${reconciliation.failure_reason}` : ''}. ${reconciliationWords}</p>`
    : html`<p class="empty">Not reconciled yet.</p>`
}
${dataTable(
  'Requested, deducted and collected, per currency',
  ['Currency', 'Attempts', 'Requested', 'Deducted', 'Collected', 'Shortfall'],
  attempts.map((row) => [
    row.currency,
    row.attempts,
    formatMoney(BigInt(row.requested), row.currency),
    formatMoney(BigInt(row.deducted), row.currency),
    formatMoney(BigInt(row.collected), row.currency),
    formatMoney(BigInt(row.shortfall), row.currency),
  ]),
  'No collection attempt recorded.',
)}
${dataTable(
  'Reconciliation exceptions',
  ['Kind', 'Employee (works number)', 'Amount', 'Record version', 'Detail', 'Found'],
  exceptions.map((row) => [
    statusBadge(row.kind),
    formatEmployee({ name: row.employee_name, worksNumber: row.payroll_reference, id: row.employee_id }),
    row.amount === null || row.currency === null ? '—' : formatMoney(row.amount, row.currency),
    row.record_version ?? '—',
    row.detail,
    formatInstant(row.created_at),
  ]),
  'No exception.',
)}
</section>
<section aria-labelledby="reruns">
<h2 id="reruns">Re-runs</h2>
${dataTable(
  'Re-runs of this pay date',
  ['Requested', 'Requests', 'Reasons', 'Status', 'New version'],
  reruns.map((row) => [
    html`<a href="/console/runs/rerun/${row.id}">${formatInstant(row.requested_at)}</a>`,
    row.requests,
    row.reasons,
    statusBadge(row.completed_at ? 'completed' : 'in progress'),
    row.new_version ?? '—',
  ]),
  'Never re-run.',
)}
${rerunForm(context, request, reply, path, state, rerun)}
</section>`;
  return { title: `${heading.payroll_name}: pay date ${heading.pay_date}`, body };
}

/** One payroll pay date end to end, its instruction files, and the operator's re-run. */
export const registerPayDatePage: ConsolePageModule = (app, context) => {
  app.get<{ Params: PayDateParams }>('/payrolls/:payrollId/pay-dates/:payDate', async (request, reply) => {
    const view = await payDateBody(context, request, reply, payDateOf(request.params));
    return context.page(request, reply, { ...view, section: 'runs' });
  });

  app.get<{ Params: PayDateParams & { version: string } }>('/payrolls/:payrollId/pay-dates/:payDate/instruction-files/:version', async (request, reply) => {
    const { payrollId, payDate } = payDateOf(request.params);
    const version = Number(request.params.version);
    if (!/^[1-9][0-9]{0,8}$/.test(request.params.version)) throw new NotFoundError(`Instruction file version ${request.params.version}`);
    const file = await findInstructionFile(context.deps.db, payrollId, payDate, version);
    if (!file) throw new NotFoundError(`Instruction file version ${version} for ${payDate}`);
    // The same file, headers and digest the providers' API route serves.
    return reply.code(200).headers(instructionFileHeaders(file)).send(file.content);
  });

  app.post<{ Params: PayDateParams; Body: { reason?: string; confirm?: string } }>(
    '/payrolls/:payrollId/pay-dates/:payDate/reruns',
    { bodyLimit: CONSOLE_FORM_LIMIT_BYTES },
    async (request, reply) => {
      const session = context.requirePermission(request, 'rerun');
      const params = payDateOf(request.params);
      const reason = typeof request.body?.reason === 'string' ? request.body.reason : '';
      if (reason.trim().length === 0) {
        const view = await payDateBody(context, request, reply, params, { error: 'Say why the pay date needs a re-run: a reason is required.', reason });
        return context.page(request, reply, { ...view, section: 'runs', status: 422 });
      }
      let recorded;
      try {
        recorded = await requestRerun(context.deps.db, {
          payrollId: params.payrollId,
          payDate: params.payDate,
          reason,
          actor: consoleActor(session.email),
          force: request.body?.confirm === 'yes',
        });
      } catch (error) {
        if (error instanceof DomainError && error.code === 'rerun-confirmation-required') {
          const view = await payDateBody(context, request, reply, params, {
            error: 'Tick the box to confirm the re-run: the money of this pay date has already moved.',
            reason,
            confirmationMissing: true,
          });
          return context.page(request, reply, { ...view, section: 'runs', status: 409 });
        }
        throw error;
      }
      await enqueueRerun(await context.queues.queue(queueNames.payDates), context.deps.db, recorded.id);
      return context.redirectWithNotice(
        reply,
        `/console/runs/rerun/${recorded.id}`,
        recorded.joined ? 'Your request joined a re-run already asked for; it answers both.' : 'Re-run requested: this page shows its progress and then its result.',
      );
    },
  );
};
