import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { ParsedStatementFile, StatementBalance, StatementEntry } from '../../../src/settlement/cash/bank-statement.ts';
import { matchCreditManually, type MatchingPolicy } from '../../../src/settlement/cash/matching-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { describeImport, minorUnitsOfTypedAmount } from '../../../src/faces/console/pages/cash-pages.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, parsedStatement, reconciledPayDate as reconciledPayDateOf, statementEntry, statementFile } from '../../support/cash.ts';
import { csrfTokenIn, refusalIn, signedInAs, type ConsoleBrowser } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// The cash pages on the real database: what each role sees and may do, the figures against the rows,
// and the statement upload (its form token, its refusals, a real file).

const CSV_HEADER = 'statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account';

let t: TestApp;
let account: { sort_code: string; account_number: string };
beforeAll(async () => {
  t = await startTestApp();
  const created = await createCollectionAccount(t.db);
  account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
});
afterAll(async () => t?.close());

const BEFORE_DUE = '2026-11-02';
const policy: MatchingPolicy = cashPolicy(BEFORE_DUE);
const actor = cliActor('cash-pages-test');
const EXPECTED = 24_800;

const reconciledPayDate = () => reconciledPayDateOf(t.db);
let statementNumber = 0;
const statement = (credits: Array<Partial<StatementEntry> & { amount: number }>, id = `CONSOLE-STMT-${++statementNumber}`) => parsedStatement(account, id, credits);
const importParsed = (read: ReturnType<typeof statement>) => t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor, policy }));
/** A statement file built statement by statement (pages, balances, sequence numbers), as the parser hands it over. */
const readOf = (parsed: ParsedStatementFile) => ({
  parsed,
  digest: createHash('sha256').update(JSON.stringify(parsed)).digest(),
  fileName: `${parsed.statements[0]!.statementId}.xml`,
});
const balance = (type: string, amount: number): StatementBalance => ({ type, amount, currency: 'GBP', date: '2026-10-30', position: { line: 1 } });

/** A pay date whose employer sent 200.00 of 248.00 with a reference no rule recognises: a credit waiting in the queue. */
async function shortCreditWaiting() {
  const w = await reconciledPayDate();
  const reference = `payroll ${w.reference} part`;
  await importParsed(statement([{ amount: 20_000, remittanceInformation: reference }]));
  const credit = await t.db.selectFrom('bank_credits').selectAll().where('remittance_information', '=', reference).executeTakeFirstOrThrow();
  return { w, credit };
}

