import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { cliActor, clientActor, consoleActor, describeActor } from '../../../platform/audit/audit-service.ts';
import {
  listBankStatementEntries,
  listBankStatements,
  listCreditsToMatch,
  listRemittanceResources,
  listReversalsToPlace,
  matchingPolicyOf,
  showBankCredit,
  showBankStatement,
  showRemittance,
} from '../../../settlement/cash/cash-service.ts';
import {
  setAsideCategorySchema,
  statementEntryOutcomeSchema,
  toBankCreditResource,
  type bankCreditSchema,
  type bankStatementSchema,
  type remittanceMatchSchema,
} from '../../../settlement/cash/cash-resource.ts';
import { restoreCredit, SET_ASIDE_CATEGORIES, setCreditAside } from '../../../settlement/cash/credit-decision-service.ts';
import { matchCreditManually, unmatch, type Allocation } from '../../../settlement/cash/matching-service.ts';
import { remittanceStatusSchema } from '../../../settlement/cash/remittance-service.ts';
import { resolveReversal } from '../../../settlement/cash/reversal-service.ts';
import {
  readStatement,
  recordStatement,
  type ReadStatement,
  type StatementImportOutcome,
  type StatementRecordOutcome,
} from '../../../settlement/cash/statement-import-service.ts';
import type { AuditActorKind, RemittanceStatus, SetAsideCategory, StatementEntryOutcome } from '../../../platform/db/tables.ts';
import type { ProblemCode } from '../../../platform/shared/problem-codes.ts';
import { HttpProblem } from '../../http/problem.ts';
import { currencyExponent } from '../../../platform/money/currency.ts';
import { ConflictError, DomainError, InvalidError, MalformedRequestError, NotFoundError, type FieldError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema, isUuid } from '../../../platform/shared/schemas.ts';
import {
  countCreditsToMatch,
  countRemittancesByStatus,
  countReversalsToPlace,
  findMatchWithCurrency,
  findReversalToPlace,
  listCreditsSetAside,
  listCreditStateChanges,
  listOwedRemittancesIn,
  listReversibleCreditsFor,
} from '../console-cash-repository.ts';
import { formatInstant } from '../console-format.ts';
import { formatMoney, parseTypedAmount, TypedAmountError } from '../../../platform/money/money-text.ts';
import { actionForm, dataTable, statusBadge, type ConsolePageView } from '../console-layout.ts';
import { enteredIn, type FormRefusal } from '../console-form-refusal.ts';
import { describeReadSource, readSource } from '../../../platform/db/read-replica.ts';
import { CONSOLE_FORM_LIMIT_BYTES, verifyConsoleCsrfToken, type ConsoleFormRoute, type ConsolePageModule } from '../console-plugin.ts';
import { consolePermits } from '../console-permissions.ts';
import { html, type Html } from '../html.ts';

type MatchResource = z.infer<typeof remittanceMatchSchema>;
type CreditResource = z.infer<typeof bankCreditSchema>;
type StatementResource = z.infer<typeof bankStatementSchema>;

/** As many split rows as a person reasonably fills in; larger splits go through the API. */
export const MANUAL_ALLOCATION_ROWS = 3;
/** As the API's manual match and unmatch bodies allow. */
const REASON_MAX_LENGTH = 500;
const STATEMENTS_LISTED = 50;
const STATEMENTS_ON_OVERVIEW = 5;
const CREDITS_LISTED = 200;
const REMITTANCES_LISTED = 200;
const REMITTANCES_OFFERED = 200;
const SET_ASIDE_LISTED = 50;
const REVERSALS_LISTED = 200;
/** Credits offered per reversal to place, newest first: the one reversed is usually recent. */
const CREDITS_OFFERED_PER_REVERSAL = 50;
/** redirectWithNotice keeps this many characters of a notice: an import's line is made to fit. */
const NOTICE_MAX_LENGTH = 300;
const REMITTANCE_STATUSES = remittanceStatusSchema.options;

/**
 * Integer minor units from an amount a person typed in major units ("248", "248.5", "248.50" GBP ->
 * 24 850), read by parseTypedAmount (the command line reads its amounts the same way): no float
 * ever holds the money; signs, separators, more decimals than the currency has, zero and more than
 * 15 digits are refused, with the reason.
 */
