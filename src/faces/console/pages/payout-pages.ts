import type { FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../../platform/audit/audit-service.ts';
import { maskedAccountNumber } from '../../../settlement/payouts/bank-account-details.ts';
import { findPayout, listPayouts, type PayoutAudience } from '../../../settlement/payouts/payout-repository.ts';
import { PAYOUT_STATUSES } from '../../../settlement/payouts/payout-resource.ts';
import { markPayoutFailed, markPayoutPaid } from '../../../settlement/payouts/payout-service.ts';
import { countPayoutsToInstruct, findPaymentFileOfPayout, listPaymentFilesOfDate, type PaymentFileSummaryRow } from '../../../settlement/payouts/payment-file-repository.ts';
import { createPaymentFiles, paymentFileDownload } from '../../../settlement/payouts/payment-file-service.ts';
import { PAYMENT_FILE_FORMATS, paymentFileName, type PaymentFileFormat } from '../../../settlement/payouts/payout-file.ts';
import { InvalidError, MalformedRequestError, NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { DEFAULT_PAGE_SIZE, pageOf } from '../../../platform/shared/paging.ts';
import { isoDateSchema, isUuid } from '../../../platform/shared/schemas.ts';
import { findClientNames, listPayoutItemsNamed } from '../console-money-repository.ts';
import { formatEmployee, formatInstant } from '../console-format.ts';
import { deductionPaymentReference } from '../../../cycle/instructions/payment-reference.ts';
import { payrollName } from '../../../directory/payrolls/payroll-names.ts';
import { formatMoney } from '../../../platform/money/money-text.ts';
import { actionForm, dataTable, statusBadge, type ConsolePageView } from '../console-layout.ts';
import { enteredIn, type FormRefusal } from '../console-form-refusal.ts';
import { describeReadSource, readSource } from '../../../platform/db/read-replica.ts';
import { CONSOLE_FORM_LIMIT_BYTES, type ConsoleFormRoute, type ConsolePageModule } from '../console-plugin.ts';
import { consolePermits } from '../console-permissions.ts';
import { html } from '../html.ts';

/** The console is the operators' view: every live biller's payouts, never a sandbox biller's simulated ones. */
const LIVE_BILLERS: PayoutAudience = { liveBillers: true };

/** As the API's settlement bodies allow. */
const REASON_MAX_LENGTH = 500;

type PayoutStatusFilter = (typeof PAYOUT_STATUSES)[number];

interface PayoutListQuery {
  status?: string;
  payout_date?: string;
  after?: string;
  before?: string;
}

function optionalDate(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = isoDateSchema.safeParse(value);
  if (!parsed.success) throw new MalformedRequestError('invalid-date', `${field} must be a date as YYYY-MM-DD`);
  return parsed.data;
}

function statusFilter(value: string | undefined): PayoutStatusFilter | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(PAYOUT_STATUSES as readonly string[]).includes(value)) {
    throw new MalformedRequestError('invalid-status', `status must be one of ${PAYOUT_STATUSES.join(', ')}`);
  }
  return value as PayoutStatusFilter;
}

function settlementReason(body: unknown): string | null {
  const raw = (body as { reason?: unknown } | undefined)?.reason;
  const reason = typeof raw === 'string' ? raw.trim() : '';
  if (reason.length > REASON_MAX_LENGTH) {
    throw new InvalidError('reason-too-long', `The reason must be at most ${REASON_MAX_LENGTH} characters`);
  }
  return reason === '' ? null : reason;
}

function paymentFilesHref(date: string): string {
  return `/console/payment-files?date=${date}`;
}

function paymentFileHref(fileId: string, format: PaymentFileFormat): string {
  return `/console/payment-files/${fileId}/${format}`;
}

function paymentFileFormat(value: string | undefined): PaymentFileFormat {
  if (value === undefined || !(PAYMENT_FILE_FORMATS as readonly string[]).includes(value)) {
    throw new NotFoundError(`A payment file rendering ${value ?? ''}`);
  }
  return value as PaymentFileFormat;
}

/** Per currency, how many payouts and how much, as a file's row shows it. */
function fileTotals(file: PaymentFileSummaryRow): string {
  return file.totals.map((total) => `${formatMoney(total.amount, total.currency)} in ${total.transfers} payout(s)`).join('; ');
}

/**
 * Payouts across live billers, each with its items, and finance recording the bank's answer (paid or
 * failed) with the same use cases the API calls, audited as the person signed in.
 */
