import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createHash, randomUUID } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { xsdErrors } from '../../support/xsd.ts';
import { createBiller, createCollectionAccount, createOperator, createPayoutRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Operators run the payouts of the whole service: they read every live biller's payouts and write and
// download the payment files finance uploads, each payout in one file only. A sandbox biller's payouts
// are simulated money and never show.

let t: TestApp;
let operatorHeaders: Record<string, string>;
let billerA: IssuedCredentials;
let billerB: IssuedCredentials;
let headersA: Record<string, string>;
let headersB: Record<string, string>;
let payouts: Record<'aPaidGbp' | 'aPendingEur' | 'bPendingGbp' | 'sandboxGbp', { id: string }>;

const DAY = '2026-12-01';
const OTHER_DAY = '2026-12-02';

beforeAll(async () => {
  t = await startTestApp();
  operatorHeaders = await authHeaders(t.app, await createOperator(t.db));
  billerA = await createBiller(t.db);
  billerB = await createBiller(t.db);
  headersA = await authHeaders(t.app, billerA);
  headersB = await authHeaders(t.app, billerB);
  const sandboxBiller = await createClient(t.db, { name: 'Sandbox twin', role: 'biller', sandbox: true });
  payouts = {
    aPaidGbp: await createPayoutRow(t.db, { billerClientId: billerA.clientId, status: 'paid', payoutDate: DAY, amount: 12_345 }),
    aPendingEur: await createPayoutRow(t.db, { billerClientId: billerA.clientId, currency: 'EUR', payoutDate: OTHER_DAY }),
    bPendingGbp: await createPayoutRow(t.db, { billerClientId: billerB.clientId, payoutDate: DAY, amount: 500 }),
    sandboxGbp: await createPayoutRow(t.db, { billerClientId: sandboxBiller.clientId, payoutDate: DAY }),
  };
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string>) => injectJson(t.app, { method: 'GET', url, headers });
const idsOf = async (url: string, headers: Record<string, string>) => {
  const response = await get(url, headers);
  expect(response.statusCode, response.body).toBe(200);
  return response
    .json()
    .payouts.map((p: { id: string }) => p.id)
    .sort();
};
const sorted = (...ids: string[]) => [...ids].sort();

describe('an operator reading payouts', () => {
  it("lists every live biller's payouts, saying whose, and never a sandbox biller's", async () => {
    const response = await get('/payouts?limit=500', operatorHeaders);
    expect(response.statusCode, response.body).toBe(200);
    const listed = response.json().payouts;
    expect(listed.map((p: { id: string }) => p.id).sort()).toEqual(sorted(payouts.aPaidGbp.id, payouts.aPendingEur.id, payouts.bPendingGbp.id));
    const bPayout = listed.find((p: { id: string }) => p.id === payouts.bPendingGbp.id);
    expect(bPayout).toMatchObject({ biller_client_id: billerB.clientId, amount: 500, payout_date: DAY, status: 'pending' });
    expect(bPayout).not.toHaveProperty('items');
  });

  it('filters by biller, status, currency and payout date', async () => {
    expect(await idsOf(`/payouts?biller_client_id=${billerA.clientId}`, operatorHeaders)).toEqual(sorted(payouts.aPaidGbp.id, payouts.aPendingEur.id));
    expect(await idsOf('/payouts?status=pending', operatorHeaders)).toEqual(sorted(payouts.aPendingEur.id, payouts.bPendingGbp.id));
    expect(await idsOf('/payouts?currency=EUR', operatorHeaders)).toEqual([payouts.aPendingEur.id]);
    expect(await idsOf(`/payouts?payout_date=${DAY}`, operatorHeaders)).toEqual(sorted(payouts.aPaidGbp.id, payouts.bPendingGbp.id));
    expect(await idsOf(`/payouts?payout_date=${DAY}&currency=GBP&status=pending`, operatorHeaders)).toEqual([payouts.bPendingGbp.id]);
    expect((await get('/payouts?biller_client_id=nope', operatorHeaders)).statusCode).toBe(400);
    expect((await get('/payouts?payout_date=2026-13-01', operatorHeaders)).statusCode).toBe(400);
  });

  it("reads any live biller's payout with its items, and a sandbox biller's is not found", async () => {
    for (const [payout, biller] of [
      [payouts.aPaidGbp, billerA],
      [payouts.bPendingGbp, billerB],
    ] as const) {
      const response = await get(`/payouts/${payout.id}`, operatorHeaders);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().payout).toMatchObject({ id: payout.id, biller_client_id: biller.clientId, items: [] });
    }
    const sandbox = await get(`/payouts/${payouts.sandboxGbp.id}`, operatorHeaders);
    expect(sandbox.statusCode).toBe(404);
    expect(sandbox.json().type).toBe(`${PROBLEM_TYPE_BASE}not-found`);
  });
});

describe('a biller reading payouts', () => {
  it('still sees only its own, without saying whose, and another biller naming it gets nothing', async () => {
    expect(await idsOf('/payouts?limit=500', headersB)).toEqual([payouts.bPendingGbp.id]);
    expect(await idsOf(`/payouts?biller_client_id=${billerA.clientId}`, headersB)).toEqual([]);
    const own = await get(`/payouts/${payouts.bPendingGbp.id}`, headersB);
    expect(own.statusCode).toBe(200);
    expect(own.json().payout).not.toHaveProperty('biller_client_id');
    expect((await get(`/payouts/${payouts.aPaidGbp.id}`, headersB)).statusCode).toBe(404);
    expect((await get(`/payouts/${payouts.bPendingGbp.id}`, headersA)).statusCode).toBe(404);
  });
});

const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => name === 'CdtTrfTxInf' }).parse(xml);
const sha256Of = (body: string | Buffer) => createHash('sha256').update(body).digest('hex');
const reprDigest = (body: string | Buffer) => `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
const bankFile = (date: string, format?: string) => `/payouts/bank-file?date=${date}${format ? `&format=${format}` : ''}`;

describe('GET /payouts/bank-file', () => {
  let firstFileId: string;
  let firstCsv: string;

  it('answers 409 while the currency has no active collection account to pay from, writing nothing', async () => {
    for (const format of [undefined, 'pain.001']) {
      const response = await get(bankFile(DAY, format), operatorHeaders);
      expect(response.statusCode, response.body).toBe(409);
      expect(response.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}no-collection-account`, currencies: ['GBP'] });
    }
    expect(await t.db.selectFrom('payment_files').selectAll().execute()).toEqual([]);
  });

  it("writes the date's payment file at the first download, of its pending live payouts, and answers the same bytes ever after", async () => {
    await createCollectionAccount(t.db);
    const response = await t.app.inject({ method: 'GET', url: bankFile(DAY), headers: operatorHeaders });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="payouts-${DAY}-01.csv"`);
    expect(response.headers['repr-digest']).toBe(reprDigest(response.rawPayload));
    const messageId = String(response.headers['payment-file-message-id']);
    expect(messageId).toMatch(/^SDPO261201-01-[0-9A-F]{8}$/);
    firstFileId = String(response.headers['payment-file-id']);
    firstCsv = response.body;

    const lines = response.body.trim().split('\n');
    expect(lines[0]).toBe('payout_id,reference,biller,currency,amount,account_holder_name,sort_code,account_number,payout_date,status,message_id,requested_execution_date');
    // The paid payout is not instructed (the bank already made it), nor the sandbox biller's.
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^${payouts.bPendingGbp.id},.*,5\\.00,.*,${DAY},pending,${messageId},${DAY}$`));
    expect(response.body).not.toContain(payouts.aPaidGbp.id);
    expect(response.body).not.toContain(payouts.sandboxGbp.id);

    // The same file as pain.001: same id, same MsgId, the same payouts; valid against the schema.
    const xml = await t.app.inject({ method: 'GET', url: bankFile(DAY, 'pain.001'), headers: operatorHeaders });
    expect(xml.statusCode, xml.body).toBe(200);
    expect(xml.headers['content-type']).toBe('application/xml');
    expect(xml.headers['content-disposition']).toBe(`attachment; filename="payouts-${DAY}-01.pain.001.xml"`);
    expect(xml.headers['payment-file-id']).toBe(firstFileId);
    expect(await xsdErrors(xml.body, 'pain.001.001.09')).toEqual([]);
    const message = parse(xml.body).Document.CstmrCdtTrfInitn;
    expect(message.GrpHdr).toMatchObject({ MsgId: messageId, NbOfTxs: '1', CtrlSum: '5.00' });
    const reference = (await t.db.selectFrom('payouts').select('reference').where('id', '=', payouts.bPendingGbp.id).executeTakeFirstOrThrow()).reference;
    expect(message.PmtInf.CdtTrfTxInf.map((transfer: { PmtId: { EndToEndId: string } }) => transfer.PmtId.EndToEndId)).toEqual([reference]);

    // Downloaded again, by the API or the CLI: the same bytes, no new file.
    const again = await t.app.inject({ method: 'GET', url: bankFile(DAY), headers: operatorHeaders });
    expect(again.body).toBe(firstCsv);
    const cli = await runDeductions(['export', 'payouts', '--date', DAY], cliEnvOf(t.config));
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toBe(firstCsv);
    const xmlAgain = await t.app.inject({ method: 'GET', url: bankFile(DAY, 'pain.001'), headers: operatorHeaders });
    expect(xmlAgain.body).toBe(xml.body);
    expect(await t.db.selectFrom('payment_files').select('id').execute()).toEqual([{ id: firstFileId }]);
  }, 60_000);

  it('puts a payout made later that day into a new file holding only it, and keeps the first as it was', async () => {
    const late = await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: DAY, amount: 777 });
    const response = await t.app.inject({ method: 'GET', url: bankFile(DAY), headers: operatorHeaders });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="payouts-${DAY}-02.csv"`);
    expect(response.headers['payment-file-id']).not.toBe(firstFileId);
    expect(response.headers['payment-file-message-id']).toMatch(/^SDPO261201-02-/);
    const lines = response.body.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(late.id);
    expect(response.body).not.toContain(payouts.bPendingGbp.id);

    const first = await t.app.inject({ method: 'GET', url: `/payment-files/${firstFileId}/csv`, headers: operatorHeaders });
    expect(first.statusCode).toBe(200);
    expect(first.body).toBe(firstCsv);
  });

  it('answers 404 for a date without payouts, 422 naming the date for a bad one, 400 for an unknown format, 403 to a biller', async () => {
    const none = await get(bankFile('2027-01-04', 'pain.001'), operatorHeaders);
    expect(none.statusCode).toBe(404);
    expect(none.json().detail).toBe('A payment file of the payouts made on 2027-01-04 was not found');
    expect((await get(bankFile('2027-01-04'), operatorHeaders)).statusCode).toBe(404);
    for (const date of ['2026-12-32', '01-12-2026', 'tomorrow']) {
      const response = await get(bankFile(date), operatorHeaders);
      expect(response.statusCode, response.body).toBe(422);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().errors).toEqual([{ pointer: '/query/date', detail: 'must be a date as YYYY-MM-DD' }]);
    }
    expect((await get(bankFile(DAY, 'mt101'), operatorHeaders)).statusCode).toBe(400);
    const biller = await get(bankFile(DAY), headersA);
    expect(biller.statusCode).toBe(403);
    expect(biller.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('/payment-files', () => {
  const post = (body: Record<string, string>, headers: Record<string, string>) => injectJson(t.app, { method: 'POST', url: '/payment-files', headers, body });

  it('POST writes the file of the payouts of a date no file holds yet, once; repeating it writes nothing', async () => {
    await createCollectionAccount(t.db, 'EUR');
    const key = randomUUID();
    const created = await post({ payout_date: OTHER_DAY }, { ...operatorHeaders, 'idempotency-key': key });
    expect(created.statusCode, created.body).toBe(201);
    const [file] = created.json().payment_files;
    expect(file).toMatchObject({
      payout_date: OTHER_DAY,
      number: 1,
      legacy: false,
      requested_execution_date: OTHER_DAY,
      transfers: 1,
      totals: [{ currency: 'EUR', transfers: 1, amount: 10_000 }],
      pain001: { file_name: `payouts-${OTHER_DAY}-01.pain.001.xml`, href: `/payment-files/${file.id}/pain.001` },
      csv: { file_name: `payouts-${OTHER_DAY}-01.csv`, href: `/payment-files/${file.id}/csv` },
    });
    expect(file.message_id).toMatch(/^SDPO261202-01-/);
    expect(file.created_by).toMatch(/^client /);

    const replay = await post({ payout_date: OTHER_DAY }, { ...operatorHeaders, 'idempotency-key': key });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(created.body);
    const repeated = await post({ payout_date: OTHER_DAY }, operatorHeaders);
    expect(repeated.statusCode, repeated.body).toBe(200);
    expect(repeated.json()).toEqual({ payment_files: [] });
    expect(await t.db.selectFrom('payment_files').select('id').where('payout_date', '=', OTHER_DAY).execute()).toEqual([{ id: file.id }]);

    const audit = await t.db.selectFrom('audit_log').select(['action', 'resource_id']).where('resource_type', '=', 'payment_file').execute();
    expect(audit).toContainEqual({ action: 'payment_file.written', resource_id: file.id });
  });

  it('POST refuses a bad date (422), a biller and an operator without payouts:write (403)', async () => {
    const bad = await post({ payout_date: '2026-02-30' }, operatorHeaders);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual([{ pointer: '/payout_date', detail: 'must be a date as YYYY-MM-DD' }]);
    expect((await post({ payout_date: DAY }, headersA)).statusCode).toBe(403);
    const readOnlyHeaders = await authHeaders(t.app, await createOperator(t.db), 'payouts:read');
    const readOnly = await post({ payout_date: DAY }, readOnlyHeaders);
    expect(readOnly.statusCode).toBe(403);
    // The bank-file download may write a file too: it needs payouts:write as well.
    expect((await get(bankFile(DAY), readOnlyHeaders)).statusCode).toBe(403);
  });

  it("lists a date's files, and all files newest first a page at a time", async () => {
    const ofDay = await get(`/payment-files?payout_date=${DAY}`, operatorHeaders);
    expect(ofDay.statusCode, ofDay.body).toBe(200);
    expect(ofDay.json().payment_files.map((file: { number: number }) => file.number)).toEqual([2, 1]);
    const page = await get('/payment-files?limit=1', operatorHeaders);
    expect(page.json().payment_files).toHaveLength(1);
    const next = await get(`/payment-files?limit=1&after=${encodeURIComponent(page.json().paging.after)}`, operatorHeaders);
    expect(next.statusCode).toBe(200);
    expect(next.json().payment_files[0].id).not.toBe(page.json().payment_files[0].id);
    expect((await get('/payment-files?payout_date=2026-13-01', operatorHeaders)).statusCode).toBe(400);
    expect((await get('/payment-files', headersA)).statusCode).toBe(403);
  });

  it('shows a file with the payouts it instructs, and downloads each rendering as stored, with its digest', async () => {
    const [file] = (await get(`/payment-files?payout_date=${DAY}`, operatorHeaders)).json().payment_files.reverse();
    const one = await get(`/payment-files/${file.id}`, operatorHeaders);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().payment_file.payouts).toEqual([
      expect.objectContaining({ id: payouts.bPendingGbp.id, biller_client_id: billerB.clientId, amount: 500, currency: 'GBP', status: 'pending' }),
    ]);
    for (const format of ['pain.001', 'csv'] as const) {
      const download = await t.app.inject({ method: 'GET', url: `/payment-files/${file.id}/${format}`, headers: operatorHeaders });
      expect(download.statusCode).toBe(200);
      expect(sha256Of(download.rawPayload)).toBe(file[format === 'csv' ? 'csv' : 'pain001'].sha256);
      expect(download.headers['repr-digest']).toBe(reprDigest(download.rawPayload));
      expect(download.headers['content-disposition']).toBe(`attachment; filename="${file[format === 'csv' ? 'csv' : 'pain001'].file_name}"`);
    }
    expect((await get(`/payment-files/${randomUUID()}`, operatorHeaders)).statusCode).toBe(404);
    expect((await get('/payment-files/not-an-id/csv', operatorHeaders)).statusCode).toBe(404);
    expect((await get(`/payment-files/${file.id}/pain.001`, headersA)).statusCode).toBe(403);
  });

  it('answers 409 for the bytes of a legacy file, which were not kept', async () => {
    const legacyDay = '2026-11-20';
    const old = await createPayoutRow(t.db, { billerClientId: billerB.clientId, payoutDate: legacyDay });
    const legacy = randomUUID();
    await t.db.insertInto('payment_files').values({ id: legacy, payout_date: legacyDay, sequence: 0, legacy: true, created_by: 'migration' }).execute();
    await t.db.insertInto('payment_file_payouts').values({ payout_id: old.id, payment_file_id: legacy }).execute();
    const shown = await get(`/payment-files/${legacy}`, operatorHeaders);
    expect(shown.json().payment_file).toMatchObject({ number: 0, legacy: true, message_id: null, pain001: null, csv: null, transfers: 1 });
    const download = await get(`/payment-files/${legacy}/csv`, operatorHeaders);
    expect(download.statusCode).toBe(409);
    expect(download.json().type).toBe(`${PROBLEM_TYPE_BASE}payment-file-not-kept`);
    // Its payout was handed over before: it is not instructed again.
    expect((await post({ payout_date: legacyDay }, operatorHeaders)).json()).toEqual({ payment_files: [] });
    expect((await get(bankFile(legacyDay), operatorHeaders)).statusCode).toBe(404);
  });
});
