import multipart from '@fastify/multipart';
import type { z } from 'zod';
import { consoleActor } from '../../audit/audit-service.ts';
import { listBankStatements, listCreditsToMatch, listRemittanceResources, matchingPolicyOf, showBankCredit, showRemittance } from '../../cash/cash-service.ts';
import type { remittanceMatchSchema } from '../../cash/cash-resource.ts';
import { matchCreditManually, unmatch, type Allocation } from '../../cash/matching-service.ts';
import { remittanceStatusSchema } from '../../cash/remittance-service.ts';
import { readStatement, recordStatement, type ReadStatement, type StatementImportOutcome } from '../../cash/statement-import-service.ts';
import type { RemittanceStatus } from '../../db/tables.ts';
import { currencyExponent } from '../../money/currency.ts';
import { MAX_EXACT_MINOR_UNITS } from '../../money/major-units.ts';
import { ConflictError, DomainError, InvalidError, MalformedRequestError, NotFoundError } from '../../shared/domain-errors.ts';
import { isoDateSchema, isUuid } from '../../shared/schemas.ts';
import { countCreditsToMatch, countRemittancesByStatus, findMatchWithCurrency, listOwedRemittancesIn } from '../console-cash-repository.ts';
import { formatInstant, formatMoney } from '../console-format.ts';
import { actionForm, dataTable, statusBadge } from '../console-layout.ts';
import { CONSOLE_FORM_LIMIT_BYTES, verifyConsoleCsrfToken, type ConsolePageModule } from '../console-plugin.ts';
import { consolePermits } from '../console-permissions.ts';
import { html, type Html } from '../html.ts';

type MatchResource = z.infer<typeof remittanceMatchSchema>;

/** As many split rows as a person reasonably fills in; larger splits go through the API. */
export const MANUAL_ALLOCATION_ROWS = 3;
/** As the API's manual match and unmatch bodies allow. */
const REASON_MAX_LENGTH = 500;
const STATEMENTS_LISTED = 50;
const STATEMENTS_ON_OVERVIEW = 5;
const CREDITS_LISTED = 200;
const REMITTANCES_LISTED = 200;
const REMITTANCES_OFFERED = 200;
const REMITTANCE_STATUSES = remittanceStatusSchema.options;

/**
 * Integer minor units from an amount a person typed in major units ("248", "248.5", "248.50" GBP ->
 * 24 850), by moving the decimal point in the text: no float ever holds the money. Refuses anything
 * else (signs, separators, more decimals than the currency has, zero, more than 15 digits).
 */
export function minorUnitsOfTypedAmount(text: string, currency: string): number {
  const exponent = currencyExponent(currency);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!match) throw new InvalidError('amount-invalid', `"${text}" is not an amount: write it like 1250.50, without a sign or separators`);
  const [, whole = '', fraction = ''] = match;
  if (fraction.length > exponent) {
    throw new InvalidError('amount-invalid', `${text} has more decimal places than ${currency} allows (${exponent === 0 ? 'none' : `at most ${exponent}`})`);
  }
  const digits = `${whole}${fraction.padEnd(exponent, '0')}`.replace(/^0+/, '');
  if (digits === '') throw new InvalidError('amount-invalid', 'an amount must be more than zero');
  if (digits.length > String(MAX_EXACT_MINOR_UNITS).length) throw new InvalidError('amount-invalid', `${text} ${currency} is larger than any remittance`);
  return Number(digits);
}

/** The line a person reads after an upload: what came in, what the rules matched, what waits for them. */
export function describeImport(outcome: StatementImportOutcome): string {
  const { statement } = outcome;
  const name = `Statement ${statement.statement_id} (${statement.format})`;
  if (outcome.replayed) return `${name} was already imported, nothing changed.`;
  const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  const matching = outcome.matching;
  const byRule = matching ? Object.entries(matching.byRule).map(([rule, count]) => `${rule} ${count}`) : [];
  const parts = [
    `${plural(outcome.newCredits, 'new credit', 'new credits')}${statement.credits_already_imported > 0 ? ` (${statement.credits_already_imported} already imported from an earlier statement)` : ''}`,
    `${plural(matching?.matches ?? 0, 'match', 'matches')} by the rules${byRule.length > 0 ? ` (${byRule.join(', ')})` : ''}`,
    `${plural(matching?.unmatchedCredits ?? 0, 'credit', 'credits')} left in the exceptions queue`,
  ];
  return `${name} imported: ${parts.join('; ')}.`;
}

