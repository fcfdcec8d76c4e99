import { consoleActor } from '../../audit/audit-service.ts';
import { maskedAccountNumber } from '../../payouts/bank-account-details.ts';
import { findPayout, listPayoutItems, listPayouts, type PayoutAudience } from '../../payouts/payout-repository.ts';
import { PAYOUT_STATUSES } from '../../payouts/payout-resource.ts';
import { markPayoutFailed, markPayoutPaid, PAYOUT_BANK_FILE_FORMATS, payoutBankFileIn, type PayoutBankFileFormat } from '../../payouts/payout-service.ts';
import { InvalidError, MalformedRequestError, NotFoundError } from '../../shared/domain-errors.ts';
import { DEFAULT_PAGE_SIZE, pageOf } from '../../shared/paging.ts';
import { isoDateSchema, isUuid } from '../../shared/schemas.ts';
import { findClientNames } from '../console-money-repository.ts';
import { formatInstant, formatMoney } from '../console-format.ts';
import { actionForm, dataTable, statusBadge } from '../console-layout.ts';
import { CONSOLE_FORM_LIMIT_BYTES, type ConsolePageModule } from '../console-plugin.ts';
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

function bankFileHref(date: string, format: PayoutBankFileFormat = 'csv'): string {
  return format === 'csv' ? `/console/payouts/bank-file?date=${date}` : `/console/payouts/bank-file?date=${date}&format=${format}`;
}

function bankFileFormat(value: string | undefined): PayoutBankFileFormat {
  if (value === undefined || value === '') return 'csv';
  if (!(PAYOUT_BANK_FILE_FORMATS as readonly string[]).includes(value)) {
    throw new MalformedRequestError('invalid-format', `format must be one of ${PAYOUT_BANK_FILE_FORMATS.join(', ')}`);
  }
  return value as PayoutBankFileFormat;
}

/**
 * Payouts across live billers, each with its items, and finance recording the bank's answer (paid or
 * failed) with the same use cases the API calls, audited as the person signed in.
 */
export const registerPayoutPages: ConsolePageModule = (app, context) => {
  const { db } = context.deps;

  app.get<{ Querystring: PayoutListQuery }>('/payouts', async (request, reply) => {
    const session = context.session(request);
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
    const billers = await findClientNames(db, items.map((row) => row.biller_client_id));
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
<h2 id="bank-files">Bank files</h2>
${mayDownload
  ? payoutDates.length === 0
    ? html`<p class="empty">No payout dates on this page.</p>`
    : html`<ul>${payoutDates.map((date) => html`<li><a href="${bankFileHref(date)}" download>Bank file of the payouts made on ${date}</a> · <a href="${bankFileHref(date, 'pain.001')}" download aria-label="pain.001 XML of the payouts made on ${date}">pain.001 XML</a></li>`)}</ul>`
  : html`<p>Bank files hold account numbers: operators and finance download them.</p>`}
</section>`,
    });
  });

  app.get<{ Querystring: { date?: string; format?: string } }>('/payouts/bank-file', async (request, reply) => {
    context.requirePermission(request, 'download_bank_file');
    const date = optionalDate(request.query.date, 'date');
    if (date === undefined) throw new MalformedRequestError('invalid-date', 'date must be a date as YYYY-MM-DD');
    const file = await payoutBankFileIn(db, date, bankFileFormat(request.query.format));
    return reply
      .code(200)
      .header('content-type', file.contentType)
      .header('content-disposition', `attachment; filename="${file.fileName}"`)
      .send(file.content);
  });

  app.get<{ Params: { id: string } }>('/payouts/:id', async (request, reply) => {
    const session = context.session(request);
    const { id } = request.params;
    const payout = isUuid(id) ? await findPayout(db, LIVE_BILLERS, id) : undefined;
    if (!payout) throw new NotFoundError(`Payout ${id}`);
    const [items, billers] = await Promise.all([listPayoutItems(db, payout.id), findClientNames(db, [payout.biller_client_id])]);
    const csrf = context.csrfToken(request, reply);
    const maySettle = consolePermits(session.role, 'settle_payout') && payout.status === 'pending';
    const total = items.reduce((sum, item) => sum + item.amount, 0);
    return context.page(request, reply, {
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
<dt>Created</dt><dd>${formatInstant(payout.created_at)}</dd>
<dt>Paid</dt><dd>${formatInstant(payout.paid_at)}</dd>
<dt>Failed</dt><dd>${formatInstant(payout.failed_at)}</dd>
${payout.failure_reason ? html`<dt>Failure reason</dt><dd>${payout.failure_reason}</dd>` : ''}
</dl>
${maySettle
  ? html`<section aria-labelledby="settle">
<h2 id="settle">Record the bank's answer</h2>
${actionForm(
  `/console/payouts/${payout.id}/paid`,
  csrf,
  'Mark paid',
  html`<label for="paid-reason">What shows the transfer was made (optional, e.g. the bank statement line)</label>
<input type="text" id="paid-reason" name="reason" maxlength="${REASON_MAX_LENGTH}">`,
)}
${actionForm(
  `/console/payouts/${payout.id}/failed`,
  csrf,
  'Mark failed',
  html`<label for="failed-reason">Why the bank rejected the transfer (required: its payments will be paid out again)</label>
<input type="text" id="failed-reason" name="reason" maxlength="${REASON_MAX_LENGTH}" required>`,
)}
</section>`
  : ''}
<section aria-labelledby="items">
<h2 id="items">Items</h2>
${dataTable(
  `What each payment request adds to or takes from the payout (net ${formatMoney(total, payout.currency)})`,
  ['Payment request', 'Kind', 'Amount'],
  items.map((item) => [item.payment_request_id, item.kind === 'payment_collected' ? 'Collection' : 'Reversal', formatMoney(item.amount, payout.currency)]),
  'no items.',
)}
</section>
<p><a href="/console/payouts">All payouts</a></p>`,
    });
  });

  app.post<{ Params: { id: string } }>('/payouts/:id/paid', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const session = context.requirePermission(request, 'settle_payout');
    const reason = settlementReason(request.body);
    const paid = await db
      .transaction()
      .execute((trx) => markPayoutPaid(trx, request.params.id, { actor: consoleActor(session.email), reason }));
    return context.redirectWithNotice(reply, `/console/payouts/${paid.id}`, `Payout ${paid.reference} recorded as paid.`);
  });

  app.post<{ Params: { id: string } }>('/payouts/:id/failed', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const session = context.requirePermission(request, 'settle_payout');
    const reason = settlementReason(request.body);
    const failed = await db
      .transaction()
      .execute((trx) => markPayoutFailed(trx, request.params.id, { actor: consoleActor(session.email), reason }));
    return context.redirectWithNotice(reply, `/console/payouts/${failed.id}`, `Payout ${failed.reference} recorded as failed: its payments will be paid out again.`);
  });
};