export const registerPayoutPages: ConsolePageModule = (app, context) => {
  const { db } = context.deps;

  // The list only reads and no action lands on it: off the replica within its lag bound (readSource).
  // A payout's page, the payment files and the bank file stay on the primary: actions redirect to them,
  // and the bank file writes.
  app.get<{ Querystring: PayoutListQuery }>('/payouts', async (request, reply) => {
    const session = context.session(request);
    const source = await readSource(context.deps);
    const { db } = source;
    const status = statusFilter(request.query.status);
    const payoutDate = optionalDate(request.query.payout_date, 'payout_date');
    const paging = {
      limit: DEFAULT_PAGE_SIZE,
      after: request.query.after || undefined,
      before: request.query.before || undefined,
    };
    if (paging.after && paging.before) throw new MalformedRequestError('invalid-cursor', 'Give after or before, not both');
    const rows = await listPayouts(db, LIVE_BILLERS, { status, payoutDate }, paging);
    const { items, paging: page } = pageOf(rows, paging);
    const billers = await findClientNames(
      db,
      items.map((row) => row.biller_client_id),
    );
    const mayDownload = consolePermits(session.role, 'download_bank_file');
    const filters = new URLSearchParams();
    if (status) filters.set('status', status);
    if (payoutDate) filters.set('payout_date', payoutDate);
    const pageHref = (cursor: 'after' | 'before', value: string) => {
      const query = new URLSearchParams(filters);
      query.set(cursor, value);
      return `/console/payouts?${query.toString()}`;
    };
    const payoutDates = [...new Set(items.map((row) => row.payout_date))].sort().reverse();
    return context.page(request, reply, {
      title: 'Payouts',
      section: 'payouts',
      dataAsOf: describeReadSource(source),
      body: html`<form method="get" action="/console/payouts" class="filters">
<label for="status">Status</label>
<select id="status" name="status">
<option value=""${status ? '' : html` selected`}>Any</option>
${PAYOUT_STATUSES.map((option) => html`<option value="${option}"${option === status ? html` selected` : ''}>${option}</option>`)}
</select>
<label for="payout_date">Payout date</label>
<input type="date" id="payout_date" name="payout_date" value="${payoutDate ?? ''}">
<button type="submit">Filter</button>
</form>
${dataTable(
  `Payouts of live billers, newest first${status ? `, ${status}` : ''}${payoutDate ? `, made on ${payoutDate}` : ''}`,
  ['Payout', 'Biller', 'Amount', 'Status', 'Payout date', 'Reference', 'Created'],
  items.map((row) => [
    html`<a href="/console/payouts/${row.id}">${row.id}</a>`,
    billers.get(row.biller_client_id) ?? row.biller_client_id,
    formatMoney(row.amount, row.currency),
    statusBadge(row.status),
    row.payout_date,
    row.reference,
    formatInstant(row.created_at),
  ]),
  'no payouts match.',
)}
<nav aria-label="Pages of payouts" class="paging">
${page.before ? html`<a href="${pageHref('before', page.before)}" rel="prev">Newer payouts</a> ` : ''}
${page.after ? html`<a href="${pageHref('after', page.after)}" rel="next">Next: older payouts</a>` : ''}
</nav>
<section aria-labelledby="bank-files">
<h2 id="bank-files">Payment files</h2>
<p>Each payout is instructed to the bank in one stored payment file (pain.001 and CSV of the same payouts, one MsgId); a date whose payouts were made in several runs has several files.${mayDownload ? '' : ' Files hold account numbers: operators and finance download them.'}</p>
${
  payoutDates.length === 0
    ? html`<p class="empty">No payout dates on this page.</p>`
    : html`<ul>${payoutDates.map((date) => html`<li><a href="${paymentFilesHref(date)}">Payment files of the payouts made on ${date}</a></li>`)}</ul>`
}
</section>`,
    });
  });

  // The bank file link of old: the date's payment files now, where each is downloaded and a new one
  // written by a form (a download link that wrote a file would be a state change a GET could trigger).
  app.get<{ Querystring: { date?: string; format?: string } }>('/payouts/bank-file', async (request, reply) => {
    context.requirePermission(request, 'download_bank_file');
    const date = optionalDate(request.query.date, 'date');
    if (date === undefined) throw new MalformedRequestError('invalid-date', 'date must be a date as YYYY-MM-DD');
    return reply.redirect(paymentFilesHref(date), 303);
  });

  app.get<{ Querystring: { date?: string } }>('/payment-files', async (request, reply) => {
    const session = context.session(request);
    const date = optionalDate(request.query.date, 'date');
    if (date === undefined) throw new MalformedRequestError('invalid-date', 'date must be a date as YYYY-MM-DD');
    const [files, waiting] = await Promise.all([listPaymentFilesOfDate(db, date), countPayoutsToInstruct(db, date)]);
    const mayDownload = consolePermits(session.role, 'download_bank_file');
    const csrf = context.csrfToken(request, reply);
    const downloads = (file: PaymentFileSummaryRow) =>
      file.legacy
        ? 'not kept'
        : mayDownload
          ? html`<a href="${paymentFileHref(file.id, 'csv')}" download="${paymentFileName(file.payout_date, file.sequence, 'csv')}">CSV</a> · <a href="${paymentFileHref(file.id, 'pain.001')}" download="${paymentFileName(file.payout_date, file.sequence, 'pain.001')}" aria-label="pain.001 XML of file ${file.sequence}">pain.001 XML</a>`
          : 'operators and finance';
    return context.page(request, reply, {
      title: `Payment files of ${date}`,
      section: 'payouts',
      body: html`<form method="get" action="/console/payment-files" class="filters">
<label for="date">Payout date</label>
<input type="date" id="date" name="date" value="${date}">
<button type="submit">Show</button>
</form>
${dataTable(
  `Payment files of the payouts made on ${date}, in the order they were written`,
  ['File', 'MsgId', 'Execution date', 'Payouts', 'Written', 'By', 'SHA-256 (pain.001)', 'Download'],
  files.map((file) => [
    file.legacy ? html`0 (before files were stored)` : String(file.sequence),
    file.message_id ?? '—',
    file.requested_execution_date ?? '—',
    fileTotals(file) || 'none',
    formatInstant(file.created_at),
    file.created_by,
    file.pain001_sha256 ? html`<code>${file.pain001_sha256.slice(0, 16)}…</code>` : '—',
    downloads(file),
  ]),
  'none written yet.',
)}
<section aria-labelledby="write-file">
<h2 id="write-file">Payouts waiting for a file</h2>
${
  waiting === 0
    ? html`<p>Every pending payout made on ${date} is in a file.</p>`
    : html`<p>${String(waiting)} pending payout(s) made on ${date} are in no file yet.</p>
${
  mayDownload
    ? actionForm(
        '/console/payment-files',
        csrf,
        'Write the payment file',
        html`<input type="hidden" name="date" value="${date}"><p>Writes a new file holding only these payouts, with its own MsgId; the files above stay as they are.</p>`,
      )
    : html`<p>Operators and finance write payment files.</p>`
}`
}
</section>
<p><a href="/console/payouts?payout_date=${date}">Payouts made on ${date}</a></p>`,
    });
  });

  app.post('/payment-files', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const session = context.requirePermission(request, 'download_bank_file');
    const date = optionalDate((request.body as { date?: string } | undefined)?.date, 'date');
    if (date === undefined) throw new MalformedRequestError('invalid-date', 'date must be a date as YYYY-MM-DD');
    const written = await createPaymentFiles(db, date, { actor: consoleActor(session.email) });
    const notice =
      written.length === 0
        ? `No payout made on ${date} was waiting for a file: nothing written.`
        : `Wrote ${written.map((file) => `file ${file.sequence} (${file.message_id})`).join(', ')} of ${date}.`;
    return context.redirectWithNotice(reply, paymentFilesHref(date), notice);
  });

  app.get<{ Params: { id: string; format: string } }>('/payment-files/:id/:format', async (request, reply) => {
    context.requirePermission(request, 'download_bank_file');
    const file = await paymentFileDownload(db, request.params.id, paymentFileFormat(request.params.format));
    return reply.code(200).header('content-type', file.contentType).header('content-disposition', `attachment; filename="${file.fileName}"`).send(file.content);
  });

  // A payout's page, also shown again when marking it paid or failed is refused.
  const payoutView = async (request: FastifyRequest, reply: FastifyReply, id: string, refusal?: FormRefusal): Promise<ConsolePageView> => {
    const session = context.session(request);
    const payout = isUuid(id) ? await findPayout(db, LIVE_BILLERS, id) : undefined;
    if (!payout) throw new NotFoundError(`Payout ${id}`);
    const [items, billers, paymentFile] = await Promise.all([
      listPayoutItemsNamed(db, payout.id),
      findClientNames(db, [payout.biller_client_id]),
      findPaymentFileOfPayout(db, payout.id),
    ]);
    const csrf = context.csrfToken(request, reply);
    const maySettle = consolePermits(session.role, 'settle_payout') && payout.status === 'pending';
    const total = items.reduce((sum, item) => sum + item.amount, 0);
    const paidEntered = enteredIn(refusal, `/console/payouts/${payout.id}/paid`);
    const failedEntered = enteredIn(refusal, `/console/payouts/${payout.id}/failed`);
    return {
      title: `Payout ${payout.reference}`,
      section: 'payouts',
      body: html`<dl class="facts">
<dt>Payout</dt><dd>${payout.id}</dd>
<dt>Biller</dt><dd>${billers.get(payout.biller_client_id) ?? payout.biller_client_id}</dd>
<dt>Amount</dt><dd>${formatMoney(payout.amount, payout.currency)}</dd>
<dt>Currency</dt><dd>${payout.currency}</dd>
<dt>Status</dt><dd>${statusBadge(payout.status)}</dd>
<dt>Reference</dt><dd>${payout.reference}</dd>
<dt>Beneficiary account</dt><dd>${payout.account_holder_name}, sort code ${payout.sort_code}, account ${maskedAccountNumber(payout.account_number)}</dd>
<dt>Payout date</dt><dd>${payout.payout_date}</dd>
<dt>Payment file</dt><dd>${
        paymentFile
          ? html`<a href="${paymentFilesHref(paymentFile.payout_date)}">${paymentFile.legacy ? 'made before payment files were stored' : `file ${paymentFile.sequence} of ${paymentFile.payout_date}, ${paymentFile.message_id}`}</a>`
          : payout.status === 'pending'
            ? html`not instructed yet (<a href="${paymentFilesHref(payout.payout_date)}">payment files of ${payout.payout_date}</a>)`
            : 'none'
      }</dd>
<dt>Created</dt><dd>${formatInstant(payout.created_at)}</dd>
<dt>Paid</dt><dd>${formatInstant(payout.paid_at)}</dd>
<dt>Failed</dt><dd>${formatInstant(payout.failed_at)}</dd>
${payout.failure_reason ? html`<dt>Failure reason</dt><dd>${payout.failure_reason}</dd>` : ''}
</dl>
${
  maySettle
    ? html`<section aria-labelledby="settle">
<h2 id="settle">Record the bank's answer</h2>
${actionForm(
  `/console/payouts/${payout.id}/paid`,
  csrf,
  'Mark paid',
  html`<label for="paid-reason">What shows the transfer was made (optional, e.g. the bank statement line)</label>
<input type="text" id="paid-reason" name="reason" maxlength="${REASON_MAX_LENGTH}" value="${paidEntered.value('reason')}"${paidEntered.invalid('paid-reason')}>`,
)}
${actionForm(
  `/console/payouts/${payout.id}/failed`,
  csrf,
  'Mark failed',
  html`<label for="failed-reason">Why the bank rejected the transfer (required: its payments will be paid out again)</label>
<input type="text" id="failed-reason" name="reason" maxlength="${REASON_MAX_LENGTH}" required value="${failedEntered.value('reason')}"${failedEntered.invalid('failed-reason')}>`,
)}
</section>`
    : ''
}
<section aria-labelledby="items">
<h2 id="items">Items</h2>
${dataTable(
  `What each payment request adds to or takes from the payout (net ${formatMoney(total, payout.currency)})`,
  ['Employee (works number)', 'Payroll', 'Payment reference', 'Kind', 'Amount', 'Payment request id'],
  items.map((item) => [
    formatEmployee({ name: item.employee_name, worksNumber: item.payroll_reference, id: item.employee_id }),
    payrollName(item),
    `${item.deduction_reference_number === null ? '—' : deductionPaymentReference(item.deduction_reference_number)}${item.mandate_reference ? ` (mandate ${item.mandate_reference})` : ''}`,
    item.kind === 'payment_collected' ? 'Collection' : 'Reversal',
    formatMoney(item.amount, payout.currency),
    html`<code>${item.payment_request_id}</code>`,
  ]),
  'no items.',
)}
</section>
<p><a href="/console/payouts">All payouts</a></p>`,
    };
  };
  app.get<{ Params: { id: string } }>('/payouts/:id', async (request, reply) => context.page(request, reply, await payoutView(request, reply, request.params.id)));

  /** Marking a payout paid or failed, refused: its page again, the reason as typed. */
  const settleForm = (refused: string, fieldId: string): ConsoleFormRoute => ({
    refused,
    page: (request, reply, refusal) => payoutView(request, reply, (request.params as { id: string }).id, refusal),
    fieldId: () => fieldId,
    fieldOfCode: { 'reason-required': 'reason', 'reason-too-long': 'reason' },
  });

  app.post<{ Params: { id: string } }>(
    '/payouts/:id/paid',
    { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: settleForm('The payout was not marked paid', 'paid-reason') } },
    async (request, reply) => {
      const session = context.requirePermission(request, 'settle_payout');
      const reason = settlementReason(request.body);
      const paid = await db.transaction().execute((trx) => markPayoutPaid(trx, request.params.id, { actor: consoleActor(session.email), reason }));
      return context.redirectWithNotice(reply, `/console/payouts/${paid.id}`, `Payout ${paid.reference} recorded as paid.`);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/payouts/:id/failed',
    { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: settleForm('The payout was not marked failed', 'failed-reason') } },
    async (request, reply) => {
      const session = context.requirePermission(request, 'settle_payout');
      const reason = settlementReason(request.body);
      const failed = await db.transaction().execute((trx) => markPayoutFailed(trx, request.params.id, { actor: consoleActor(session.email), reason }));
      return context.redirectWithNotice(reply, `/console/payouts/${failed.id}`, `Payout ${failed.reference} recorded as failed: its payments will be paid out again.`);
    },
  );
};