const remittanceOf = (payrollId: string) => t.db.selectFrom('remittances').selectAll().where('payroll_id', '=', payrollId).executeTakeFirstOrThrow();
const matchesOf = (creditId: string) => t.db.selectFrom('remittance_matches').selectAll().where('bank_credit_id', '=', creditId).orderBy('matched_at').orderBy('id').execute();
const auditCount = async () =>
  Number(
    (
      await t.db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const statementCount = async () =>
  Number(
    (
      await t.db
        .selectFrom('bank_statements')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
/** What a refusal says first: the error page's line, or the first reason of a refused form's summary. */
const errorOf = (body: string) => body.match(/<p class="error" role="alert">(.*?)<\/p>/s)?.[1] ?? refusalIn(body)?.reasons[0]?.text;
const decoded = (text: string) => text.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&');
const remittancePage = (payrollId: string) => `/console/cash/remittances/${payrollId}/${PD1}`;
const creditOf = (id: string) => t.db.selectFrom('bank_credits').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const auditOf = (resourceId: string) =>
  t.db.selectFrom('audit_log').select(['actor_kind', 'actor', 'action', 'reason']).where('resource_id', '=', resourceId).orderBy('at').orderBy('id').execute();
/** The exceptions queue's table alone (the credits page also lists the credits set aside). */
const queueTableOf = (body: string) => body.match(/<caption>The exceptions queue.*?<\/table>/s)?.[0] ?? '';
/** The credits the overview counts as the exceptions queue: money unmatched, open or held. */
const creditsWaiting = async () =>
  Number(
    (
      await t.db
        .selectFrom('bank_credits')
        .select((eb) => eb.fn.countAll().as('n'))
        .whereRef('matched_amount', '<', 'amount')
        .where('state', 'in', ['open', 'held'])
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The notice a redirect set, as the page it leads to shows it. */
async function noticeAfter(browser: ConsoleBrowser, response: { statusCode: number; headers: Record<string, unknown> }) {
  expect(response.statusCode).toBe(303);
  const page = await browser.get(String(response.headers.location));
  return decoded(page.body.match(/<p class="notice" role="status">(.*?)<\/p>/s)?.[1] ?? '');
}

function multipart(parts: Array<{ name: string; value: string; fileName?: string }>) {
  const boundary = '----cash-pages-test-boundary';
  const body = parts
    .map((part) =>
      part.fileName
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.fileName}"\r\nContent-Type: text/csv\r\n\r\n${part.value}\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`,
    )
    .join('');
  return { payload: `${body}--${boundary}--\r\n`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** Uploads a file the way the statements page's form does: the token field first, then the file. */
async function upload(browser: ConsoleBrowser, csv: string, token?: string | null) {
  await browser.get('/console/cash/statements');
  const fields = token === null ? [] : [{ name: '_csrf', value: token ?? csrfTokenIn(browser.lastPage) }];
  const { payload, headers } = multipart([...fields, { name: 'statement', value: csv, fileName: 'statement.csv' }]);
  const response = await t.app.inject({ method: 'POST', url: '/console/cash/statements', cookies: browser.cookies, headers, payload });
  // As a browser would: keep the notice the redirect sets.
  for (const cookie of response.cookies) browser.cookies[cookie.name] = cookie.value;
  return response;
}

describe('minorUnitsOfTypedAmount', () => {
  it.each([
    ['248', 'GBP', 24_800],
    ['248.5', 'GBP', 24_850],
    ['248.50', 'GBP', 24_850],
    ['0.01', 'GBP', 1],
    [' 007.10 ', 'GBP', 710],
    ['1500', 'JPY', 1_500],
    ['1.234', 'BHD', 1_234],
    ['999999999999999', 'JPY', 999_999_999_999_999],
  ])('reads %s %s as %i minor units', (text, currency, minor) => expect(minorUnitsOfTypedAmount(text, currency)).toBe(minor));

  it.each([
    ['248.005', 'GBP'],
    ['1.5', 'JPY'],
    ['-5', 'GBP'],
    ['+5', 'GBP'],
    ['0', 'GBP'],
    ['0.00', 'GBP'],
    ['1,000', 'GBP'],
    ['1e3', 'GBP'],
    ['.5', 'GBP'],
    ['5.', 'GBP'],
    ['', 'GBP'],
    ['abc', 'GBP'],
    ['10000000000000.00', 'GBP'],
  ])('refuses %j %s', (text, currency) => expect(() => minorUnitsOfTypedAmount(text, currency)).toThrow(expect.objectContaining({ code: 'amount-invalid' })));
});

describe('cash pages', () => {
  it('lets a viewer read every cash page without a form, and refuses each of its posts, changing nothing', async () => {
    const { w, credit } = await shortCreditWaiting();
    const [match] = await matchCreditManually(t.db, actor, policy, {
      creditId: credit.id,
      allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: 5_000 }],
      reason: 'part of it',
    });
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const { browser: finance } = await signedInAs(t.app, t.db, 'finance');
    const pages = [
      '/console/cash',
      '/console/cash/statements',
      `/console/cash/statements/${credit.bank_statement_id}`,
      '/console/cash/credits',
      `/console/cash/credits/${credit.id}`,
      '/console/cash/reversals',
      '/console/cash/remittances',
      remittancePage(w.payroll.id),
    ];
    for (const url of pages) {
      const page = await browser.get(url);
      expect(page.statusCode, url).toBe(200);
      expect(page.body, url).not.toMatch(/method="post" action="\/console\/cash/);
      expect(page.body, url).not.toContain('type="file"');
    }
    // The same pages carry the forms for finance: the viewer's lack of them is the role, not the data.
    expect((await finance.get('/console/cash/statements')).body).toContain('enctype="multipart/form-data"');
    expect((await finance.get(`/console/cash/credits/${credit.id}`)).body).toContain(`action="/console/cash/credits/${credit.id}/matches"`);
    expect((await finance.get(`/console/cash/credits/${credit.id}`)).body).toContain(`action="/console/cash/credits/${credit.id}/set-aside"`);
    expect((await finance.get('/console/cash/credits')).body).toContain(`action="/console/cash/credits/${credit.id}/set-aside"`);
    expect((await finance.get(remittancePage(w.payroll.id))).body).toContain(`action="/console/cash/matches/${match!.id}/unmatch"`);

    const before = { remittance: await remittanceOf(w.payroll.id), matches: await matchesOf(credit.id), audit: await auditCount(), statements: await statementCount() };
    await browser.get(`/console/cash/credits/${credit.id}`);
    const matchPost = await browser.post(`/console/cash/credits/${credit.id}/matches`, { remittance_1: `${w.payroll.id}/${PD1}`, amount_1: '10.00', reason: 'viewer tries' });
    expect(matchPost.statusCode).toBe(403);
    const unmatchPost = await browser.post(`/console/cash/matches/${match!.id}/unmatch`, { reason: 'viewer tries' });
    expect(unmatchPost.statusCode).toBe(403);
    const setAsidePost = await browser.post(`/console/cash/credits/${credit.id}/set-aside`, { category: 'bank_interest', reason: 'viewer tries' });
    expect(setAsidePost.statusCode).toBe(403);
    const uploadPost = await upload(browser, `${CSV_HEADER}\n`);
    expect(uploadPost.statusCode).toBe(403);
    expect(errorOf(uploadPost.body)).toContain('Your role (viewer) cannot do this');
    expect({ remittance: await remittanceOf(w.payroll.id), matches: await matchesOf(credit.id), audit: await auditCount(), statements: await statementCount() }).toEqual(
      before,
    );
    expect(await creditOf(credit.id)).toMatchObject({ state: 'open', set_aside_category: null });
  });

  it('lets finance match a credit by hand and take the match back with a reason, audited as the person', async () => {
    const { w, credit } = await shortCreditWaiting();
    const { browser, user } = await signedInAs(t.app, t.db, 'finance');
    const queue = await browser.get('/console/cash/credits');
    expect(queue.body).toContain(`href="/console/cash/credits/${credit.id}"`);
    expect(queue.body).toContain(`${formatMoney(20_000, 'GBP')} of ${formatMoney(20_000, 'GBP')}`);

    const page = await browser.get(`/console/cash/credits/${credit.id}`);
    const owed = await remittanceOf(w.payroll.id);
    expect(decoded(page.body)).toContain(
      `<option value="${w.payroll.id}/${PD1}">${w.employer.name} · pay date ${PD1} · ${w.reference} · owes ${formatMoney(owed.expected - owed.received, 'GBP')}</option>`,
    );

    // Amounts a person mistypes are refused whole, before anything is matched.
    for (const amount of ['200.005', '-200', 'two hundred', '0']) {
      const refused = await browser.post(`/console/cash/credits/${credit.id}/matches`, {
        _csrf: csrfTokenIn(page.body),
        remittance_1: `${w.payroll.id}/${PD1}`,
        amount_1: amount,
      });
      expect(refused.statusCode, amount).toBe(422);
      expect(errorOf(refused.body), amount).toBeDefined();
    }
    const halfFilled = await browser.post(`/console/cash/credits/${credit.id}/matches`, {
      _csrf: csrfTokenIn(page.body),
      remittance_1: `${w.payroll.id}/${PD1}`,
      amount_1: '1.00',
      amount_2: '5.00',
    });
    expect(halfFilled.statusCode).toBe(422);
    expect(await matchesOf(credit.id)).toEqual([]);

    const matched = await browser.post(`/console/cash/credits/${credit.id}/matches`, {
      _csrf: csrfTokenIn(page.body),
      remittance_1: `${w.payroll.id}/${PD1}`,
      amount_1: '200.00',
      reason: 'employer says the rest follows',
    });
    expect(matched.headers.location).toBe(`/console/cash/credits/${credit.id}`);
    expect(await noticeAfter(browser, matched)).toBe(`Matched ${formatMoney(20_000, 'GBP')} of credit ${credit.bank_reference} to 1 remittance.`);
    const [match] = await matchesOf(credit.id);
    expect(match).toMatchObject({ payroll_id: w.payroll.id, pay_date: PD1, amount: 20_000, rule: 'manual', matched_by: `${user.email} (console)`, unmatched_at: null });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 20_000 });
    const matchAudit = await t.db.selectFrom('audit_log').select(['actor_kind', 'actor', 'action', 'reason']).where('resource_id', '=', credit.id).execute();
    expect(matchAudit).toEqual([{ actor_kind: 'console', actor: user.email, action: 'bank_credit.matched', reason: 'employer says the rest follows' }]);
    // Fully matched, the credit leaves the queue.
    expect((await browser.get('/console/cash/credits')).body).not.toContain(`href="/console/cash/credits/${credit.id}"`);

    const creditPage = await browser.get(`/console/cash/credits/${credit.id}`);
    expect(creditPage.body).toContain(`action="/console/cash/matches/${match!.id}/unmatch"`);
    const noReason = await browser.post(`/console/cash/matches/${match!.id}/unmatch`, { reason: '  ' });
    expect(noReason.statusCode).toBe(422);
    expect(errorOf(noReason.body)).toBe('Say why the match is taken back');
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 20_000 });

    const undone = await browser.post(`/console/cash/matches/${match!.id}/unmatch`, { reason: 'belongs to another payroll', return_to: 'credit' });
    expect(undone.headers.location).toBe(`/console/cash/credits/${credit.id}`);
    expect(await noticeAfter(browser, undone)).toContain(`Match of ${formatMoney(20_000, 'GBP')} taken back`);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0 });
    const [takenBack] = await matchesOf(credit.id);
    expect(takenBack).toMatchObject({ unmatched_by: `${user.email} (console)`, unmatch_reason: 'belongs to another payroll' });
    expect(takenBack!.unmatched_at).not.toBeNull();
    const unmatchAudit = await t.db.selectFrom('audit_log').select(['actor_kind', 'actor', 'action', 'reason']).where('resource_id', '=', match!.id).execute();
    expect(unmatchAudit).toEqual([{ actor_kind: 'console', actor: user.email, action: 'remittance_match.unmatched', reason: 'belongs to another payroll' }]);
    // Taken back, the match still shows, with who and why; and the credit waits again.
    const after = decoded((await browser.get(`/console/cash/credits/${credit.id}`)).body);
    expect(after).toContain(`by ${user.email} (console): belongs to another payroll`);
    expect(after).not.toContain(`action="/console/cash/matches/${match!.id}/unmatch"`);
    expect((await browser.get('/console/cash/credits')).body).toContain(`href="/console/cash/credits/${credit.id}"`);
  });

  it('shows a refused match on the credit page again: titled for what it is, each reason linking to its field, the form as it was typed', async () => {
    const { w, credit } = await shortCreditWaiting();
    const { browser } = await signedInAs(t.app, t.db, 'finance');
    const page = await browser.get(`/console/cash/credits/${credit.id}`);
    const remittance = `${w.payroll.id}/${PD1}`;

    // More than the credit holds: the service refuses it (409), and says by how much.
    const over = await browser.post(`/console/cash/credits/${credit.id}/matches`, {
      _csrf: csrfTokenIn(page.body),
      remittance_1: remittance,
      amount_1: '250.00',
      reason: 'employer phoned',
    });
    expect(over.statusCode).toBe(409);
    expect(over.body).not.toContain('Something went wrong');
    expect(over.body).toContain(`<title>Error: Credit ${credit.bank_reference} · `);
    expect(refusalIn(over.body)).toEqual({
      heading: 'The match was not made',
      reasons: [{ text: `The credit has ${formatMoney(20_000, 'GBP')} unmatched; the allocations add up to ${formatMoney(25_000, 'GBP')}`, field: 'amount_1' }],
    });
    expect(over.body).toContain('Correct what is listed and send the form again');
    // The form again, as it was sent: the remittance chosen, the amount and the reason typed, the amount marked.
    expect(over.body).toContain(`<option value="${remittance}" selected>`);
    expect(over.body).toMatch(/<input type="text" id="amount_1" name="amount_1"[^>]* value="250.00" aria-invalid="true">/);
    expect(over.body).toMatch(/id="match-reason" name="reason"[^>]* value="employer phoned">/);

    // Every mistake of the form at once, each on its row.
    const mistyped = await browser.post(`/console/cash/credits/${credit.id}/matches`, {
      remittance_1: remittance,
      amount_1: '200.005',
      amount_2: '5.00',
    });
    expect(mistyped.statusCode).toBe(422);
    const refused = refusalIn(mistyped.body)!;
    expect(refused.heading).toBe('The match was not made');
    expect(refused.reasons.map((reason) => reason.field)).toEqual(['amount_1', 'remittance_2']);
    expect(refused.reasons[0]!.text).toMatch(/^Row 1: /);
    expect(refused.reasons[1]!.text).toBe('Row 2: choose a remittance and give an amount, or leave both empty');
    expect(mistyped.body).toContain('value="200.005"');
    expect(mistyped.body).toContain('value="5.00"');
    expect(await matchesOf(credit.id)).toEqual([]);

    // The page shown again carries a fresh form token: the corrected form goes through.
    const matched = await browser.post(`/console/cash/credits/${credit.id}/matches`, { _csrf: csrfTokenIn(mistyped.body), remittance_1: remittance, amount_1: '200.00' });
    expect(matched.statusCode).toBe(303);
  });

  it('lets an operator split a credit over two remittances and unmatch from the remittance page', async () => {
    const first = await reconciledPayDate();
    const second = await reconciledPayDate();
    const reference = `two payrolls ${first.reference}`;
    await importParsed(statement([{ amount: 30_000, remittanceInformation: reference }]));
    const credit = await t.db.selectFrom('bank_credits').selectAll().where('remittance_information', '=', reference).executeTakeFirstOrThrow();
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    await browser.get(`/console/cash/credits/${credit.id}`);
    const matched = await browser.post(`/console/cash/credits/${credit.id}/matches`, {
      remittance_1: `${first.payroll.id}/${PD1}`,
      amount_1: '248',
      remittance_2: `${second.payroll.id}/${PD1}`,
      amount_2: '52.00',
      remittance_3: '',
      amount_3: '',
      reason: 'employer paid two payrolls at once',
    });
    expect(await noticeAfter(browser, matched)).toBe(`Matched ${formatMoney(30_000, 'GBP')} of credit ${credit.bank_reference} to 2 remittances.`);
    expect(await remittanceOf(first.payroll.id)).toMatchObject({ received: 24_800 });
    expect(await remittanceOf(second.payroll.id)).toMatchObject({ received: 5_200 });
    expect((await matchesOf(credit.id)).map((m) => [m.payroll_id, m.amount, m.rule])).toEqual(
      expect.arrayContaining([
        [first.payroll.id, 24_800, 'manual'],
        [second.payroll.id, 5_200, 'manual'],
      ]),
    );

    const page = await browser.get(remittancePage(second.payroll.id));
    const match = (await matchesOf(credit.id)).find((m) => m.payroll_id === second.payroll.id)!;
    expect(page.body).toContain(`href="/console/cash/credits/${credit.id}"`);
    const undone = await browser.post(`/console/cash/matches/${match.id}/unmatch`, { reason: 'second payroll paid separately', return_to: 'remittance' });
    expect(undone.headers.location).toBe(remittancePage(second.payroll.id));
    expect(await remittanceOf(second.payroll.id)).toMatchObject({ received: 0 });
    expect(await remittanceOf(first.payroll.id)).toMatchObject({ received: 24_800 });
  });

  it('refuses to unmatch money already paid out, says so, and changes nothing', async () => {
    const w = await reconciledPayDate();
    await importParsed(statement([{ amount: EXPECTED, remittanceInformation: w.reference }]));
    const match = await t.db.selectFrom('remittance_matches').selectAll().where('payroll_id', '=', w.payroll.id).executeTakeFirstOrThrow();
    expect(match.rule).toBe('exact');
    await runPayouts(t.db, { today: '2026-11-10', settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });
    const { browser } = await signedInAs(t.app, t.db, 'finance');
    await browser.get(remittancePage(w.payroll.id));
    const before = { remittance: await remittanceOf(w.payroll.id), audit: await auditCount() };
    const refused = await browser.post(`/console/cash/matches/${match.id}/unmatch`, { reason: 'second thoughts', return_to: 'remittance' });
    expect(refused.statusCode).toBe(409);
    expect(decoded(errorOf(refused.body) ?? '')).toBe(
      `Not taken back: this remittance's money is already paid out (${formatMoney(EXPECTED, 'GBP')}); without this match it would have received only ${formatMoney(0, 'GBP')}.`,
    );
    expect({ remittance: await remittanceOf(w.payroll.id), audit: await auditCount() }).toEqual(before);
    expect((await t.db.selectFrom('remittance_matches').select('unmatched_at').where('id', '=', match.id).executeTakeFirstOrThrow()).unmatched_at).toBeNull();
  });

  it('shows the figures the database holds: overview counts, remittance list and detail, statements', async () => {
    const { w, credit } = await shortCreditWaiting();
    await matchCreditManually(t.db, actor, policy, { creditId: credit.id, allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: 15_000 }], reason: null });
    const { browser } = await signedInAs(t.app, t.db, 'viewer');

    const overview = await browser.get('/console/cash');
    const counts = await t.db
      .selectFrom('remittances')
      .select(['status', (eb) => eb.fn.countAll().as('n')])
      .groupBy('status')
      .execute();
    for (const status of ['expected', 'received', 'short', 'over', 'late', 'shortfall']) {
      const shown = overview.body.match(new RegExp(`status=${status}".*?</a></td><td>(\\d+)</td>`, 's'))?.[1];
      expect(shown, status).toBe(String(Number(counts.find((row) => row.status === status)?.n ?? 0)));
    }
    const waiting = await creditsWaiting();
    expect(waiting).toBeGreaterThan(0);
    expect(overview.body).toContain(`Credits to match (${waiting})`);

    const row = await remittanceOf(w.payroll.id);
    const detail = decoded((await browser.get(remittancePage(w.payroll.id))).body);
    const money = (minor: number) => formatMoney(minor, row.currency);
    for (const [label, value] of [
      ['Requested', money(row.requested)],
      ['Deducted', money(row.deducted!)],
      ['Expected', money(row.expected)],
      ['Received', money(15_000)],
      ['Owed', money(row.expected - row.received)],
      ['Due date', row.due_date],
      ['Reference', w.reference],
      ['Employer', w.employer.name],
    ] as const) {
      expect(detail, label).toContain(`<dt>${label}</dt><dd>${value}</dd>`);
    }
    expect(detail).toMatch(new RegExp(`<dt>Status</dt><dd><span class="status[^"]*"><span aria-hidden="true">.</span> ${row.status}</span></dd>`));
    expect(detail).toContain(`href="/console/cash/credits/${credit.id}"`);

    const list = await browser.get(`/console/cash/remittances?status=${row.status}&pay_date=${PD1}`);
    expect(list.body).toContain(`href="${remittancePage(w.payroll.id)}"`);
    expect(list.body).toContain(`<td>${w.reference}</td><td>${money(row.expected)}</td><td>${money(row.received)}</td><td>${money(row.expected - row.received)}</td>`);
    const otherStatus = row.status === 'received' ? 'over' : 'received';
    expect((await browser.get(`/console/cash/remittances?status=${otherStatus}&pay_date=${PD1}`)).body).not.toContain(`href="${remittancePage(w.payroll.id)}"`);
    expect((await browser.get('/console/cash/remittances?status=nonsense')).statusCode).toBe(400);

    const stored = await t.db.selectFrom('bank_statements').selectAll().where('id', '=', credit.bank_statement_id).executeTakeFirstOrThrow();
    const statements = (await browser.get('/console/cash/statements')).body;
    expect(statements).toContain(
      `<td><a href="/console/cash/statements/${stored.id}">${stored.statement_id}</a></td><td>csv</td><td>—</td><td>—</td><td>${stored.file_name}</td><td>1</td><td>${formatMoney(stored.credits_total, 'GBP')}</td><td>new 1</td><td>None</td>`,
    );
  });

  it('describes an import: new credits, matches by rule, the queue left; the same file again changes nothing', async () => {
    const w = await reconciledPayDate();
    const read = statement([
      { amount: EXPECTED, remittanceInformation: w.reference },
      { amount: 777, remittanceInformation: 'unknown payer' },
    ]);
    const first = await importParsed(read);
    // The rules' count: open credits with money left (held ones wait for a person, set-aside ones left the queue).
    const queue = Number(
      (
        await t.db
          .selectFrom('bank_credits')
          .select((eb) => eb.fn.countAll().as('n'))
          .whereRef('matched_amount', '<', 'amount')
          .where('state', '=', 'open')
          .executeTakeFirstOrThrow()
      ).n,
    );
    expect(describeImport(first)).toBe(
      `Statement ${read.parsed.statements[0]!.statementId} (csv) imported: 2 new credits; 1 match by the rules (exact 1); ${queue} ${queue === 1 ? 'credit' : 'credits'} left in the exceptions queue.`,
    );
    expect(describeImport(await importParsed(read))).toBe(`Statement ${read.parsed.statements[0]!.statementId} (csv) was already imported, nothing changed.`);
  });
});