function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

function reasonOf(body: unknown, required: boolean): string | null {
  const reason = field(body, 'reason').trim();
  if (reason.length > REASON_MAX_LENGTH) throw new InvalidError('reason-too-long', `The reason must be at most ${REASON_MAX_LENGTH} characters`);
  if (reason === '') {
    if (required) throw new InvalidError('reason-required', 'Say why the match is taken back');
    return null;
  }
  return reason;
}

/** The allocation rows of the manual match form; a row left blank is skipped, a half-filled one refused. */
function allocationsOf(body: unknown, currency: string): Allocation[] {
  const allocations: Allocation[] = [];
  for (let row = 1; row <= MANUAL_ALLOCATION_ROWS; row++) {
    const remittance = field(body, `remittance_${row}`).trim();
    const amount = field(body, `amount_${row}`).trim();
    if (remittance === '' && amount === '') continue;
    if (remittance === '' || amount === '') throw new InvalidError('match-invalid', `Row ${row}: choose a remittance and give an amount, or leave both empty`);
    const [payrollId = '', payDate = '', ...rest] = remittance.split('/');
    if (!isUuid(payrollId) || !isoDateSchema.safeParse(payDate).success || rest.length > 0) throw new InvalidError('match-invalid', `Row ${row}: choose a remittance from the list`);
    allocations.push({ payrollId, payDate, amount: minorUnitsOfTypedAmount(amount, currency) });
  }
  if (allocations.length === 0) throw new InvalidError('match-invalid', 'Choose at least one remittance and amount');
  return allocations;
}

function optionalDate(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = isoDateSchema.safeParse(value);
  if (!parsed.success) throw new MalformedRequestError('invalid-date', 'pay_date must be a date as YYYY-MM-DD');
  return parsed.data;
}

function statusFilter(value: string | undefined): RemittanceStatus | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = remittanceStatusSchema.safeParse(value);
  if (!parsed.success) throw new MalformedRequestError('invalid-status', `status must be one of ${REMITTANCE_STATUSES.join(', ')}`);
  return parsed.data;
}

const remittanceHref = (payrollId: string, payDate: string) => `/console/cash/remittances/${payrollId}/${payDate}`;
const creditHref = (creditId: string) => `/console/cash/credits/${creditId}`;

/** Where an unmatch form returns to: a fixed choice, never a URL from the form. */
type UnmatchReturn = 'credit' | 'remittance';

function unmatchForm(match: MatchResource, csrf: string, returnTo: UnmatchReturn): Html {
  const id = `unmatch-reason-${match.id}`;
  return actionForm(
    `/console/cash/matches/${match.id}/unmatch`,
    csrf,
    'Unmatch',
    html`<input type="hidden" name="return_to" value="${returnTo}">
<label for="${id}">Why this match is taken back (required)</label>
<input type="text" id="${id}" name="reason" maxlength="${REASON_MAX_LENGTH}" required>`,
  );
}

function matchesTable(caption: string, matches: readonly MatchResource[], currency: string, actions: { csrf: string; returnTo: UnmatchReturn } | null, first: 'credit' | 'remittance'): Html {
  return dataTable(
    caption,
    [first === 'credit' ? 'Credit' : 'Remittance', 'Amount', 'Rule', 'Flagged', 'Matched by', 'Matched', 'Taken back', ...(actions ? ['Action'] : [])],
    matches.map((match) => [
      first === 'credit'
        ? html`<a href="${creditHref(match.bank_credit_id)}">${match.bank_credit_id}</a>`
        : html`<a href="${remittanceHref(match.payroll_id, match.pay_date)}">Payroll ${match.payroll_id}, pay date ${match.pay_date}</a>`,
      formatMoney(match.amount, currency),
      match.rule,
      match.flagged ? 'Yes: within the tolerance, not exact' : 'No',
      match.matched_by,
      formatInstant(match.matched_at),
      match.unmatched_at ? html`${formatInstant(match.unmatched_at)} by ${match.unmatched_by ?? '—'}: ${match.unmatch_reason ?? ''}` : 'Live',
      ...(actions ? [match.unmatched_at ? '' : unmatchForm(match, actions.csrf, actions.returnTo)] : []),
    ]),
    'none yet.',
  );
}