export function minorUnitsOfTypedAmount(text: string, currency: string): number {
  try {
    return parseTypedAmount(text, currency);
  } catch (error) {
    if (error instanceof TypedAmountError) throw new InvalidError('amount-invalid', error.message);
    throw error;
  }
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** What a person calls each integrity finding (its detail gives the figures); a code not listed reads as itself. */
const FINDING_LABELS: Readonly<Record<string, string>> = {
  balance_mismatch: 'balances do not add up',
  summary_count_mismatch: 'entry count differs from the totals',
  summary_sum_mismatch: 'entry sum differs from the totals',
  summary_net_mismatch: 'net differs from the totals',
  no_balances: 'no balances to check',
  sequence_gap: 'sequence gap',
  sequence_repeated: 'sequence number repeated',
};
export const findingLabel = (code: string): string => FINDING_LABELS[code] ?? code.replaceAll('_', ' ');

const OUTCOMES = statementEntryOutcomeSchema.options;

const SET_ASIDE_LABELS: Readonly<Record<SetAsideCategory, string>> = {
  not_a_remittance: 'Not a remittance',
  bank_interest: 'Bank interest',
  returned_to_sender: 'To return to its sender',
  duplicate: 'A duplicate',
  other: 'Other',
};

function statementName(statement: { statement_id: string; format: string; page_number: number; last_page: boolean }): string {
  const paginated = statement.page_number > 1 || !statement.last_page;
  return `Statement ${statement.statement_id}${paginated ? ` page ${statement.page_number}` : ''} (${statement.format})`;
}

/** What became of a statement's entries, as few words as a notice allows; only outcomes that happened are named. */
function describeEntries(entries: StatementRecordOutcome['entries'], newCredits: number, findings: ReadonlyArray<{ code: string }>): string {
  const count = (outcome: StatementEntryOutcome) => entries.filter((entry) => entry.outcome === outcome).length;
  const parts = [plural(newCredits, 'new credit', 'new credits')];
  if (count('already_known') > 0) parts.push(`${count('already_known')} already known`);
  if (count('superseded') > 0) parts.push(`${count('superseded')} superseded`);
  if (count('conflicting') > 0) parts.push(`${count('conflicting')} conflicting (held)`);
  if (count('held') > 0) parts.push(`${count('held')} held (a payment of ours back)`);
  if (count('unusable') > 0) parts.push(plural(count('unusable'), 'unusable entry', 'unusable entries'));
  const labels = [...new Set(findings.map((finding) => findingLabel(finding.code)))];
  if (labels.length > 0) parts.push(`findings: ${labels.join(', ')}`);
  return parts.join(', ');
}

/**
 * The line a person reads after an upload: per statement what came in (new, already known, superseded,
 * conflicting, unusable) and what its checks found; then the reversals, any money now owed back, what
 * the rules matched and what waits for a person. A file of many statements that would not fit a notice
 * is told in totals (each statement's figures are on the statements page).
 */
export function describeImport(outcome: StatementImportOutcome): string {
  const statements = outcome.statements;
  if (outcome.replayed) {
    return statements.length === 1
      ? `${statementName(outcome.statement)} was already imported, nothing changed.`
      : `All ${statements.length} statements of the file were already imported, nothing changed.`;
  }
  const matching = outcome.matching;
  const byRule = matching ? Object.entries(matching.byRule).map(([rule, count]) => `${rule} ${count}`) : [];
  const { applied, unresolved, shortfall } = outcome.reversals;
  const overall = [
    ...(applied + unresolved > 0 ? [`reversals: ${applied} applied, ${unresolved} to place by hand`] : []),
    ...(shortfall > 0 ? [`${formatMoney(shortfall, outcome.statement.currency)} already paid out is now owed back (shortfall)`] : []),
    `${plural(matching?.matches ?? 0, 'match', 'matches')} by the rules${byRule.length > 0 ? ` (${byRule.join(', ')})` : ''}`,
    `${plural(matching?.unmatchedCredits ?? 0, 'credit', 'credits')} left in the exceptions queue`,
  ].join('; ');
  const described = (recorded: StatementRecordOutcome) =>
    recorded.replayed ? 'already imported, nothing changed' : describeEntries(recorded.entries, recorded.newCredits, recorded.statement.integrity_findings);
  if (statements.length === 1) return `${statementName(outcome.statement)} imported: ${described(statements[0]!)}; ${overall}.`;

  const each = `${statements.length} statements: ${statements.map((recorded) => `${statementName(recorded.statement)}: ${described(recorded)}`).join('; ')}. In all: ${overall}.`;
  if (each.length <= NOTICE_MAX_LENGTH) return each;
  const recorded = statements.filter((statement) => !statement.replayed);
  const totals = describeEntries(
    recorded.flatMap((statement) => statement.entries),
    outcome.newCredits,
    recorded.flatMap((statement) => statement.statement.integrity_findings),
  );
  const replayed = statements.length - recorded.length;
  return `${statements.length} statements (${recorded.length} imported${replayed > 0 ? `, ${replayed} already imported` : ''}): ${totals}; ${overall}. Each statement is listed below.`;
}

function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/**
 * A form's fields read one by one, every refusal kept (a person fixes them all in one go); `refuse`
 * throws them as one refusal, the first one's code and detail leading, each pointing at its field.
 */
class FormFields {
  private readonly errors: Array<FieldError & { code: ProblemCode }> = [];
  constructor(private readonly body: unknown) {}

  text(name: string): string {
    return field(this.body, name).trim();
  }

  /** Records a refusal of the field `name` (as the form names it). */
  reject(name: string, code: ProblemCode, detail: string): void {
    this.errors.push({ pointer: `/${name}`, detail, code });
  }

  /** Runs a parse of the field `name`, recording its refusal instead of throwing it. */
  parse<T>(name: string, parse: () => T): T | undefined {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.reject(name, error.code, error.detail);
      return undefined;
    }
  }

  refuse(): void {
    const [first] = this.errors;
    if (first) throw new InvalidError(first.code, first.detail, { errors: this.errors.map(({ pointer, detail }) => ({ pointer, detail })) });
  }
}

function optionalReasonOf(body: unknown): string | null {
  const reason = field(body, 'reason').trim();
  if (reason.length > REASON_MAX_LENGTH) throw new InvalidError('reason-too-long', `The reason must be at most ${REASON_MAX_LENGTH} characters`);
  return reason === '' ? null : reason;
}

/** `missing` is what the person reads when they left the reason empty. */
function requiredReasonOf(body: unknown, missing: string): string {
  const reason = optionalReasonOf(body);
  if (reason === null) throw new InvalidError('reason-required', missing);
  return reason;
}