describe('statement upload', () => {
  it('checks the form token before the file: missing or wrong is refused, nothing stored', async () => {
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const before = { statements: await statementCount(), audit: await auditCount() };
    for (const token of [null, 'wrong-token']) {
      const refused = await upload(browser, `${CSV_HEADER}\n`, token);
      expect(refused.statusCode, String(token)).toBe(403);
      expect(errorOf(refused.body)).toContain('This form has expired or did not come from the console');
    }
    const noFile = await t.app.inject({
      method: 'POST',
      url: '/console/cash/statements',
      cookies: browser.cookies,
      ...multipart([{ name: '_csrf', value: csrfTokenIn(browser.lastPage) }]),
    });
    expect(noFile.statusCode).toBe(400);
    expect(errorOf(noFile.body)).toBe('Choose a statement file to upload');
    expect({ statements: await statementCount(), audit: await auditCount() }).toEqual(before);
  });

  it('shows a file the parser cannot read as an error page, and stores nothing', async () => {
    const { browser } = await signedInAs(t.app, t.db, 'finance');
    const before = await statementCount();
    const refused = await upload(browser, 'this is not,a bank statement\n1,2\n');
    expect(refused.statusCode).toBe(422);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(errorOf(refused.body)).toMatch(/^statement.csv: unknown column/);
    // The statements page again: what was refused and what to do, linking to the file field; the form to choose the file again.
    expect(refused.body).not.toContain('Something went wrong');
    expect(refused.body).toContain('<title>Error: Bank statements · ');
    const summary = refusalIn(refused.body)!;
    expect(summary.heading).toBe('The statement was not imported');
    expect(summary.reasons).toEqual([{ text: expect.stringMatching(/^statement.csv: unknown column/), field: 'statement-file' }]);
    expect(refused.body).toContain('The file is not kept (a browser cannot be handed a file back): choose it again');
    expect(refused.body).toMatch(/<input type="file" id="statement-file" name="statement"[^>]* aria-invalid="true">/);
    expect(await statementCount()).toBe(before);
  });

  it('imports an uploaded CSV statement, matches it, and changes nothing on the same file again', async () => {
    const w = await reconciledPayDate();
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const id = `UPLOAD-${w.reference}`;
    const csv = `${CSV_HEADER}\n${id},${account.sort_code},${account.account_number},GBP,${id}-1,2026-10-30,2026-10-30,credit,248.00,${w.reference},Employer Ltd,\n`;
    const imported = await upload(browser, csv);
    expect(await noticeAfter(browser, imported)).toMatch(new RegExp(`^Statement ${id} \\(csv\\) imported: 1 new credit; 1 match by the rules \\(exact 1\\); `));
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED });
    const stored = await t.db.selectFrom('bank_statements').selectAll().where('statement_id', '=', id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ file_name: 'statement.csv', credits: 1, credits_total: EXPECTED });
    expect(stored.imported_by).toContain('(console)');
    const again = await upload(browser, csv);
    expect(await noticeAfter(browser, again)).toBe(`Statement ${id} (csv) was already imported, nothing changed.`);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED });
  });
});

