import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/audit/audit-service.ts';
import type { StatementEntry } from '../../src/cash/bank-statement.ts';
import { matchCreditManually, type MatchingPolicy } from '../../src/cash/matching-service.ts';
import { recordStatement } from '../../src/cash/statement-import-service.ts';
import { formatMoney } from '../../src/console/console-format.ts';
import { describeImport, minorUnitsOfTypedAmount } from '../../src/console/pages/cash-pages.ts';
import { runPayouts } from '../../src/payouts/payout-service.ts';
import { PD1 } from '../reconciliation/reconciliation-world.ts';
import { cashPolicy, parsedStatement, reconciledPayDate as reconciledPayDateOf } from '../support/cash.ts';
import { csrfTokenIn, signedInAs, type ConsoleBrowser } from '../support/console.ts';
import { createCollectionAccount } from '../support/factories.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

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
const auditCount = async () => Number((await t.db.selectFrom('audit_log').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const statementCount = async () => Number((await t.db.selectFrom('bank_statements').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const errorOf = (body: string) => body.match(/<p class="error" role="alert">(.*?)<\/p>/s)?.[1];
const decoded = (text: string) => text.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&');
const remittancePage = (payrollId: string) => `/console/cash/remittances/${payrollId}/${PD1}`;

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
    const [match] = await matchCreditManually(t.db, actor, policy, { creditId: credit.id, allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: 5_000 }], reason: 'part of it' });
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const { browser: finance } = await signedInAs(t.app, t.db, 'finance');
    const pages = ['/console/cash', '/console/cash/statements', '/console/cash/credits', `/console/cash/credits/${credit.id}`, '/console/cash/remittances', remittancePage(w.payroll.id)];
    for (const url of pages) {
      const page = await browser.get(url);
      expect(page.statusCode, url).toBe(200);
      expect(page.body, url).not.toMatch(/method="post" action="\/console\/cash/);
      expect(page.body, url).not.toContain('type="file"');
    }
    // The same pages carry the forms for finance: the viewer's lack of them is the role, not the data.
    expect((await finance.get('/console/cash/statements')).body).toContain('enctype="multipart/form-data"');
    expect((await finance.get(`/console/cash/credits/${credit.id}`)).body).toContain(`action="/console/cash/credits/${credit.id}/matches"`);
    expect((await finance.get(remittancePage(w.payroll.id))).body).toContain(`action="/console/cash/matches/${match!.id}/unmatch"`);

    const before = { remittance: await remittanceOf(w.payroll.id), matches: await matchesOf(credit.id), audit: await auditCount(), statements: await statementCount() };
    await browser.get(`/console/cash/credits/${credit.id}`);
    const matchPost = await browser.post(`/console/cash/credits/${credit.id}/matches`, { remittance_1: `${w.payroll.id}/${PD1}`, amount_1: '10.00', reason: 'viewer tries' });
    expect(matchPost.statusCode).toBe(403);
    const unmatchPost = await browser.post(`/console/cash/matches/${match!.id}/unmatch`, { reason: 'viewer tries' });
    expect(unmatchPost.statusCode).toBe(403);
    const uploadPost = await upload(browser, `${CSV_HEADER}\n`);
    expect(uploadPost.statusCode).toBe(403);
    expect(errorOf(uploadPost.body)).toContain('Your role (viewer) cannot do this');
    expect({ remittance: await remittanceOf(w.payroll.id), matches: await matchesOf(credit.id), audit: await auditCount(), statements: await statementCount() }).toEqual(before);
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
      const refused = await browser.post(`/console/cash/credits/${credit.id}/matches`, { _csrf: csrfTokenIn(page.body), remittance_1: `${w.payroll.id}/${PD1}`, amount_1: amount });
      expect(refused.statusCode, amount).toBe(422);
      expect(errorOf(refused.body), amount).toBeDefined();
    }
    const halfFilled = await browser.post(`/console/cash/credits/${credit.id}/matches`, { _csrf: csrfTokenIn(page.body), remittance_1: `${w.payroll.id}/${PD1}`, amount_1: '1.00', amount_2: '5.00' });
    expect(halfFilled.statusCode).toBe(422);
    expect(await matchesOf(credit.id)).toEqual([]);

    const matched = await browser.post(`/console/cash/credits/${credit.id}/matches`, { _csrf: csrfTokenIn(page.body), remittance_1: `${w.payroll.id}/${PD1}`, amount_1: '200.00', reason: 'employer says the rest follows' });
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
    const counts = await t.db.selectFrom('remittances').select(['status', (eb) => eb.fn.countAll().as('n')]).groupBy('status').execute();
    for (const status of ['expected', 'received', 'short', 'over', 'late']) {
      const shown = overview.body.match(new RegExp(`status=${status}".*?</a></td><td>(\\d+)</td>`, 's'))?.[1];
      expect(shown, status).toBe(String(Number(counts.find((row) => row.status === status)?.n ?? 0)));
    }
    const waiting = Number((await t.db.selectFrom('bank_credits').select((eb) => eb.fn.countAll().as('n')).whereRef('matched_amount', '<', 'amount').executeTakeFirstOrThrow()).n);
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
    expect(statements).toContain(`<td>${stored.statement_id}</td><td>csv</td><td>${stored.file_name}</td><td>1</td><td>${formatMoney(stored.credits_total, 'GBP')}</td>`);
  });

  it('describes an import: new credits, matches by rule, the queue left; the same file again changes nothing', async () => {
    const w = await reconciledPayDate();
    const read = statement([
      { amount: EXPECTED, remittanceInformation: w.reference },
      { amount: 777, remittanceInformation: 'unknown payer' },
    ]);
    const first = await importParsed(read);
    const queue = Number((await t.db.selectFrom('bank_credits').select((eb) => eb.fn.countAll().as('n')).whereRef('matched_amount', '<', 'amount').executeTakeFirstOrThrow()).n);
    expect(describeImport(first)).toBe(`Statement ${read.parsed.statementId} (csv) imported: 2 new credits; 1 match by the rules (exact 1); ${queue} ${queue === 1 ? 'credit' : 'credits'} left in the exceptions queue.`);
    expect(describeImport(await importParsed(read))).toBe(`Statement ${read.parsed.statementId} (csv) was already imported, nothing changed.`);
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
    const noFile = await t.app.inject({ method: 'POST', url: '/console/cash/statements', cookies: browser.cookies, ...multipart([{ name: '_csrf', value: csrfTokenIn(browser.lastPage) }]) });
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