/** The allocation rows of the manual match form; a row left blank is skipped, a half-filled one refused (every row's refusal at once). */
function allocationsOf(form: FormFields, currency: string): Allocation[] {
  const allocations: Allocation[] = [];
  let filled = 0;
  for (let row = 1; row <= MANUAL_ALLOCATION_ROWS; row++) {
    const remittance = form.text(`remittance_${row}`);
    const amount = form.text(`amount_${row}`);
    if (remittance === '' && amount === '') continue;
    filled++;
    if (remittance === '' || amount === '') {
      form.reject(remittance === '' ? `remittance_${row}` : `amount_${row}`, 'match-invalid', `Row ${row}: choose a remittance and give an amount, or leave both empty`);
      continue;
    }
    const [payrollId = '', payDate = '', ...rest] = remittance.split('/');
    if (!isUuid(payrollId) || !isoDateSchema.safeParse(payDate).success || rest.length > 0) {
      form.reject(`remittance_${row}`, 'match-invalid', `Row ${row}: choose a remittance from the list`);
      continue;
    }
    const minor = form.parse(`amount_${row}`, () => {
      try {
        return minorUnitsOfTypedAmount(amount, currency);
      } catch (error) {
        throw error instanceof DomainError ? new InvalidError(error.code, `Row ${row}: ${error.detail}`) : error;
      }
    });
    if (minor !== undefined) allocations.push({ payrollId, payDate, amount: minor });
  }
  if (filled === 0) form.reject('remittance_1', 'match-invalid', 'Choose at least one remittance and amount');
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
const statementHref = (statementId: string) => `/console/cash/statements/${statementId}`;
const REVERSALS_HREF = '/console/cash/reversals';
/** The API's words with spaces, as people read them ("unresolved reversal", "set aside"). */
const spaced = (word: string) => word.replaceAll('_', ' ');

/** Where a set-aside or restore form returns to: a fixed choice, never a URL from the form. */
type DecisionReturn = 'queue' | 'credit';
const decisionReturnOf = (body: unknown): DecisionReturn => (field(body, 'return_to') === 'queue' ? 'queue' : 'credit');

function categoryOf(body: unknown): SetAsideCategory {
  const parsed = setAsideCategorySchema.safeParse(field(body, 'category'));
  if (!parsed.success) throw new InvalidError('category-invalid', 'Choose what the credit is from the list');
  return parsed.data;
}

/** The element ids of a credit's set-aside and restore fields, and of a match's unmatch reason (one form of each per credit or match on a page). */
const setAsideFieldId = (creditId: string, name: string) => (name === 'category' ? `set-aside-category-${creditId}` : `set-aside-reason-${creditId}`);
const restoreFieldId = (creditId: string) => `restore-reason-${creditId}`;
const unmatchFieldId = (matchId: string) => `unmatch-reason-${matchId}`;
const reversalFieldId = (entryId: string, name: string) => (name === 'bank_credit_id' ? `reversal-credit-${entryId}` : `reversal-reason-${entryId}`);

/** A credit's state as the queue and its page show it: the word, what it was set aside as, and why. */
function creditState(credit: CreditResource): Html {
  return html`${statusBadge(spaced(credit.state))}${credit.set_aside_category ? ` (${SET_ASIDE_LABELS[credit.set_aside_category]})` : ''}${credit.state_reason ? `: ${credit.state_reason}` : ''}`;
}

const mayBeSetAside = (credit: CreditResource) => (credit.state === 'open' || credit.state === 'held') && credit.unmatched_amount > 0;
const mayBeRestored = (credit: CreditResource) => credit.state === 'held' || credit.state === 'set_aside';

function setAsideForm(credit: CreditResource, csrf: string, returnTo: DecisionReturn, refusal?: FormRefusal): Html {
  const action = `/console/cash/credits/${credit.id}/set-aside`;
  const entered = enteredIn(refusal, action);
  const category = setAsideFieldId(credit.id, 'category');
  const reason = setAsideFieldId(credit.id, 'reason');
  return actionForm(
    action,
    csrf,
    'Set aside',
    html`<input type="hidden" name="return_to" value="${returnTo}">
<label for="${category}">What the money is</label>
<select id="${category}" name="category" required${entered.invalid(category)}>
<option value="">Choose</option>
${SET_ASIDE_CATEGORIES.map((option) => html`<option value="${option}"${entered.selected('category', option)}>${SET_ASIDE_LABELS[option]}</option>`)}
</select>
<label for="${reason}">Why it is no remittance (required)</label>
<input type="text" id="${reason}" name="reason" maxlength="${REASON_MAX_LENGTH}" required value="${entered.value('reason')}"${entered.invalid(reason)}>`,
  );
}

function restoreForm(credit: CreditResource, csrf: string, returnTo: DecisionReturn, refusal?: FormRefusal): Html {
  const action = `/console/cash/credits/${credit.id}/restore`;
  const entered = enteredIn(refusal, action);
  const reason = restoreFieldId(credit.id);
  return actionForm(
    action,
    csrf,
    credit.state === 'held' ? 'Release to the rules' : 'Restore to the queue',
    html`<input type="hidden" name="return_to" value="${returnTo}">
<label for="${reason}">Why it goes back to the rules (required)</label>
<input type="text" id="${reason}" name="reason" maxlength="${REASON_MAX_LENGTH}" required value="${entered.value('reason')}"${entered.invalid(reason)}>`,
  );
}

/** How many entries had each outcome, in the outcomes' own order; an old statement recorded none. */
function outcomeCounts(counts: Readonly<Record<string, number>>): string {
  const listed = OUTCOMES.filter((outcome) => (counts[outcome] ?? 0) > 0).map((outcome) => `${spaced(outcome)} ${counts[outcome]}`);
  return listed.length > 0 ? listed.join(', ') : '—';
}

const pageOf = (statement: StatementResource) =>
  statement.page_number === 1 && statement.last_page ? '—' : `${statement.page_number}${statement.last_page ? ' (last)' : ''}`;

function findingsBadge(statement: StatementResource): Html | string {
  if (statement.integrity_findings.length === 0) return 'None';
  return html`<span class="status status-attention"><span aria-hidden="true">⚠</span> ${plural(statement.integrity_findings.length, 'finding', 'findings')}</span>`;
}

/**
 * What the checks found in these statements, each finding with its figures, in a section of its own
 * above everything else: a statement whose balances do not add up, or that follows a gap, must not be
 * read past. Nothing when all checked out.
 */
function findingsSection(statements: readonly StatementResource[], linked: boolean): Html | string {
  const flagged = statements.filter((statement) => statement.integrity_findings.length > 0);
  if (flagged.length === 0) return '';
  return html`<section class="findings" aria-labelledby="findings">
<h2 id="findings"><span aria-hidden="true">⚠</span> Integrity findings</h2>
<p>The bank's figures did not check out for ${plural(flagged.length, 'statement', 'statements')}: compare with the bank before relying on them.</p>
<ul>
${flagged.flatMap((statement) =>
  statement.integrity_findings.map(
    (finding) =>
      html`<li>${linked ? html`<a href="${statementHref(statement.id)}">${statementName(statement)}</a>: ` : ''}<strong>${findingLabel(finding.code)}</strong>: ${finding.detail}</li>`,
  ),
)}
</ul>
</section>`;
}

/** An audit row's actor as the service names actors elsewhere (a credit's state_changed_by, a match's matched_by). */
const auditActorName = (kind: AuditActorKind, actor: string) => describeActor(kind === 'client' ? clientActor(actor) : kind === 'cli' ? cliActor(actor) : consoleActor(actor));
const STATE_CHANGES: Readonly<Record<string, string>> = {
  'bank_credit.set_aside': 'Set aside',
  'bank_credit.restored': 'Restored to the rules',
  'bank_credit.reversed': 'Reversed by the bank',
};

/** Where an unmatch form returns to: a fixed choice, never a URL from the form. */
type UnmatchReturn = 'credit' | 'remittance';

function unmatchForm(match: MatchResource, csrf: string, returnTo: UnmatchReturn, refusal?: FormRefusal): Html {
  const action = `/console/cash/matches/${match.id}/unmatch`;
  const entered = enteredIn(refusal, action);
  const id = unmatchFieldId(match.id);
  return actionForm(
    action,
    csrf,
    'Unmatch',
    html`<input type="hidden" name="return_to" value="${returnTo}">
<label for="${id}">Why this match is taken back (required)</label>
<input type="text" id="${id}" name="reason" maxlength="${REASON_MAX_LENGTH}" required value="${entered.value('reason')}"${entered.invalid(id)}>`,
  );
}

function matchesTable(
  caption: string,
  matches: readonly MatchResource[],
  currency: string,
  actions: { csrf: string; returnTo: UnmatchReturn; refusal?: FormRefusal | undefined } | null,
  first: 'credit' | 'remittance',
): Html {
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
      ...(actions ? [match.unmatched_at ? '' : unmatchForm(match, actions.csrf, actions.returnTo, actions.refusal)] : []),
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

  // The cash overview and the list of remittances only read, and no action lands on them: off the
  // replica within its lag bound (readSource). Statements, credits, reversals and a remittance's own
  // page stay on the primary: an import, a match, an unmatch or a decision redirects to them.
  app.get('/cash', async (request, reply) => {
    const session = context.session(request);
    const source = await readSource(context.deps);
    const { db } = source;
    const [byStatus, creditsToMatch, reversalsToPlace, statements] = await Promise.all([
      countRemittancesByStatus(db),
      countCreditsToMatch(db),
      countReversalsToPlace(db),
      listBankStatements(db, STATEMENTS_ON_OVERVIEW),
    ]);
    return context.page(request, reply, {
      title: 'Cash',
      section: 'cash',
      dataAsOf: describeReadSource(source),
      body: html`<ul class="links">
<li><a href="/console/cash/credits">Credits to match (${creditsToMatch})</a></li>
<li><a href="${REVERSALS_HREF}">Reversals to place (${reversalsToPlace})</a></li>
<li><a href="/console/cash/statements">Bank statements${consolePermits(session.role, 'import_statement') ? ': import one' : ''}</a></li>
<li><a href="/console/cash/remittances">Remittances</a></li>
</ul>
${findingsSection(statements, true)}
${dataTable(
  'Remittances by status',
  ['Status', 'Remittances'],
  REMITTANCE_STATUSES.map((status) => [html`<a href="/console/cash/remittances?status=${status}">${statusBadge(status)}</a>`, String(byStatus.get(status) ?? 0)]),
)}
${dataTable(
  'Latest bank statements',
  ['Imported', 'Statement', 'Format', 'Credits', 'Credits total', 'Findings'],
  statements.map((statement) => [
    formatInstant(statement.imported_at),
    html`<a href="${statementHref(statement.id)}">${statementName(statement)}</a>`,
    statement.format,
    String(statement.credits),
    formatMoney(statement.credits_total, statement.currency),
    findingsBadge(statement),
  ]),
  'none imported yet.',
)}`,
    });
  });

  // The statements page, also shown again with a refused upload: what was refused at the top, the form below.
  const statementsView = async (request: FastifyRequest, reply: FastifyReply, refusal?: FormRefusal): Promise<ConsolePageView> => {
    const session = context.session(request);
    const statements = await listBankStatements(db, STATEMENTS_LISTED);
    const csrf = context.csrfToken(request, reply);
    const entered = enteredIn(refusal, '/console/cash/statements');
    return {
      title: 'Bank statements',
      section: 'cash',
      body: html`${findingsSection(statements, true)}
${
  consolePermits(session.role, 'import_statement')
    ? html`<section aria-labelledby="import">
<h2 id="import">Import a statement</h2>
<p>camt.053 (end of day) or camt.054 (intraday) XML, or the CSV layout. The file is checked whole first: a refused file imports nothing. The same file again changes nothing.</p>
<form method="post" action="/console/cash/statements" enctype="multipart/form-data" class="action">
<input type="hidden" name="_csrf" value="${csrf}">
<label for="statement-file">Statement file</label>
<input type="file" id="statement-file" name="statement" accept=".xml,.csv" required${entered.invalid('statement-file')}>
<button type="submit">Import statement</button>
</form>
</section>`
    : ''
}
${dataTable(
  `Bank statements, newest first (at most ${STATEMENTS_LISTED}); open one for its entries`,
  ['Imported', 'Statement', 'Format', 'Page', 'Sequence', 'File', 'Credits', 'Credits total', 'Entries', 'Findings', 'Imported by'],
  statements.map((statement) => [
    formatInstant(statement.imported_at),
    html`<a href="${statementHref(statement.id)}">${statement.statement_id}</a>`,
    statement.format,
    pageOf(statement),
    statement.electronic_sequence_number ?? '—',
    statement.file_name ?? '—',
    String(statement.credits),
    formatMoney(statement.credits_total, statement.currency),
    outcomeCounts(statement.entry_outcomes),
    findingsBadge(statement),
    statement.imported_by,
  ]),
  'none imported yet.',
)}
<p><a href="/console/cash">Cash overview</a></p>`,
    };
  };
  app.get('/cash/statements', async (request, reply) => context.page(request, reply, await statementsView(request, reply)));

  app.get<{ Params: { id: string } }>('/cash/statements/:id', async (request, reply) => {
    const statement = await showBankStatement(db, request.params.id);
    const entries = await listBankStatementEntries(db, statement.id);
    const money = (minor: number) => formatMoney(minor, statement.currency);
    return context.page(request, reply, {
      title: statementName(statement),
      section: 'cash',
      body: html`${findingsSection([statement], false)}
<dl class="facts">
<dt>Bank's statement id</dt><dd>${statement.statement_id}</dd>
<dt>Format</dt><dd>${statement.format}</dd>
<dt>Page</dt><dd>${statement.page_number === 1 && statement.last_page ? 'Not paginated' : `${statement.page_number}${statement.last_page ? ', the last' : ', more follow'}`}</dd>
<dt>Electronic sequence number</dt><dd>${statement.electronic_sequence_number ?? '—'}</dd>
<dt>Legal sequence number</dt><dd>${statement.legal_sequence_number ?? '—'}</dd>
<dt>File</dt><dd>${statement.file_name ?? '—'}</dd>
<dt>Credits</dt><dd>${statement.credits}, ${money(statement.credits_total)}</dd>
<dt>Entries</dt><dd>${outcomeCounts(statement.entry_outcomes)}</dd>
<dt>Integrity findings</dt><dd>${findingsBadge(statement)}</dd>
<dt>Imported</dt><dd>${formatInstant(statement.imported_at)} by ${statement.imported_by}</dd>
<dt>File SHA-256</dt><dd><code>${statement.content_sha256}</code></dd>
</dl>
<section aria-labelledby="entries">
<h2 id="entries">Entries</h2>
${dataTable(
  'What the import made of each entry, in file order',
  ['#', 'Direction', 'Amount', 'Booking date', 'Bank reference', 'Outcome', 'Credit', 'Detail'],
  entries.map((entry) => [
    String(entry.entry_index + 1),
    entry.direction,
    formatMoney(entry.amount, entry.currency),
    entry.booking_date ?? '—',
    entry.bank_reference,
    // A reversal a person placed becomes a reversal, stamped with who placed it: the badge says so.
    statusBadge(entry.resolved_at ? 'reversal placed by hand' : spaced(entry.outcome)),
    entry.bank_credit_id
      ? html`<a href="${creditHref(entry.bank_credit_id)}">${entry.outcome === 'reversal' || entry.resolved_at ? 'Credit taken back' : 'The credit'}</a>`
      : entry.outcome === 'unresolved_reversal'
        ? html`<a href="${REVERSALS_HREF}">Place it</a>`
        : '—',
    html`${entry.detail ?? '—'}${entry.resolved_at ? ` Placed by ${entry.resolved_by ?? '—'} at ${formatInstant(entry.resolved_at)}.` : ''}`,
  ]),
  'the statement had no entries.',
)}
</section>
<p><a href="/console/cash/statements">All bank statements</a></p>`,
    });
  });

  // Multipart is read only here, streamed: the file goes to the parser part by part and is never held whole.
  app.register(async (upload) => {
    await upload.register(multipart, {
      limits: { fields: 1, fieldSize: 1_024, files: 1, parts: 2, fileSize: config.STATEMENT_LIMIT_BYTES, headerPairs: 100 },
    });
    const statementForm: ConsoleFormRoute = { refused: 'The statement was not imported', page: statementsView, defaultField: 'statement-file', upload: true };
    upload.post('/cash/statements', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleCsrfInMultipart: true, consoleForm: statementForm } }, async (request, reply) => {
      if (!request.isMultipart()) {
        // An ordinary form carries no file; its token and the role are still checked first, as for any action.
        await verifyConsoleCsrfToken(app, request, field(request.body, '_csrf') || undefined);
        context.requirePermission(request, 'import_statement');
        throw new MalformedRequestError('statement-missing', 'Choose a statement file to upload');
      }
      let token: string | undefined;
      let read: ReadStatement | undefined;
      let session: ReturnType<typeof context.requirePermission> | undefined;
      const tooLarge = () => new HttpProblem(413, 'body-too-large', `A bank statement may be at most ${config.STATEMENT_LIMIT_BYTES} bytes; this file is larger`);
      try {
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
            throw part.file.truncated ? tooLarge() : error;
          }
          // Multipart cuts a file at the limit: what the parser read, whole or not, is not the statement.
          if (part.file.truncated) throw tooLarge();
        }
      } catch (error) {
        // Past the limit multipart fails the upload (FST_REQ_FILE_TOO_LARGE), and the parser, reading a
        // stream cut short, may call the file malformed: it is too large, 413 as at the API, not 422.
        throw (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE' ? tooLarge() : error;
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

  // The exceptions queue, also shown again with a set-aside or restore refused there.
  const creditsQueueView = async (request: FastifyRequest, reply: FastifyReply, refusal?: FormRefusal): Promise<ConsolePageView> => {
    const session = context.session(request);
    const mayMatch = consolePermits(session.role, 'match_credit');
    const [credits, setAside, reversalsToPlace] = await Promise.all([
      listCreditsToMatch(db, CREDITS_LISTED),
      listCreditsSetAside(db, SET_ASIDE_LISTED),
      countReversalsToPlace(db),
    ]);
    const csrf = context.csrfToken(request, reply);
    return {
      title: 'Credits to match',
      section: 'cash',
      body: html`<p>Credits with money no rule could match to a remittance, oldest first: open ones the rules try again at each import, held ones wait for a person first. Open one to match it by hand${mayMatch ? '; set aside money that is no remittance' : ''}.</p>
${reversalsToPlace > 0 ? html`<p><a href="${REVERSALS_HREF}">${plural(reversalsToPlace, 'reversal waits', 'reversals wait')} to be placed</a>: the bank took money back and no rule could tell which credit.</p>` : ''}
${dataTable(
  `The exceptions queue (at most ${CREDITS_LISTED})`,
  ['Credit', 'Booking date', 'Unmatched of total', 'Reference', 'Debtor', 'State', ...(mayMatch ? ['Action'] : [])],
  credits.map((credit) => [
    html`<a href="${creditHref(credit.id)}">${credit.bank_reference}</a>`,
    credit.booking_date,
    `${formatMoney(credit.unmatched_amount, credit.currency)} of ${formatMoney(credit.amount, credit.currency)}`,
    credit.remittance_information ?? '—',
    credit.debtor_name ?? '—',
    creditState(credit),
    ...(mayMatch ? [html`${setAsideForm(credit, csrf, 'queue', refusal)}${mayBeRestored(credit) ? restoreForm(credit, csrf, 'queue', refusal) : ''}`] : []),
  ]),
  'every credit is matched.',
)}
<section aria-labelledby="set-aside">
<h2 id="set-aside">Set aside</h2>
${dataTable(
  `Credits set aside as no remittance, latest first (at most ${SET_ASIDE_LISTED}); open one to restore it`,
  ['Credit', 'Booking date', 'Unmatched of total', 'Set aside as', 'Why', 'By', 'When'],
  setAside
    .map(toBankCreditResource)
    .map((credit) => [
      html`<a href="${creditHref(credit.id)}">${credit.bank_reference}</a>`,
      credit.booking_date,
      `${formatMoney(credit.unmatched_amount, credit.currency)} of ${formatMoney(credit.amount, credit.currency)}`,
      credit.set_aside_category ? SET_ASIDE_LABELS[credit.set_aside_category] : '—',
      credit.state_reason ?? '—',
      credit.state_changed_by ?? '—',
      formatInstant(credit.state_changed_at),
    ]),
  'none.',
)}
</section>
<p><a href="/console/cash">Cash overview</a></p>`,
    };
  };
  app.get('/cash/credits', async (request, reply) => context.page(request, reply, await creditsQueueView(request, reply)));

  // A credit's page, also shown again with a match, set-aside, restore or unmatch refused there.
  const creditView = async (request: FastifyRequest, reply: FastifyReply, creditId: string, refusal?: FormRefusal): Promise<ConsolePageView> => {
    const session = context.session(request);
    const { credit, matches } = await showBankCredit(db, creditId);
    const mayMatch = consolePermits(session.role, 'match_credit');
    const csrf = context.csrfToken(request, reply);
    const matchable = mayBeSetAside(credit);
    const [owed, stateChanges] = await Promise.all([
      mayMatch && matchable ? listOwedRemittancesIn(db, credit.currency, REMITTANCES_OFFERED) : Promise.resolve([]),
      listCreditStateChanges(db, credit.id),
    ]);
    const exponent = currencyExponent(credit.currency);
    const rows = Array.from({ length: MANUAL_ALLOCATION_ROWS }, (_, index) => index + 1);
    const entered = enteredIn(refusal, `/console/cash/credits/${credit.id}/matches`);
    const matchForm = html`<section aria-labelledby="match">
<h2 id="match">Match by hand</h2>
${
  owed.length === 0
    ? html`<p class="empty">No remittance in ${credit.currency} is owed money.</p>`
    : html`<form method="post" action="/console/cash/credits/${credit.id}/matches" class="action">
<input type="hidden" name="_csrf" value="${csrf}">
<p>Up to ${MANUAL_ALLOCATION_ROWS} remittances; the amounts (in ${credit.currency}) may add up to at most ${formatMoney(credit.unmatched_amount, credit.currency)}. Leave a row empty to skip it.</p>
${rows.map(
  (row) => html`<fieldset>
<legend>Allocation ${row}${row === 1 ? '' : ' (optional)'}</legend>
<label for="remittance_${row}">Remittance</label>
<select id="remittance_${row}" name="remittance_${row}"${row === 1 ? html` required` : ''}${entered.invalid(`remittance_${row}`)}>
<option value="">Choose a payroll pay date</option>
${owed.map(
  (remittance) =>
    html`<option value="${remittance.payroll_id}/${remittance.pay_date}"${entered.selected(`remittance_${row}`, `${remittance.payroll_id}/${remittance.pay_date}`)}>${remittance.employer_name} · pay date ${remittance.pay_date} · ${remittance.payment_reference} · owes ${formatMoney(remittance.expected - remittance.received, remittance.currency)}</option>`,
)}
</select>
<label for="amount_${row}">Amount in ${credit.currency}</label>
<input type="text" id="amount_${row}" name="amount_${row}" inputmode="decimal" pattern="${exponent === 0 ? '[0-9]+' : `[0-9]+(\\.[0-9]{1,${exponent}})?`}"${row === 1 ? html` required` : ''} value="${entered.value(`amount_${row}`)}"${entered.invalid(`amount_${row}`)}>
</fieldset>`,
)}
<label for="match-reason">Why (optional, e.g. the employer's email)</label>
<input type="text" id="match-reason" name="reason" maxlength="${REASON_MAX_LENGTH}" value="${entered.value('reason')}"${entered.invalid('match-reason')}>
<button type="submit">Match</button>
</form>`
}
</section>`;
    const decisions = html`${
      matchable
        ? html`<section aria-labelledby="set-aside">
<h2 id="set-aside">Set aside</h2>
<p>Money that is no remittance (bank interest, a payment to send back, a duplicate) leaves the exceptions queue, and no rule will match it. Its live matches stay.</p>
${setAsideForm(credit, csrf, 'credit', refusal)}
</section>`
        : ''
    }
${
  mayBeRestored(credit)
    ? html`<section aria-labelledby="restore">
<h2 id="restore">${credit.state === 'held' ? 'Release to the rules' : 'Restore to the queue'}</h2>
<p>${credit.state === 'held' ? 'Held for a person to look at first.' : 'Set aside as no remittance.'} Back in the queue, the rules try it again at the next import.</p>
${restoreForm(credit, csrf, 'credit', refusal)}
</section>`
    : ''
}`;
    return {
      title: `Credit ${credit.bank_reference}`,
      section: 'cash',
      body: html`<dl class="facts">
<dt>Credit</dt><dd>${credit.id}</dd>
<dt>Bank reference</dt><dd>${credit.bank_reference}</dd>
<dt>Amount</dt><dd>${formatMoney(credit.amount, credit.currency)}</dd>
<dt>Matched</dt><dd>${formatMoney(credit.matched_amount, credit.currency)}</dd>
<dt>Unmatched</dt><dd>${formatMoney(credit.unmatched_amount, credit.currency)}</dd>
<dt>State</dt><dd>${statusBadge(spaced(credit.state))}</dd>
<dt>Why</dt><dd>${credit.state_reason ?? '—'}</dd>
<dt>Set aside as</dt><dd>${credit.set_aside_category ? SET_ASIDE_LABELS[credit.set_aside_category] : '—'}</dd>
<dt>State changed</dt><dd>${credit.state_changed_at ? `${formatInstant(credit.state_changed_at)} by ${credit.state_changed_by ?? '—'}` : 'Never: as imported'}</dd>
<dt>Booking date</dt><dd>${credit.booking_date}</dd>
<dt>Value date</dt><dd>${credit.value_date ?? '—'}</dd>
<dt>Booked</dt><dd>${credit.booked ? 'Booked by a statement (camt.053 or CSV)' : 'Notice only (camt.054): no booked statement has confirmed it yet'}</dd>
<dt>Statement</dt><dd><a href="${statementHref(credit.bank_statement_id)}">The statement that brought it</a></dd>
<dt>Account servicer reference (AcctSvcrRef)</dt><dd>${credit.account_servicer_reference ?? '—'}</dd>
<dt>Entry reference (NtryRef)</dt><dd>${credit.entry_reference ?? '—'}</dd>
<dt>Reference</dt><dd>${credit.remittance_information ?? '—'}</dd>
<dt>Debtor</dt><dd>${credit.debtor_name ?? '—'}${credit.debtor_account ? `, account ${credit.debtor_account}` : ''}</dd>
</dl>
<section aria-labelledby="history">
<h2 id="history">State history</h2>
${dataTable(
  'Decisions about this credit, oldest first',
  ['When', 'Change', 'By', 'Why'],
  stateChanges.map((change) => [
    formatInstant(change.at),
    STATE_CHANGES[change.action] ?? change.action,
    auditActorName(change.actor_kind, change.actor),
    change.reason ?? '—',
  ]),
  credit.state === 'held' ? 'none yet: the import held it.' : 'none: it is as imported.',
)}
</section>
<section aria-labelledby="matches">
<h2 id="matches">Matches</h2>
${matchesTable('Matches of this credit, live and taken back', matches, credit.currency, mayMatch ? { csrf, returnTo: 'credit', refusal } : null, 'remittance')}
</section>
${mayMatch && matchable ? matchForm : ''}
${mayMatch ? decisions : ''}
<p><a href="/console/cash/credits">Credits to match</a></p>`,
    };
  };
  app.get<{ Params: { id: string } }>('/cash/credits/:id', async (request, reply) => context.page(request, reply, await creditView(request, reply, request.params.id)));

  /** A set-aside or restore form is on the queue and on the credit's page: it is shown again where it was sent from. */
  const decisionPage =
    (fieldId: (creditId: string, name: string) => string) =>
    (refused: string): ConsoleFormRoute => ({
      refused,
      page: (request, reply, refusal) => {
        const { id } = request.params as { id: string };
        return decisionReturnOf(request.body) === 'queue' ? creditsQueueView(request, reply, refusal) : creditView(request, reply, id, refusal);
      },
      fieldId: (name, request) => fieldId((request.params as { id: string }).id, name),
    });
  const setAsidePage = decisionPage(setAsideFieldId)('The credit was not set aside');
  const restorePage = decisionPage(restoreFieldId)('The credit was not given back to the rules');

  app.post<{ Params: { id: string } }>(
    '/cash/credits/:id/set-aside',
    { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: setAsidePage } },
    async (request, reply) => {
      const session = context.requirePermission(request, 'match_credit');
      const form = new FormFields(request.body);
      const category = form.parse('category', () => categoryOf(request.body));
      const reason = form.parse('reason', () => requiredReasonOf(request.body, 'Say why this money is no remittance'));
      form.refuse();
      const decision = { category: category!, reason: reason! };
      const credit = await setCreditAside(db, consoleActor(session.email), { creditId: request.params.id, ...decision });
      const back = decisionReturnOf(request.body);
      return context.redirectWithNotice(
        reply,
        back === 'queue' ? '/console/cash/credits' : creditHref(credit.id),
        `Credit ${credit.bank_reference} set aside (${SET_ASIDE_LABELS[decision.category]}): ${formatMoney(credit.amount - credit.matched_amount, credit.currency)} leaves the exceptions queue, and no rule will match it.`,
      );
    },
  );

  app.post<{ Params: { id: string } }>('/cash/credits/:id/restore', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: restorePage } }, async (request, reply) => {
    const session = context.requirePermission(request, 'match_credit');
    const form = new FormFields(request.body);
    const reason = form.parse('reason', () => requiredReasonOf(request.body, 'Say why the credit goes back to the rules'));
    form.refuse();
    const credit = await restoreCredit(db, consoleActor(session.email), { creditId: request.params.id, reason: reason! });
    const back = decisionReturnOf(request.body);
    return context.redirectWithNotice(
      reply,
      back === 'queue' ? '/console/cash/credits' : creditHref(credit.id),
      `Credit ${credit.bank_reference} is open again: ${formatMoney(credit.amount - credit.matched_amount, credit.currency)} waits in the exceptions queue, and the rules try it at the next import.`,
    );
  });

  // The reversals to place, also shown again with a placing refused there.
  const reversalsView = async (request: FastifyRequest, reply: FastifyReply, refusal?: FormRefusal): Promise<ConsolePageView> => {
    const session = context.session(request);
    const mayPlace = consolePermits(session.role, 'match_credit');
    const reversals = await listReversalsToPlace(db, REVERSALS_LISTED);
    const candidates = mayPlace
      ? await listReversibleCreditsFor(
          db,
          reversals.map((reversal) => reversal.id),
          CREDITS_OFFERED_PER_REVERSAL,
        )
      : [];
    const csrf = context.csrfToken(request, reply);
    const placeForm = (reversal: (typeof reversals)[number]) => {
      const offered = candidates.filter((candidate) => candidate.entry_id === reversal.id);
      if (offered.length === 0) return html`<p class="empty">No credit of ${formatMoney(reversal.amount, reversal.currency)} on the account is left to reverse.</p>`;
      const credit = reversalFieldId(reversal.id, 'bank_credit_id');
      const reason = reversalFieldId(reversal.id, 'reason');
      const action = `${REVERSALS_HREF}/${reversal.id}/place`;
      const entered = enteredIn(refusal, action);
      return actionForm(
        action,
        csrf,
        'Place the reversal',
        html`<label for="${credit}">The credit the bank took back</label>
<select id="${credit}" name="bank_credit_id" required${entered.invalid(credit)}>
<option value="">Choose a credit of ${formatMoney(reversal.amount, reversal.currency)}</option>
${offered.map(
  (candidate) =>
    html`<option value="${candidate.id}"${entered.selected('bank_credit_id', candidate.id)}>${candidate.bank_reference} · booked ${candidate.booking_date} · ${candidate.remittance_information ?? 'no reference'} · ${candidate.debtor_name ?? 'payer unknown'} · ${candidate.matched_amount > 0 ? `${formatMoney(candidate.matched_amount, reversal.currency)} matched` : 'unmatched'} · ${spaced(candidate.state)}</option>`,
)}
</select>
<label for="${reason}">How you know it is this one (required)</label>
<input type="text" id="${reason}" name="reason" maxlength="${REASON_MAX_LENGTH}" required value="${entered.value('reason')}"${entered.invalid(reason)}>`,
      );
    };
    return {
      title: 'Reversals to place',
      section: 'cash',
      body: html`<p>The bank took money back (a reversal or a return) and no rule could tell which credit: several of that amount could be it, or none shares its references. Placing one takes the credit back: its matches are undone, its pay dates lose the money, and what was already paid out of it becomes the pay date's shortfall, owed back.</p>
${dataTable(
  `Reversals waiting for a person, oldest first (at most ${REVERSALS_LISTED})`,
  ['Booked', 'Bank reference', 'Amount', 'Statement', 'Why it waits', ...(mayPlace ? ['Place it'] : [])],
  reversals.map((reversal) => [
    reversal.booking_date ?? '—',
    reversal.bank_reference,
    formatMoney(reversal.amount, reversal.currency),
    html`<a href="${statementHref(reversal.bank_statement_id)}">Entry ${reversal.entry_index + 1} of its statement</a>`,
    reversal.detail ?? '—',
    ...(mayPlace ? [placeForm(reversal)] : []),
  ]),
  'none: every reversal is placed.',
)}
<p><a href="/console/cash">Cash overview</a></p>`,
    };
  };
  app.get('/cash/reversals', async (request, reply) => context.page(request, reply, await reversalsView(request, reply)));

  const placeReversalPage: ConsoleFormRoute = {
    refused: 'The reversal was not placed',
    page: reversalsView,
    fieldId: (name, request) => reversalFieldId((request.params as { id: string }).id, name),
    // The service's refusals are about the credit chosen.
    defaultField: 'bank_credit_id',
  };
  app.post<{ Params: { id: string } }>(
    '/cash/reversals/:id/place',
    { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: placeReversalPage } },
    async (request, reply) => {
      const session = context.requirePermission(request, 'match_credit');
      const reversal = isUuid(request.params.id) ? await findReversalToPlace(db, request.params.id) : undefined;
      if (!reversal) throw new NotFoundError(`Reversal to place ${request.params.id}`);
      const form = new FormFields(request.body);
      const creditId = form.text('bank_credit_id');
      if (creditId === '') form.reject('bank_credit_id', 'reversal-invalid', 'Choose the credit the bank took back');
      const reason = form.parse('reason', () => requiredReasonOf(request.body, 'Say how you know this is the credit the bank took back'));
      form.refuse();
      const { credit } = await showBankCredit(db, creditId);
      const money = (minor: number) => formatMoney(minor, reversal.currency);
      // Said here with both bank references, which the service's refusal does not name.
      if (credit.amount !== reversal.amount) {
        throw new InvalidError('reversal-invalid', `The reversal is of ${money(reversal.amount)}; credit ${credit.bank_reference} is of ${money(credit.amount)}`);
      }
      const placed = await resolveReversal(db, consoleActor(session.email), await matchingPolicyOf(db, config), {
        entryId: reversal.id,
        creditId: credit.id,
        reason: reason!,
      });
      return context.redirectWithNotice(
        reply,
        REVERSALS_HREF,
        `Reversal ${reversal.bank_reference} placed: credit ${credit.bank_reference} (${money(credit.amount)}) is taken back; ${
          placed.shortfall > 0 ? `${money(placed.shortfall)} already paid out of it is now owed back (shortfall).` : 'nothing paid out of it is owed back.'
        }`,
      );
    },
  );

  const matchPage: ConsoleFormRoute = {
    refused: 'The match was not made',
    page: (request, reply, refusal) => creditView(request, reply, (request.params as { id: string }).id, refusal),
    fieldId: (name) => (name === 'reason' ? 'match-reason' : name),
    // Too much for the credit, or for a remittance: the amounts are what to change.
    fieldOfCode: { 'credit-over-allocated': 'amount_1', 'match-invalid': 'remittance_1' },
  };
  app.post<{ Params: { id: string } }>('/cash/credits/:id/matches', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: matchPage } }, async (request, reply) => {
    const session = context.requirePermission(request, 'match_credit');
    const { credit } = await showBankCredit(db, request.params.id);
    const form = new FormFields(request.body);
    const allocations = allocationsOf(form, credit.currency);
    const reason = form.parse('reason', () => optionalReasonOf(request.body)) ?? null;
    form.refuse();
    const matches = await matchCreditManually(db, consoleActor(session.email), await matchingPolicyOf(db, config), { creditId: credit.id, allocations, reason });
    const total = matches.reduce((sum, match) => sum + match.amount, 0);
    return context.redirectWithNotice(
      reply,
      creditHref(credit.id),
      `Matched ${formatMoney(total, credit.currency)} of credit ${credit.bank_reference} to ${matches.length === 1 ? '1 remittance' : `${matches.length} remittances`}.`,
    );
  });

  const unmatchPage: ConsoleFormRoute = {
    refused: 'The match was not taken back',
    page: async (request, reply, refusal) => {
      const { id } = request.params as { id: string };
      const match = isUuid(id) ? await findMatchWithCurrency(db, id) : undefined;
      if (!match) throw new NotFoundError(`Match ${id}`);
      return field(request.body, 'return_to') === 'remittance'
        ? remittanceView(request, reply, match.payroll_id, match.pay_date, refusal)
        : creditView(request, reply, match.bank_credit_id, refusal);
    },
    fieldId: (_name, request) => unmatchFieldId((request.params as { id: string }).id),
    fieldOfCode: { 'reason-required': 'reason', 'reason-too-long': 'reason', 'unmatch-invalid': 'reason' },
  };
  app.post<{ Params: { id: string } }>('/cash/matches/:id/unmatch', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleForm: unmatchPage } }, async (request, reply) => {
    const session = context.requirePermission(request, 'match_credit');
    const match = isUuid(request.params.id) ? await findMatchWithCurrency(db, request.params.id) : undefined;
    if (!match) throw new NotFoundError(`Match ${request.params.id}`);
    const reason = requiredReasonOf(request.body, 'Say why the match is taken back');
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
    const source = await readSource(context.deps);
    const remittances = await listRemittanceResources(source.db, { limit: REMITTANCES_LISTED, ...(status ? { status } : {}), ...(payDate ? { payDate } : {}) });
    return context.page(request, reply, {
      title: 'Remittances',
      section: 'cash',
      dataAsOf: describeReadSource(source),
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
  ['Pay date', 'Employer', 'Payroll', 'Reference', 'Expected', 'Received', 'Owed', 'Owed back', 'Status', 'Due date'],
  remittances.map((remittance) => [
    html`<a href="${remittanceHref(remittance.payroll_id, remittance.pay_date)}">${remittance.pay_date}</a>`,
    remittance.employer_name,
    remittance.payroll_name,
    remittance.payment_reference,
    formatMoney(remittance.expected, remittance.currency),
    formatMoney(remittance.received, remittance.currency),
    formatMoney(remittance.owed, remittance.currency),
    remittance.shortfall > 0 ? html`<strong>${formatMoney(remittance.shortfall, remittance.currency)}</strong>` : '—',
    statusBadge(remittance.status),
    remittance.due_date,
  ]),
  'no remittances match.',
)}
<p><a href="/console/cash">Cash overview</a></p>`,
    });
  });

  // A remittance's page, also shown again with an unmatch refused there.
  async function remittanceView(request: FastifyRequest, reply: FastifyReply, payrollId: string, payDate: string, refusal?: FormRefusal): Promise<ConsolePageView> {
    const session = context.session(request);
    if (!isoDateSchema.safeParse(payDate).success) throw new NotFoundError(`Remittance of payroll ${payrollId} pay date ${payDate}`);
    const { remittance, matches } = await showRemittance(db, payrollId, payDate);
    const [named] = await listRemittanceResources(db, { payrollId, payDate, limit: 1 });
    const csrf = context.csrfToken(request, reply);
    const money = (minor: number | null) => (minor === null ? 'not reported yet' : formatMoney(minor, remittance.currency));
    return {
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
${
  remittance.shortfall > 0
    ? html`<dt>Owed back</dt><dd><strong>${money(remittance.shortfall)}</strong>: the bank took back money already paid out of this pay date to billers; it is owed back</dd>`
    : ''
}
<dt>Status</dt><dd>${statusBadge(remittance.status)}</dd>
<dt>Due date</dt><dd>${remittance.due_date}</dd>
</dl>
<section aria-labelledby="matches">
<h2 id="matches">Matches</h2>
${matchesTable('Credits matched to this remittance, live and taken back', matches, remittance.currency, consolePermits(session.role, 'match_credit') ? { csrf, returnTo: 'remittance', refusal } : null, 'credit')}
</section>
<p><a href="/console/cash/remittances">All remittances</a></p>`,
    };
  }
  app.get<{ Params: { payrollId: string; payDate: string } }>('/cash/remittances/:payrollId/:payDate', async (request, reply) =>
    context.page(request, reply, await remittanceView(request, reply, request.params.payrollId, request.params.payDate)),
  );
};