describe('credit decisions', () => {
  it('lets finance set a credit aside from the queue and restore it from its page, with the form token and a reason, audited as the person', async () => {
    const { w, credit } = await shortCreditWaiting();
    const { browser, user } = await signedInAs(t.app, t.db, 'finance');
    const queue = await browser.get('/console/cash/credits');
    expect(queueTableOf(queue.body)).toContain(`href="/console/cash/credits/${credit.id}"`);
    expect(queueTableOf(queue.body)).toContain(`action="/console/cash/credits/${credit.id}/set-aside"`);
    const waitingBefore = await creditsWaiting();

    // A form from elsewhere, or one missing its category or reason, changes nothing.
    const before = { credit: await creditOf(credit.id), audit: await auditCount() };
    const forged = await browser.post(`/console/cash/credits/${credit.id}/set-aside`, { _csrf: 'wrong-token', category: 'bank_interest', reason: 'interest' });
    expect(forged.statusCode).toBe(403);
    expect(errorOf(forged.body)).toContain('This form has expired or did not come from the console');
    await browser.get('/console/cash/credits');
    const noReason = await browser.post(`/console/cash/credits/${credit.id}/set-aside`, { category: 'bank_interest', reason: ' ', return_to: 'queue' });
    expect(noReason.statusCode).toBe(422);
    expect(errorOf(noReason.body)).toBe('Say why this money is no remittance');
    // The queue again, the credit's form as it was sent, the reason marked to fill in.
    expect(refusalIn(noReason.body)).toEqual({
      heading: 'The credit was not set aside',
      reasons: [{ text: 'Say why this money is no remittance', field: `set-aside-reason-${credit.id}` }],
    });
    expect(noReason.body).toContain('<title>Error: Credits to match · ');
    expect(queueTableOf(noReason.body)).toContain('<option value="bank_interest" selected>');
    expect(queueTableOf(noReason.body)).toMatch(new RegExp(`id="set-aside-reason-${credit.id}"[^>]* aria-invalid="true">`));
    const noCategory = await browser.post(`/console/cash/credits/${credit.id}/set-aside`, { category: 'petty_cash', reason: 'interest', return_to: 'queue' });
    expect(noCategory.statusCode).toBe(422);
    expect(errorOf(noCategory.body)).toBe('Choose what the credit is from the list');
    expect({ credit: await creditOf(credit.id), audit: await auditCount() }).toEqual(before);

    const setAside = await browser.post(`/console/cash/credits/${credit.id}/set-aside`, {
      category: 'bank_interest',
      reason: 'October interest on the account',
      return_to: 'queue',
    });
    expect(setAside.headers.location).toBe('/console/cash/credits');
    expect(await noticeAfter(browser, setAside)).toBe(
      `Credit ${credit.bank_reference} set aside (Bank interest): ${formatMoney(20_000, 'GBP')} leaves the exceptions queue, and no rule will match it.`,
    );
    expect(await creditOf(credit.id)).toMatchObject({
      state: 'set_aside',
      set_aside_category: 'bank_interest',
      state_reason: 'October interest on the account',
      state_changed_by: `${user.email} (console)`,
    });
    expect(await auditOf(credit.id)).toEqual([{ actor_kind: 'console', actor: user.email, action: 'bank_credit.set_aside', reason: 'October interest on the account' }]);
    // Out of the queue (and its count), listed among the credits set aside.
    const afterQueue = await browser.get('/console/cash/credits');
    expect(queueTableOf(afterQueue.body)).not.toContain(`href="/console/cash/credits/${credit.id}"`);
    expect(afterQueue.body).toMatch(new RegExp(`<caption>Credits set aside.*href="/console/cash/credits/${credit.id}"`, 's'));
    expect(await creditsWaiting()).toBe(waitingBefore - 1);
    expect((await browser.get('/console/cash')).body).toContain(`Credits to match (${waitingBefore - 1})`);

    // Its page: the state with who, when and why, the history, and the way back; no match form.
    const page = decoded((await browser.get(`/console/cash/credits/${credit.id}`)).body);
    expect(page).toMatch(/<dt>State<\/dt><dd><span class="status status-neutral"><span aria-hidden="true">•<\/span> set aside<\/span><\/dd>/);
    expect(page).toContain('<dt>Why</dt><dd>October interest on the account</dd>');
    expect(page).toContain('<dt>Set aside as</dt><dd>Bank interest</dd>');
    expect(page).toMatch(new RegExp(`<dt>State changed</dt><dd>\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC by ${user.email} \\(console\\)</dd>`));
    expect(page).toMatch(new RegExp(`<td>Set aside</td><td>${user.email} \\(console\\)</td><td>October interest on the account</td>`));
    expect(page).toContain(`action="/console/cash/credits/${credit.id}/restore"`);
    expect(page).toContain('Restore to the queue');
    expect(page).not.toContain(`action="/console/cash/credits/${credit.id}/matches"`);
    expect(page).not.toContain(`action="/console/cash/credits/${credit.id}/set-aside"`);
    // The service refuses matching it by hand too: the form's absence is not the only guard.
    const matchPost = await browser.post(`/console/cash/credits/${credit.id}/matches`, { remittance_1: `${w.payroll.id}/${PD1}`, amount_1: '1.00' });
    expect(matchPost.statusCode).toBe(409);
    expect(await matchesOf(credit.id)).toEqual([]);

    const { browser: viewer } = await signedInAs(t.app, t.db, 'viewer');
    await viewer.get(`/console/cash/credits/${credit.id}`);
    expect((await viewer.post(`/console/cash/credits/${credit.id}/restore`, { reason: 'viewer tries' })).statusCode).toBe(403);
    await browser.get(`/console/cash/credits/${credit.id}`);
    const restoreNoReason = await browser.post(`/console/cash/credits/${credit.id}/restore`, { reason: '', return_to: 'credit' });
    expect(restoreNoReason.statusCode).toBe(422);
    expect(errorOf(restoreNoReason.body)).toBe('Say why the credit goes back to the rules');
    expect((await creditOf(credit.id)).state).toBe('set_aside');

    const restored = await browser.post(`/console/cash/credits/${credit.id}/restore`, { reason: 'the bank says it is a remittance after all', return_to: 'credit' });
    expect(restored.headers.location).toBe(`/console/cash/credits/${credit.id}`);
    expect(await noticeAfter(browser, restored)).toBe(
      `Credit ${credit.bank_reference} is open again: ${formatMoney(20_000, 'GBP')} waits in the exceptions queue, and the rules try it at the next import.`,
    );
    expect(await creditOf(credit.id)).toMatchObject({ state: 'open', set_aside_category: null, state_reason: 'the bank says it is a remittance after all' });
    expect((await auditOf(credit.id)).map((row) => [row.actor_kind, row.actor, row.action, row.reason])).toEqual([
      ['console', user.email, 'bank_credit.set_aside', 'October interest on the account'],
      ['console', user.email, 'bank_credit.restored', 'the bank says it is a remittance after all'],
    ]);
    expect(queueTableOf((await browser.get('/console/cash/credits')).body)).toContain(`href="/console/cash/credits/${credit.id}"`);
    expect(decoded((await browser.get(`/console/cash/credits/${credit.id}`)).body)).toMatch(/<td>Set aside<\/td>.*<td>Restored to the rules<\/td>/s);
  });

  it('shows a conflicting credit held in the queue with its reason, and lets an operator release it to the rules', async () => {
    const reference = `CONFLICT-${Date.now()}`;
    await importParsed(statement([{ amount: 5_000, bankReference: reference }]));
    const second = await importParsed(statement([{ amount: 6_000, bankReference: reference }]));
    const [entry] = second.statements[0]!.entries;
    expect(entry).toMatchObject({ outcome: 'conflicting' });
    const held = await creditOf(entry!.creditId!);
    expect(held.state).toBe('held');
    expect(held.state_reason).toMatch(/^conflicts with a credit already on the account: /);
    expect(describeImport(second)).toContain('0 new credits, 1 conflicting (held)');

    const { browser, user } = await signedInAs(t.app, t.db, 'operator');
    const queue = decoded(queueTableOf((await browser.get('/console/cash/credits')).body));
    const row = queue.match(new RegExp(`<tr><td><a href="/console/cash/credits/${held.id}">.*?</tr>`, 's'))?.[0] ?? '';
    expect(row).toContain(`<span class="status status-attention"><span aria-hidden="true">⚠</span> held</span>: ${held.state_reason}`);
    expect(row).toContain(`action="/console/cash/credits/${held.id}/restore"`);
    expect(row).toContain('Release to the rules');
    expect(row).toContain(`action="/console/cash/credits/${held.id}/set-aside"`);

    const page = decoded((await browser.get(`/console/cash/credits/${held.id}`)).body);
    expect(page).toContain(`<dt>Account servicer reference (AcctSvcrRef)</dt><dd>${reference}</dd>`);
    expect(page).toContain('<dt>Entry reference (NtryRef)</dt><dd>—</dd>');
    expect(page).toContain('<dt>Booked</dt><dd>Booked by a statement (camt.053 or CSV)</dd>');
    expect(page).toMatch(/<dt>State changed<\/dt><dd>[^<]* UTC by statement import<\/dd>/);
    expect(page).toContain(`href="/console/cash/statements/${second.statement.id}"`);

    await browser.get('/console/cash/credits');
    const released = await browser.post(`/console/cash/credits/${held.id}/restore`, { reason: 'a second payment, not a correction', return_to: 'queue' });
    expect(released.headers.location).toBe('/console/cash/credits');
    expect(await noticeAfter(browser, released)).toContain(`Credit ${held.bank_reference} is open again`);
    expect(await creditOf(held.id)).toMatchObject({ state: 'open', state_reason: 'a second payment, not a correction', state_changed_by: `${user.email} (console)` });
    expect(await auditOf(held.id)).toEqual([{ actor_kind: 'console', actor: user.email, action: 'bank_credit.restored', reason: 'a second payment, not a correction' }]);
    const after = decoded(queueTableOf((await browser.get('/console/cash/credits')).body));
    expect(after.match(new RegExp(`<tr><td><a href="/console/cash/credits/${held.id}">.*?</tr>`, 's'))?.[0]).toContain(
      '<span class="status status-neutral"><span aria-hidden="true">•</span> open</span>: a second payment, not a correction',
    );
  });
});