/**
 * Cash: bank statements in (uploaded, streamed to the parser), the exceptions queue of credits no
 * rule matched, matching by hand and taking matches back, and each payroll pay date's remittance.
 * Operators and finance act, audited as the person signed in; everyone reads.
 */
export const registerCashPages: ConsolePageModule = (app, context) => {
  const { db, config } = context.deps;

  app.get('/cash', async (request, reply) => {
    const session = context.session(request);
    const [byStatus, creditsToMatch, statements] = await Promise.all([countRemittancesByStatus(db), countCreditsToMatch(db), listBankStatements(db, STATEMENTS_ON_OVERVIEW)]);
    return context.page(request, reply, {
      title: 'Cash',
      section: 'cash',
      body: html`<ul class="links">
<li><a href="/console/cash/credits">Credits to match (${creditsToMatch})</a></li>
<li><a href="/console/cash/statements">Bank statements${consolePermits(session.role, 'import_statement') ? ': import one' : ''}</a></li>
<li><a href="/console/cash/remittances">Remittances</a></li>
</ul>
${dataTable(
  'Remittances by status',
  ['Status', 'Remittances'],
  REMITTANCE_STATUSES.map((status) => [html`<a href="/console/cash/remittances?status=${status}">${statusBadge(status)}</a>`, String(byStatus.get(status) ?? 0)]),
)}
${dataTable(
  'Latest bank statements',
  ['Imported', 'Statement', 'Format', 'Credits', 'Credits total'],
  statements.map((statement) => [formatInstant(statement.imported_at), statement.statement_id, statement.format, String(statement.credits), formatMoney(statement.credits_total, statement.currency)]),
  'none imported yet.',
)}`,
    });
  });

  app.get('/cash/statements', async (request, reply) => {
    const session = context.session(request);
    const statements = await listBankStatements(db, STATEMENTS_LISTED);
    const csrf = context.csrfToken(request, reply);
    return context.page(request, reply, {
      title: 'Bank statements',
      section: 'cash',
      body: html`${consolePermits(session.role, 'import_statement')
        ? html`<section aria-labelledby="import">
<h2 id="import">Import a statement</h2>
<p>camt.053 (end of day) or camt.054 (intraday) XML, or the CSV layout. The file is checked whole first: a refused file imports nothing. The same file again changes nothing.</p>
<form method="post" action="/console/cash/statements" enctype="multipart/form-data" class="action">
<input type="hidden" name="_csrf" value="${csrf}">
<label for="statement-file">Statement file</label>
<input type="file" id="statement-file" name="statement" accept=".xml,.csv" required>
<button type="submit">Import statement</button>
</form>
</section>`
        : ''}
${dataTable(
  `Bank statements, newest first (at most ${STATEMENTS_LISTED})`,
  ['Imported', 'Statement', 'Format', 'File', 'Credits', 'Credits total', 'Already imported', 'Debits ignored', 'Imported by'],
  statements.map((statement) => [
    formatInstant(statement.imported_at),
    statement.statement_id,
    statement.format,
    statement.file_name ?? '—',
    String(statement.credits),
    formatMoney(statement.credits_total, statement.currency),
    String(statement.credits_already_imported),
    String(statement.debits_ignored),
    statement.imported_by,
  ]),
  'none imported yet.',
)}
<p><a href="/console/cash">Cash overview</a></p>`,
    });
  });

  // Multipart is read only here, streamed: the file goes to the parser part by part and is never held whole.
  app.register(async (upload) => {
    await upload.register(multipart, {
      limits: { fields: 1, fieldSize: 1_024, files: 1, parts: 2, fileSize: config.STATEMENT_LIMIT_BYTES, headerPairs: 100 },
    });
    upload.post('/cash/statements', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleCsrfInMultipart: true } }, async (request, reply) => {
      if (!request.isMultipart()) {
        // An ordinary form carries no file; its token and the role are still checked first, as for any action.
        await verifyConsoleCsrfToken(app, request, field(request.body, '_csrf') || undefined);
        context.requirePermission(request, 'import_statement');
        throw new MalformedRequestError('statement-missing', 'Choose a statement file to upload');
      }
      let token: string | undefined;
      let read: ReadStatement | undefined;
      let session: ReturnType<typeof context.requirePermission> | undefined;
      // The form puts its token before the file, so it is checked before any byte of the file is read.
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.fieldname === '_csrf' && typeof part.value === 'string') token = part.value;
          continue;
        }
        await verifyConsoleCsrfToken(app, request, token);
        session = context.requirePermission(request, 'import_statement');
        if (part.fieldname !== 'statement' || read !== undefined) throw new MalformedRequestError('statement-missing', 'Upload one statement file');
        try {
          read = await readStatement(part.file, { maxBytes: config.STATEMENT_LIMIT_BYTES, fileName: part.filename || null });
        } catch (error) {
          // Let the rest of the upload flow past, so the browser reads the refusal instead of a reset connection.
          part.file.resume();
          throw error;
        }
      }
      await verifyConsoleCsrfToken(app, request, token);
      session ??= context.requirePermission(request, 'import_statement');
      if (read === undefined) throw new MalformedRequestError('statement-missing', 'Choose a statement file to upload');
      const statement = read;
      const policy = await matchingPolicyOf(db, config);
      const actor = consoleActor(session.email);
      const outcome = await db.transaction().execute((trx) => recordStatement(trx, { ...statement, actor, policy }));
      return context.redirectWithNotice(reply, '/console/cash/statements', describeImport(outcome));
    });
  });

  app.get('/cash/credits', async (request, reply) => {
    const credits = await listCreditsToMatch(db, CREDITS_LISTED);
    return context.page(request, reply, {
      title: 'Credits to match',
      section: 'cash',
      body: html`<p>Credits with money no rule could match to a remittance, oldest first. Open one to match it by hand.</p>
${dataTable(
  `The exceptions queue (at most ${CREDITS_LISTED})`,
  ['Credit', 'Booking date', 'Unmatched of total', 'Reference', 'Debtor'],
  credits.map((credit) => [
    html`<a href="${creditHref(credit.id)}">${credit.bank_reference}</a>`,
    credit.booking_date,
    `${formatMoney(credit.unmatched_amount, credit.currency)} of ${formatMoney(credit.amount, credit.currency)}`,
    credit.remittance_information ?? '—',
    credit.debtor_name ?? '—',
  ]),
  'every credit is matched.',
)}
<p><a href="/console/cash">Cash overview</a></p>`,
    });
  });

  app.get<{ Params: { id: string } }>('/cash/credits/:id', async (request, reply) => {
    const session = context.session(request);
    const { credit, matches } = await showBankCredit(db, request.params.id);
    const mayMatch = consolePermits(session.role, 'match_credit');
    const csrf = context.csrfToken(request, reply);
    const owed = mayMatch && credit.unmatched_amount > 0 ? await listOwedRemittancesIn(db, credit.currency, REMITTANCES_OFFERED) : [];
    const exponent = currencyExponent(credit.currency);
    const rows = Array.from({ length: MANUAL_ALLOCATION_ROWS }, (_, index) => index + 1);
    const matchForm = html`<section aria-labelledby="match">
<h2 id="match">Match by hand</h2>
${owed.length === 0
  ? html`<p class="empty">No remittance in ${credit.currency} is owed money.</p>`
  : html`<form method="post" action="/console/cash/credits/${credit.id}/matches" class="action">
<input type="hidden" name="_csrf" value="${csrf}">
<p>Up to ${MANUAL_ALLOCATION_ROWS} remittances; the amounts (in ${credit.currency}) may add up to at most ${formatMoney(credit.unmatched_amount, credit.currency)}. Leave a row empty to skip it.</p>
${rows.map(
  (row) => html`<fieldset>
<legend>Allocation ${row}${row === 1 ? '' : ' (optional)'}</legend>
<label for="remittance_${row}">Remittance</label>
<select id="remittance_${row}" name="remittance_${row}"${row === 1 ? html` required` : ''}>
<option value="">Choose a payroll pay date</option>
${owed.map(
  (remittance) =>
    html`<option value="${remittance.payroll_id}/${remittance.pay_date}">${remittance.employer_name} · pay date ${remittance.pay_date} · ${remittance.payment_reference} · owes ${formatMoney(remittance.expected - remittance.received, remittance.currency)}</option>`,
)}
</select>
<label for="amount_${row}">Amount in ${credit.currency}</label>
<input type="text" id="amount_${row}" name="amount_${row}" inputmode="decimal" pattern="${exponent === 0 ? '[0-9]+' : `[0-9]+(\\.[0-9]{1,${exponent}})?`}"${row === 1 ? html` required` : ''}>
</fieldset>`,
)}
<label for="match-reason">Why (optional, e.g. the employer's email)</label>
<input type="text" id="match-reason" name="reason" maxlength="${REASON_MAX_LENGTH}">
<button type="submit">Match</button>
</form>`}
</section>`;
    return context.page(request, reply, {
      title: `Credit ${credit.bank_reference}`,
      section: 'cash',
      body: html`<dl class="facts">
<dt>Credit</dt><dd>${credit.id}</dd>
<dt>Bank reference</dt><dd>${credit.bank_reference}</dd>
<dt>Amount</dt><dd>${formatMoney(credit.amount, credit.currency)}</dd>
<dt>Matched</dt><dd>${formatMoney(credit.matched_amount, credit.currency)}</dd>
<dt>Unmatched</dt><dd>${formatMoney(credit.unmatched_amount, credit.currency)}</dd>
<dt>Booking date</dt><dd>${credit.booking_date}</dd>
<dt>Value date</dt><dd>${credit.value_date ?? '—'}</dd>
<dt>Reference</dt><dd>${credit.remittance_information ?? '—'}</dd>
<dt>Debtor</dt><dd>${credit.debtor_name ?? '—'}${credit.debtor_account ? `, account ${credit.debtor_account}` : ''}</dd>
</dl>
<section aria-labelledby="matches">
<h2 id="matches">Matches</h2>
${matchesTable('Matches of this credit, live and taken back', matches, credit.currency, mayMatch ? { csrf, returnTo: 'credit' } : null, 'remittance')}
</section>
${mayMatch && credit.unmatched_amount > 0 ? matchForm : ''}
<p><a href="/console/cash/credits">Credits to match</a></p>`,
    });
  });

  app.post<{ Params: { id: string } }>('/cash/credits/:id/matches', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const session = context.requirePermission(request, 'match_credit');
    const { credit } = await showBankCredit(db, request.params.id);
    const allocations = allocationsOf(request.body, credit.currency);
    const reason = reasonOf(request.body, false);
    const matches = await matchCreditManually(db, consoleActor(session.email), await matchingPolicyOf(db, config), { creditId: credit.id, allocations, reason });
    const total = matches.reduce((sum, match) => sum + match.amount, 0);
    return context.redirectWithNotice(reply, creditHref(credit.id), `Matched ${formatMoney(total, credit.currency)} of credit ${credit.bank_reference} to ${matches.length === 1 ? '1 remittance' : `${matches.length} remittances`}.`);
  });

  app.post<{ Params: { id: string } }>('/cash/matches/:id/unmatch', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const session = context.requirePermission(request, 'match_credit');
    const match = isUuid(request.params.id) ? await findMatchWithCurrency(db, request.params.id) : undefined;
    if (!match) throw new NotFoundError(`Match ${request.params.id}`);
    const reason = reasonOf(request.body, true)!;
    try {
      await unmatch(db, consoleActor(session.email), await matchingPolicyOf(db, config), { matchId: match.id, reason });
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unmatch-would-unfund-payouts') {
        const members = (error.members ?? {}) as { paid_out?: number; received_without_match?: number };
        throw new ConflictError(
          'unmatch-would-unfund-payouts',
          `Not taken back: this remittance's money is already paid out (${formatMoney(members.paid_out ?? 0, match.currency)}); without this match it would have received only ${formatMoney(members.received_without_match ?? 0, match.currency)}.`,
          { members: error.members, cause: error },
        );
      }
      throw error;
    }
    const back: UnmatchReturn = field(request.body, 'return_to') === 'remittance' ? 'remittance' : 'credit';
    return context.redirectWithNotice(
      reply,
      back === 'remittance' ? remittanceHref(match.payroll_id, match.pay_date) : creditHref(match.bank_credit_id),
      `Match of ${formatMoney(match.amount, match.currency)} taken back: the credit's money waits to be matched again.`,
    );
  });

  app.get<{ Querystring: { status?: string; pay_date?: string } }>('/cash/remittances', async (request, reply) => {
    const status = statusFilter(request.query.status);
    const payDate = optionalDate(request.query.pay_date);
    const remittances = await listRemittanceResources(db, { limit: REMITTANCES_LISTED, ...(status ? { status } : {}), ...(payDate ? { payDate } : {}) });
    return context.page(request, reply, {
      title: 'Remittances',
      section: 'cash',
      body: html`<form method="get" action="/console/cash/remittances" class="filters">
<label for="status">Status</label>
<select id="status" name="status">
<option value=""${status ? '' : html` selected`}>Any</option>
${REMITTANCE_STATUSES.map((option) => html`<option value="${option}"${option === status ? html` selected` : ''}>${option}</option>`)}
</select>
<label for="pay_date">Pay date</label>
<input type="date" id="pay_date" name="pay_date" value="${payDate ?? ''}">
<button type="submit">Filter</button>
</form>
${dataTable(
  `Remittances, newest pay date first${status ? `, ${status}` : ''}${payDate ? `, pay date ${payDate}` : ''} (at most ${REMITTANCES_LISTED})`,
  ['Pay date', 'Employer', 'Payroll', 'Reference', 'Expected', 'Received', 'Owed', 'Status', 'Due date'],
  remittances.map((remittance) => [
    html`<a href="${remittanceHref(remittance.payroll_id, remittance.pay_date)}">${remittance.pay_date}</a>`,
    remittance.employer_name,
    remittance.payroll_name,
    remittance.payment_reference,
    formatMoney(remittance.expected, remittance.currency),
    formatMoney(remittance.received, remittance.currency),
    formatMoney(remittance.owed, remittance.currency),
    statusBadge(remittance.status),
    remittance.due_date,
  ]),
  'no remittances match.',
)}
<p><a href="/console/cash">Cash overview</a></p>`,
    });
  });

  app.get<{ Params: { payrollId: string; payDate: string } }>('/cash/remittances/:payrollId/:payDate', async (request, reply) => {
    const session = context.session(request);
    const { payrollId, payDate } = request.params;
    if (!isoDateSchema.safeParse(payDate).success) throw new NotFoundError(`Remittance of payroll ${payrollId} pay date ${payDate}`);
    const { remittance, matches } = await showRemittance(db, payrollId, payDate);
    const [named] = await listRemittanceResources(db, { payrollId, payDate, limit: 1 });
    const csrf = context.csrfToken(request, reply);
    const money = (minor: number | null) => (minor === null ? 'not reported yet' : formatMoney(minor, remittance.currency));
    return context.page(request, reply, {
      title: `Remittance ${remittance.payment_reference}`,
      section: 'cash',
      body: html`<dl class="facts">
<dt>Employer</dt><dd>${named?.employer_name ?? remittance.employer_id}</dd>
<dt>Payroll</dt><dd>${named?.payroll_name ?? remittance.payroll_id}</dd>
<dt>Pay date</dt><dd>${remittance.pay_date}</dd>
<dt>Reference</dt><dd>${remittance.payment_reference}</dd>
<dt>Requested</dt><dd>${money(remittance.requested)}</dd>
<dt>Deducted</dt><dd>${money(remittance.deducted)}</dd>
<dt>Expected</dt><dd>${money(remittance.expected)}</dd>
<dt>Received</dt><dd>${money(remittance.received)}</dd>
<dt>Owed</dt><dd>${money(remittance.owed)}</dd>
<dt>Status</dt><dd>${statusBadge(remittance.status)}</dd>
<dt>Due date</dt><dd>${remittance.due_date}</dd>
</dl>
<section aria-labelledby="matches">
<h2 id="matches">Matches</h2>
${matchesTable('Credits matched to this remittance, live and taken back', matches, remittance.currency, consolePermits(session.role, 'match_credit') ? { csrf, returnTo: 'remittance' } : null, 'credit')}
</section>
<p><a href="/console/cash/remittances">All remittances</a></p>`,
    });
  });
};
