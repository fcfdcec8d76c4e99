import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { XMLParser } from 'fast-xml-parser';
import { listPaymentFilePayouts, listPaymentFilesOfDate } from '../../../src/settlement/payouts/payment-file-repository.ts';
import { paymentFileDownload } from '../../../src/settlement/payouts/payment-file-service.ts';
import { payoutExecutionDate } from '../../../src/settlement/payouts/payout-calendar.ts';
import { loadClearingHolidays, runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { xsdErrors } from '../../support/xsd.ts';
import { refusalIn, signedInAs, type ConsoleBrowser } from '../../support/console.ts';
import { createBiller, createCollectionAccount, createPayoutRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1, type World } from '../../cycle/reconciliation/reconciliation-world.ts';
import { escapeHtml } from '../../../src/faces/console/html.ts';

/** The table row of a page that contains `text`. */
function rowWith(page: string, text: string): string | undefined {
  return page.match(/<tr>[\s\S]*?<\/tr>/g)?.find((row) => row.includes(text));
}

// Tuesday 3 November 2026: with one working day of settlement, the Friday 30 October pay date pays out.
const PAYOUT_DATE = '2026-11-03';

let t: TestApp;
let worlds: World[];
let payoutIds: string[];
let finance: { browser: ConsoleBrowser; email: string };
let operator: ConsoleBrowser;
let viewer: ConsoleBrowser;

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  worlds = [];
  for (const amounts of [
    [12_550, 10_000],
    [4_000, 2_500],
  ]) {
    const w = await createWorld(t.db, { employees: 2 });
    for (const [index, amount] of amounts.entries()) await w.payment(index, amount);
    await w.lock(PD1);
    for (const [index, amount] of amounts.entries()) await w.push(w.people[index]!.employee.id, PD1, amount);
    await w.reconcile(PD1);
    await t.db
      .insertInto('beneficiary_accounts')
      .values({ biller_client_id: w.biller.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' })
      .execute();
    worlds.push(w);
  }
  const summary = await runPayouts(t.db, { funding: 'deducted', today: PAYOUT_DATE, settlementDelayWorkingDays: 1, holidays: new Set() });
  payoutIds = worlds.map((w) => {
    const group = summary.groups.find((g) => g.billerClientId === w.biller.clientId);
    if (group?.outcome !== 'paid_out') throw new Error(`no payout for biller ${w.biller.clientId}: ${JSON.stringify(group)}`);
    return group.payoutId;
  });
  const signedInFinance = await signedInAs(t.app, t.db, 'finance');
  finance = { browser: signedInFinance.browser, email: signedInFinance.user.email };
  ({ browser: operator } = await signedInAs(t.app, t.db, 'operator'));
  ({ browser: viewer } = await signedInAs(t.app, t.db, 'viewer'));
});
afterAll(async () => t?.close());

const payoutRow = (id: string) => t.db.selectFrom('payouts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const auditOf = (id: string) =>
  t.db.selectFrom('audit_log').select(['action', 'actor_kind', 'actor', 'reason']).where('resource_type', '=', 'payout').where('resource_id', '=', id).orderBy('at').execute();

describe('the payouts list', () => {
  it('shows the payouts runPayouts made, linked, with biller, amount and status, and filters them', async () => {
    const page = await viewer.get('/console/payouts');
    expect(page.statusCode).toBe(200);
    for (const id of payoutIds) {
      const row = await payoutRow(id);
      expect(page.body).toContain(`<a href="/console/payouts/${id}">${id}</a>`);
      expect(page.body).toContain(formatMoney(row.amount, 'GBP'));
      expect(page.body).toContain(row.reference);
    }
    expect((await payoutRow(payoutIds[0]!)).amount).toBe(22_550);
    expect(page.body).toContain('<label for="status">Status</label>');
    expect(page.body).toContain('<label for="payout_date">Payout date</label>');
    expect(page.body).not.toContain('/console/payouts/bank-file');

    const paidOnly = await viewer.get('/console/payouts?status=paid');
    expect(paidOnly.body).not.toContain(payoutIds[0]!);
    const onTheDay = await viewer.get(`/console/payouts?status=pending&payout_date=${PAYOUT_DATE}`);
    for (const id of payoutIds) expect(onTheDay.body).toContain(id);
    expect((await viewer.get('/console/payouts?payout_date=2026-11-30')).body).toContain('no payouts match');
    expect((await viewer.get('/console/payouts?payout_date=2026-11-31')).statusCode).toBe(400);
    expect((await viewer.get('/console/payouts?status=lost')).statusCode).toBe(400);
  });

  it('links the payment files of each payout date', async () => {
    for (const browser of [finance.browser, operator, viewer]) {
      const page = await browser.get('/console/payouts');
      expect(page.body).toContain(`<a href="/console/payment-files?date=${PAYOUT_DATE}">Payment files of the payouts made on ${PAYOUT_DATE}</a>`);
    }
  });
});

describe('a payout page', () => {
  it('shows the facts with the account masked and every item', async () => {
    const id = payoutIds[0]!;
    const row = await payoutRow(id);
    // A biller's own reference for the mandate, when it gave one, beside the payment reference.
    await t.db.updateTable('mandates').set({ reference: 'LOAN-7' }).where('biller_client_id', '=', worlds[0]!.biller.clientId).execute();
    const page = await viewer.get(`/console/payouts/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(row.reference);
    expect(page.body).toContain(formatMoney(22_550, 'GBP'));
    const biller = await t.db.selectFrom('clients').select('name').where('id', '=', worlds[0]!.biller.clientId).executeTakeFirstOrThrow();
    expect(page.body).toContain(biller.name);
    expect(page.body).toContain('****6819');
    expect(page.body).not.toContain('31926819');
    const items = await t.db
      .selectFrom('payout_items as i')
      .innerJoin('payment_requests as pr', 'pr.id', 'i.payment_request_id')
      .innerJoin('employments as em', (join) => join.onRef('em.employee_id', '=', 'pr.employee_id').onRef('em.payroll_id', '=', 'pr.payroll_id'))
      .innerJoin('employees as e', 'e.id', 'em.employee_id')
      .select(['i.payment_request_id', 'i.amount', 'e.given_name', 'e.family_name', 'em.payroll_reference', 'em.deduction_reference_number'])
      .where('i.payout_id', '=', id)
      .execute();
    expect(items).toHaveLength(2);
    const itemsTable = page.body.slice(page.body.indexOf('id="items"'));
    for (const item of items) {
      // Each item names the employee (works number), the payroll and the deduction's payment reference;
      // the payment request's id stays, as the last column.
      const row = rowWith(itemsTable, item.payment_request_id)!;
      expect(row).toContain(`<td>${item.given_name} ${item.family_name} (${item.payroll_reference})</td>`);
      expect(row).toContain(`<td>${escapeHtml(`${worlds[0]!.employer.name}: ${worlds[0]!.payroll.name}`)}</td>`);
      expect(row).toContain(`<td>SD${String(item.deduction_reference_number).padStart(8, '0')} (mandate LOAN-7)</td>`);
      expect(row).toContain(formatMoney(item.amount, 'GBP'));
      expect(row).toContain(`<td><code>${item.payment_request_id}</code></td>`);
      expect(row).not.toContain(`<td>${item.payment_request_id}</td>`);
    }
    // Only finance records the bank's answer.
    expect(page.body).not.toContain('Mark paid');
    expect((await operator.get(`/console/payouts/${id}`)).body).not.toContain('Mark paid');
    const financePage = await finance.browser.get(`/console/payouts/${id}`);
    expect(financePage.body).toContain(`action="/console/payouts/${id}/paid"`);
    expect(financePage.body).toContain(`action="/console/payouts/${id}/failed"`);
    expect(financePage.body).toContain('<label for="failed-reason">');
  });

  it('is a 404 page for an unknown or malformed id', async () => {
    expect((await viewer.get(`/console/payouts/${crypto.randomUUID()}`)).statusCode).toBe(404);
    expect((await viewer.get('/console/payouts/nope')).statusCode).toBe(404);
  });
});

describe('payment files', () => {
  const filesPage = `/console/payment-files?date=${PAYOUT_DATE}`;

  it("turns the old bank file link into the date's payment files page, for finance and operators", async () => {
    for (const browser of [finance.browser, operator]) {
      const response = await browser.get(`/console/payouts/bank-file?date=${PAYOUT_DATE}&format=pain.001`);
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe(filesPage);
    }
    expect((await viewer.get(`/console/payouts/bank-file?date=${PAYOUT_DATE}`)).statusCode).toBe(403);
    expect((await finance.browser.get('/console/payouts/bank-file?date=2026-11-31')).statusCode).toBe(400);
    // Following the link writes nothing: a GET never does.
    expect(await listPaymentFilesOfDate(t.db, PAYOUT_DATE)).toEqual([]);
  });

  it('shows the payouts waiting for a file; only finance and operators may write one', async () => {
    const page = await viewer.get(filesPage);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Payment files of the payouts made on ${PAYOUT_DATE}, in the order they were written: none written yet.`);
    expect(page.body).toContain(`2 pending payout(s) made on ${PAYOUT_DATE} are in no file yet.`);
    expect(page.body).not.toContain('method="post" action="/console/payment-files"');
    expect(page.body).toContain('Operators and finance write payment files.');
    expect((await viewer.post('/console/payment-files', { date: PAYOUT_DATE })).statusCode).toBe(403);
    expect(await listPaymentFilesOfDate(t.db, PAYOUT_DATE)).toEqual([]);
    expect((await viewer.get('/console/payment-files?date=2026-11-31')).statusCode).toBe(400);
  });

  it('lets finance write the file once, audited as the person; writing again writes nothing', async () => {
    const page = await finance.browser.get(filesPage);
    expect(page.body).toContain('<form method="post" action="/console/payment-files" class="action">');
    const written = await finance.browser.post('/console/payment-files', { date: PAYOUT_DATE });
    expect(written.statusCode).toBe(303);
    expect(written.headers.location).toBe(filesPage);
    const files = await listPaymentFilesOfDate(t.db, PAYOUT_DATE);
    expect(files).toHaveLength(1);
    // Written now, after its payout date: executed on the first business day from today.
    const execution = payoutExecutionDate(PAYOUT_DATE, serviceToday(new Date(), 'Europe/London'), await loadClearingHolidays(t.db));
    expect(files[0]).toMatchObject({ sequence: 1, created_by: `${finance.email} (console)`, requested_execution_date: execution });
    expect((await listPaymentFilePayouts(t.db, files[0]!.id)).map((payout) => payout.id).sort()).toEqual([...payoutIds].sort());
    const audit = await t.db.selectFrom('audit_log').select(['action', 'actor_kind', 'actor']).where('resource_id', '=', files[0]!.id).execute();
    expect(audit).toEqual([{ action: 'payment_file.written', actor_kind: 'console', actor: finance.email }]);

    const after = await finance.browser.get(filesPage);
    expect(after.body).toContain(`Wrote file 1 (${files[0]!.message_id}) of ${PAYOUT_DATE}.`);
    expect(after.body).toContain(files[0]!.message_id!);
    expect(after.body).toContain(`Every pending payout made on ${PAYOUT_DATE} is in a file.`);
    expect(after.body).not.toContain('method="post" action="/console/payment-files"');

    await operator.get(filesPage);
    const again = await operator.post('/console/payment-files', { date: PAYOUT_DATE });
    expect(again.statusCode).toBe(303);
    expect((await operator.get(filesPage)).body).toContain(`No payout made on ${PAYOUT_DATE} was waiting for a file: nothing written.`);
    expect(await listPaymentFilesOfDate(t.db, PAYOUT_DATE)).toHaveLength(1);
  });

  it('downloads each rendering as stored to finance and operators, and refuses viewers', async () => {
    const [file] = await listPaymentFilesOfDate(t.db, PAYOUT_DATE);
    const page = await operator.get(filesPage);
    for (const format of ['csv', 'pain.001'] as const) {
      expect(page.body).toContain(`href="/console/payment-files/${file!.id}/${format}"`);
      const expected = await paymentFileDownload(t.db, file!.id, format);
      for (const browser of [finance.browser, operator]) {
        const response = await browser.get(`/console/payment-files/${file!.id}/${format}`);
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toBe(expected.contentType);
        expect(response.headers['content-disposition']).toBe(`attachment; filename="${expected.fileName}"`);
        expect(response.rawPayload.equals(expected.content)).toBe(true);
      }
      const refused = await viewer.get(`/console/payment-files/${file!.id}/${format}`);
      expect(refused.statusCode).toBe(403);
      expect(refused.body).not.toContain('31926819');
    }
    expect((await viewer.get(filesPage)).body).not.toContain(`href="/console/payment-files/${file!.id}/csv"`);
    const xml = (await paymentFileDownload(t.db, file!.id, 'pain.001')).content.toString();
    expect(await xsdErrors(xml, 'pain.001.001.09')).toEqual([]);
    const message = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(xml).Document.CstmrCdtTrfInitn;
    expect(message.GrpHdr).toMatchObject({ MsgId: file!.message_id, NbOfTxs: '2', CtrlSum: '290.50' });
    expect((await finance.browser.get(`/console/payment-files/${file!.id}/mt101`)).statusCode).toBe(404);
    expect((await finance.browser.get(`/console/payment-files/${crypto.randomUUID()}/csv`)).statusCode).toBe(404);
  });

  it("names on a payout's page the file it was instructed in", async () => {
    const [file] = await listPaymentFilesOfDate(t.db, PAYOUT_DATE);
    const page = await viewer.get(`/console/payouts/${payoutIds[0]!}`);
    expect(page.body).toContain(`<dt>Payment file</dt><dd><a href="/console/payment-files?date=${PAYOUT_DATE}">file 1 of ${PAYOUT_DATE}, ${file!.message_id}</a></dd>`);
  });
});

describe('settling a payout', () => {
  it('refuses viewers and operators, changing nothing', async () => {
    const id = payoutIds[0]!;
    for (const browser of [viewer, operator]) {
      await browser.get(`/console/payouts/${id}`);
      expect((await browser.post(`/console/payouts/${id}/paid`, { reason: 'statement line' })).statusCode).toBe(403);
      expect((await browser.post(`/console/payouts/${id}/failed`, { reason: 'bounced' })).statusCode).toBe(403);
    }
    expect((await payoutRow(id)).status).toBe('pending');
    expect(await auditOf(id)).toEqual([]);
  });

  it('lets finance mark a payout paid, audited as the person, and refuses marking it again', async () => {
    const id = payoutIds[0]!;
    await finance.browser.get(`/console/payouts/${id}`);
    const response = await finance.browser.post(`/console/payouts/${id}/paid`, { reason: 'Statement line 2026-11-03' });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/console/payouts/${id}`);
    expect((await payoutRow(id)).status).toBe('paid');
    expect(await auditOf(id)).toEqual([{ action: 'payout.marked_paid', actor_kind: 'console', actor: finance.email, reason: 'Statement line 2026-11-03' }]);

    const after = await finance.browser.get(`/console/payouts/${id}`);
    expect(after.body).toContain('recorded as paid');
    expect(after.body).not.toContain('Mark paid');
    const again = await finance.browser.post(`/console/payouts/${id}/paid`, {});
    expect(again.statusCode).toBe(409);
    expect(refusalIn(again.body)?.heading).toBe('The payout was not marked paid');
    expect(refusalIn(again.body)?.reasons[0]?.text).toMatch(/only a pending payout can be marked paid$/);
    expect(await auditOf(id)).toHaveLength(1);
  });

  it('needs a reason to mark a payout failed, then releases it', async () => {
    const id = payoutIds[1]!;
    await finance.browser.get(`/console/payouts/${id}`);
    const missing = await finance.browser.post(`/console/payouts/${id}/failed`, { reason: '  ' });
    expect(missing.statusCode).toBe(422);
    // The payout's page again, saying what to fill in: no "Something went wrong".
    expect(missing.body).not.toContain('Something went wrong');
    expect(refusalIn(missing.body)).toEqual({
      heading: 'The payout was not marked failed',
      reasons: [{ text: 'Marking a payout failed needs the reason', field: 'failed-reason' }],
    });
    expect(missing.body).toMatch(/id="failed-reason" name="reason"[^>]* aria-invalid="true">/);
    expect((await payoutRow(id)).status).toBe('pending');

    await finance.browser.get(`/console/payouts/${id}`);
    const failed = await finance.browser.post(`/console/payouts/${id}/failed`, { reason: 'Returned: account closed' });
    expect(failed.statusCode).toBe(303);
    expect(await payoutRow(id)).toMatchObject({ status: 'failed', failure_reason: 'Returned: account closed' });
    expect(await auditOf(id)).toEqual([{ action: 'payout.marked_failed', actor_kind: 'console', actor: finance.email, reason: 'Returned: account closed' }]);
    const released = await t.db.selectFrom('ledger_entries').select('payout_id').where('biller_client_id', '=', worlds[1]!.biller.clientId).execute();
    expect(released.map((entry) => entry.payout_id)).toEqual([null, null]);
  });
});

describe('paging the payouts list', () => {
  it('links the next page when more payouts exist than a page holds', async () => {
    const biller = await createBiller(t.db);
    // Newer than runPayouts' two, so those move to the second page.
    for (let i = 0; i < 50; i++) await createPayoutRow(t.db, { billerClientId: biller.clientId });
    const first = await viewer.get('/console/payouts');
    expect(first.body).not.toContain(payoutIds[0]!);
    const next = first.body.match(/<a href="([^"]+)" rel="next">/)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toMatch(/^\/console\/payouts\?after=/);
    const second = await viewer.get(next!);
    expect(second.statusCode).toBe(200);
    for (const id of payoutIds) expect(second.body).toContain(id);
    expect(second.body).toContain('rel="prev"');
    expect(second.body).not.toContain('rel="next"');
  });
});