describe('reversals to place', () => {
  it('lists a reversal no rule could place; finance names the credit, and the pay date paid out of it shows the shortfall', async () => {
    const w = await reconciledPayDate();
    const paid = await importParsed(
      statement([
        { amount: EXPECTED, remittanceInformation: w.reference },
        { amount: EXPECTED, remittanceInformation: 'not a payroll' },
        { amount: 777, remittanceInformation: 'small change' },
      ]),
    );
    const [paidEntry, otherEntry, smallEntry] = paid.statements[0]!.entries;
    expect((await remittanceOf(w.payroll.id)).received).toBe(EXPECTED);
    await runPayouts(t.db, { today: '2026-11-10', settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });
    // Two credits (at least) of the amount, no reference in common: the rules leave it to a person.
    const reversal = await importParsed(statement([{ direction: 'debit', reversal: true, amount: EXPECTED, bookingDate: '2026-10-31' }]));
    expect(reversal.reversals).toMatchObject({ applied: 0, unresolved: 1, shortfall: 0 });
    expect(describeImport(reversal)).toContain('reversals: 0 applied, 1 to place by hand');
    const entry = await t.db.selectFrom('bank_statement_entries').selectAll().where('bank_statement_id', '=', reversal.statement.id).executeTakeFirstOrThrow();
    expect(entry.outcome).toBe('unresolved_reversal');
    const placeAction = `action="/console/cash/reversals/${entry.id}/place"`;

    const { browser: viewer } = await signedInAs(t.app, t.db, 'viewer');
    const viewerPage = await viewer.get('/console/cash/reversals');
    expect(viewerPage.body).toContain(entry.bank_reference);
    expect(viewerPage.body).not.toContain(placeAction);
    expect((await viewer.get('/console/cash')).body).toMatch(/Reversals to place \([1-9]\d*\)/);

    const { browser, user } = await signedInAs(t.app, t.db, 'finance');
    const page = decoded((await browser.get('/console/cash/reversals')).body);
    expect(page).toContain(placeAction);
    expect(page).toContain(`<option value="${paidEntry!.creditId}">`);
    expect(page).toContain(`<option value="${otherEntry!.creditId}">`);
    expect(page).not.toContain(`<option value="${smallEntry!.creditId}">`);
    expect(page).toContain(`Choose a credit of ${formatMoney(EXPECTED, 'GBP')}`);

    const before = {
      remittance: await remittanceOf(w.payroll.id),
      audit: await auditCount(),
      entry: await t.db.selectFrom('bank_statement_entries').selectAll().where('id', '=', entry.id).executeTakeFirstOrThrow(),
    };
    expect((await viewer.post(`/console/cash/reversals/${entry.id}/place`, { bank_credit_id: paidEntry!.creditId!, reason: 'viewer tries' })).statusCode).toBe(403);
    const forged = await browser.post(`/console/cash/reversals/${entry.id}/place`, { _csrf: 'wrong-token', bank_credit_id: paidEntry!.creditId!, reason: 'bank says so' });
    expect(forged.statusCode).toBe(403);
    await browser.get('/console/cash/reversals');
    const noReason = await browser.post(`/console/cash/reversals/${entry.id}/place`, { bank_credit_id: paidEntry!.creditId!, reason: '' });
    expect(noReason.statusCode).toBe(422);
    expect(errorOf(noReason.body)).toBe('Say how you know this is the credit the bank took back');
    const otherAmount = await browser.post(`/console/cash/reversals/${entry.id}/place`, { bank_credit_id: smallEntry!.creditId!, reason: 'bank says so' });
    expect(otherAmount.statusCode).toBe(422);
    expect(errorOf(otherAmount.body)).toBe(`The reversal is of ${formatMoney(EXPECTED, 'GBP')}; credit ${smallEntry!.bankReference} is of ${formatMoney(777, 'GBP')}`);
    expect({
      remittance: await remittanceOf(w.payroll.id),
      audit: await auditCount(),
      entry: await t.db.selectFrom('bank_statement_entries').selectAll().where('id', '=', entry.id).executeTakeFirstOrThrow(),
    }).toEqual(before);

    const placed = await browser.post(`/console/cash/reversals/${entry.id}/place`, { bank_credit_id: paidEntry!.creditId!, reason: 'the bank named it on the phone' });
    expect(placed.headers.location).toBe('/console/cash/reversals');
    expect(await noticeAfter(browser, placed)).toBe(
      `Reversal ${entry.bank_reference} placed: credit ${paidEntry!.bankReference} (${formatMoney(EXPECTED, 'GBP')}) is taken back; ${formatMoney(EXPECTED, 'GBP')} already paid out of it is now owed back (shortfall).`,
    );
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0, shortfall: EXPECTED, status: 'shortfall' });
    expect(await creditOf(paidEntry!.creditId!)).toMatchObject({ state: 'reversed' });
    expect(await t.db.selectFrom('bank_statement_entries').selectAll().where('id', '=', entry.id).executeTakeFirstOrThrow()).toMatchObject({
      bank_credit_id: paidEntry!.creditId,
      resolved_by: `${user.email} (console)`,
    });
    expect(await auditOf(entry.id)).toEqual([{ actor_kind: 'console', actor: user.email, action: 'bank_reversal.placed', reason: 'the bank named it on the phone' }]);
    expect((await browser.get('/console/cash/reversals')).body).not.toContain(placeAction);

    // The remittance, in the list and on its page: owed back, and the status that says so.
    const owedBadge = '<span class="status status-owed"><span aria-hidden="true">⚠</span> shortfall</span>';
    const list = (await viewer.get(`/console/cash/remittances?status=shortfall&pay_date=${PD1}`)).body;
    expect(list).toContain(`href="${remittancePage(w.payroll.id)}"`);
    expect(list).toContain(`<td>${formatMoney(EXPECTED, 'GBP')}</td><td><strong>${formatMoney(EXPECTED, 'GBP')}</strong></td><td>${owedBadge}</td>`);
    const detail = decoded((await viewer.get(remittancePage(w.payroll.id))).body);
    expect(detail).toContain(`<dt>Owed back</dt><dd><strong>${formatMoney(EXPECTED, 'GBP')}</strong>: the bank took back money already paid out`);
    expect(detail).toContain(`<dt>Status</dt><dd>${owedBadge}</dd>`);
    // A remittance with nothing owed back says nothing of it.
    const other = await reconciledPayDate();
    expect((await viewer.get(remittancePage(other.payroll.id))).body).not.toContain('Owed back');

    // The credit taken back: its state, history, and no decision forms left.
    const creditPage = decoded((await browser.get(`/console/cash/credits/${paidEntry!.creditId}`)).body);
    expect(creditPage).toContain('> reversed</span></dd>');
    expect(creditPage).toMatch(new RegExp(`<td>Reversed by the bank</td><td>${user.email} \\(console\\)</td>`));
    expect(creditPage).not.toContain('/set-aside"');
    expect(creditPage).not.toContain('/restore"');
    // The statement's entry says who placed it.
    const statementPage = decoded((await viewer.get(`/console/cash/statements/${reversal.statement.id}`)).body);
    expect(statementPage).toContain(`Placed by ${user.email} (console) at `);
    expect(statementPage).toContain('<span aria-hidden="true">•</span> reversal placed by hand</span>');
    expect(statementPage).not.toContain('unresolved reversal</span>');
    expect(statementPage).toContain(`href="/console/cash/credits/${paidEntry!.creditId}">Credit taken back</a>`);
  });

  it('describes a reversal the rules placed, and the money it leaves owed back, in the import notice', async () => {
    const w = await reconciledPayDateOf(t.db, { deducted: [12_550, 8_000, 1_000] });
    const expected = 21_550;
    await importParsed(statement([{ amount: expected, remittanceInformation: w.reference }]));
    await runPayouts(t.db, { today: '2026-11-10', settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });
    const outcome = await importParsed(statement([{ direction: 'debit', reversal: true, amount: expected, remittanceInformation: w.reference, bookingDate: '2026-10-31' }]));
    expect(outcome.reversals).toMatchObject({ applied: 1, unresolved: 0, shortfall: expected });
    expect(describeImport(outcome)).toBe(
      `Statement ${outcome.statement.statement_id} (csv) imported: 0 new credits; reversals: 1 applied, 0 to place by hand; ${formatMoney(expected, 'GBP')} already paid out is now owed back (shortfall); 0 matches by the rules; ${outcome.matching!.unmatchedCredits} credits left in the exceptions queue.`,
    );
  });
});

describe('statements and their entries', () => {
  it('shows integrity findings first, and per statement its page, sequence and entry outcomes; its page lists every entry, for viewers too', async () => {
    const run = Date.now();
    const first = statementFile(account, `SEQ-A-${run}`, [statementEntry(0, `SEQ-A-${run}-0`, { amount: 1_111 })], { format: 'camt.053', electronicSequenceNumber: '7001' });
    first.statements[0]!.balances = [balance('OPBD', 0), balance('CLBD', 1_111)];
    const firstOutcome = await importParsed(readOf(first));
    expect(firstOutcome.statement.integrity_findings).toEqual([]);

    const entries = [
      statementEntry(0, `SEQ-B-${run}-0`, { amount: 2_222 }),
      statementEntry(1, `SEQ-B-${run}-1`, { amount: 500, direction: 'debit' }),
      statementEntry(2, `SEQ-B-${run}-2`, { amount: 0, problem: 'the amount "12,5" is not a number' }),
    ];
    const second = statementFile(account, `SEQ-B-${run}`, entries, { format: 'camt.053', electronicSequenceNumber: '7004' });
    second.statements[0]!.balances = [balance('OPBD', 1_111), balance('CLBD', 9_999)];
    const outcome = await importParsed(readOf(second));
    const stored = outcome.statement;
    expect(stored.integrity_findings.map((finding) => finding.code).sort()).toEqual(['balance_mismatch', 'sequence_gap']);
    expect(describeImport(outcome)).toMatch(
      new RegExp(
        `^Statement SEQ-B-${run} \\(camt\\.053\\) imported: 1 new credit, 1 unusable entry, findings: (balances do not add up, sequence gap|sequence gap, balances do not add up); `,
      ),
    );
    const paged = statementFile(account, `PAGED-${run}`, [statementEntry(0, `PAGED-${run}-0`, { amount: 3_333 })], { page: { number: 2, last: true } });
    const pagedOutcome = await importParsed(readOf(paged));

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const list = decoded((await browser.get('/console/cash/statements')).body);
    const findings = list.match(/<section class="findings".*?<\/section>/s)?.[0] ?? '';
    expect(list.indexOf('<section class="findings"')).toBeLessThan(list.indexOf('<table>'));
    for (const finding of stored.integrity_findings) {
      const label = finding.code === 'balance_mismatch' ? 'balances do not add up' : 'sequence gap';
      expect(findings).toContain(`<a href="/console/cash/statements/${stored.id}">Statement SEQ-B-${run} (camt.053)</a>: <strong>${label}</strong>: ${finding.detail}</li>`);
    }
    expect(findings).toContain('7002 to 7003 (2 statements) are missing');
    expect(findings).not.toContain(`SEQ-A-${run}`);
    expect(list).toContain(
      `<a href="/console/cash/statements/${stored.id}">SEQ-B-${run}</a></td><td>camt.053</td><td>—</td><td>7004</td><td>SEQ-B-${run}.xml</td><td>1</td><td>${formatMoney(2_222, 'GBP')}</td><td>new 1, debit 1, unusable 1</td><td><span class="status status-attention"><span aria-hidden="true">⚠</span> 2 findings</span></td>`,
    );
    expect(list).toContain(`<a href="/console/cash/statements/${pagedOutcome.statement.id}">PAGED-${run}</a></td><td>csv</td><td>2 (last)</td>`);
    expect(list).toContain(`<a href="/console/cash/statements/${firstOutcome.statement.id}">SEQ-A-${run}</a></td><td>camt.053</td><td>—</td><td>7001</td>`);
    // The overview warns too.
    expect(decoded((await browser.get('/console/cash')).body)).toContain(`<strong>sequence gap</strong>`);

    const page = await browser.get(`/console/cash/statements/${stored.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toMatch(/method="post" action="\/console\/cash/);
    const body = decoded(page.body);
    expect(body).toContain(`<h1>Statement SEQ-B-${run} (camt.053)</h1>`);
    expect(body).toMatch(/<section class="findings".*<strong>balances do not add up<\/strong>.*<\/section>/s);
    expect(body).toContain('<dt>Electronic sequence number</dt><dd>7004</dd>');
    const creditId = outcome.statements[0]!.entries[0]!.creditId!;
    expect(body).toContain(
      `<tr><td>1</td><td>credit</td><td>${formatMoney(2_222, 'GBP')}</td><td>2026-10-30</td><td>SEQ-B-${run}-0</td><td><span class="status status-neutral"><span aria-hidden="true">•</span> new</span></td><td><a href="/console/cash/credits/${creditId}">The credit</a></td><td>—</td></tr>`,
    );
    expect(body).toContain(`<tr><td>2</td><td>debit</td><td>${formatMoney(500, 'GBP')}</td>`);
    expect(body).toContain(
      `<td>SEQ-B-${run}-2</td><td><span class="status status-attention"><span aria-hidden="true">⚠</span> unusable</span></td><td>—</td><td>the amount "12,5" is not a number</td></tr>`,
    );
    expect((await browser.get(`/console/cash/statements/${pagedOutcome.statement.id}`)).body).toContain('<dt>Page</dt><dd>2, the last</dd>');
    expect((await browser.get('/console/cash/statements/00000000-0000-7000-8000-000000000000')).statusCode).toBe(404);
    expect((await browser.get('/console/cash/statements/not-a-statement')).statusCode).toBe(404);
  });

  it('describes each statement of a file of several, and a file too long for a notice in totals', async () => {
    const run = Date.now();
    const single = (id: string, amount: number) => statementFile(account, id, [statementEntry(0, `${id}-0`, { amount })]).statements[0]!;
    const known = single(`MULTI-A-${run}`, 1_234);
    await importParsed(readOf({ format: 'csv', statements: [known] }));
    const both = await importParsed(readOf({ format: 'csv', statements: [known, single(`MULTI-B-${run}`, 2_345)] }));
    expect(describeImport(both)).toBe(
      `2 statements: Statement MULTI-A-${run} (csv): already imported, nothing changed; Statement MULTI-B-${run} (csv): 1 new credit. In all: 0 matches by the rules; ${both.matching!.unmatchedCredits} credits left in the exceptions queue.`,
    );
    const again = await importParsed(readOf({ format: 'csv', statements: [known, single(`MULTI-B-${run}`, 2_345)] }));
    expect(describeImport(again)).toBe('All 2 statements of the file were already imported, nothing changed.');

    const many = await importParsed(readOf({ format: 'csv', statements: Array.from({ length: 8 }, (_, index) => single(`MULTI-LONG-${run}-${index}`, 3_000 + index)) }));
    const line = describeImport(many);
    expect(line.length).toBeLessThanOrEqual(300);
    expect(line).toBe(
      `8 statements (8 imported): 8 new credits; 0 matches by the rules; ${many.matching!.unmatchedCredits} credits left in the exceptions queue. Each statement is listed below.`,
    );
  });
});
