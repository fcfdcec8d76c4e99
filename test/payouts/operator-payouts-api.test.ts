import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type IssuedCredentials } from '../../src/auth/clients-service.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { cliEnvOf, runDeductions } from '../support/cli.ts';
import { XMLParser } from 'fast-xml-parser';
import { payoutPain001File } from '../../src/payouts/payout-service.ts';
import { createBiller, createCollectionAccount, createOperator, createPayoutRow } from '../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../support/test-app.ts';

// Operators run the payouts of the whole service: they read every live biller's payouts and download
// the bank file finance uploads. A sandbox biller's payouts are simulated money and never show.

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
  return response.json().payouts.map((p: { id: string }) => p.id).sort();
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

describe('GET /payouts/bank-file', () => {
  it('answers the CSV `deductions export payouts` writes for the same date, as an attachment', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/payouts/bank-file?date=${DAY}`, headers: operatorHeaders });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="payouts-${DAY}.csv"`);

    const cli = await runDeductions(['export', 'payouts', '--date', DAY], cliEnvOf(t.config));
    expect(cli.code, cli.stderr).toBe(0);
    expect(response.body).toBe(cli.stdout);

    const lines = response.body.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe('payout_id,reference,biller,currency,amount,account_holder_name,sort_code,account_number,payout_date,status');
    expect(response.body).toContain(`${payouts.aPaidGbp.id},`);
    expect(response.body).toContain(`${payouts.bPendingGbp.id},`);
    expect(response.body).toContain(',123.45,');
    expect(response.body).not.toContain(payouts.sandboxGbp.id);
  });

  it('answers the header alone for a date without payouts', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/payouts/bank-file?date=2027-01-04', headers: operatorHeaders });
    expect(response.statusCode).toBe(200);
    expect(response.body.trim().split('\n')).toHaveLength(1);
  });

  it('answers 422 naming the date for a bad one', async () => {
    for (const date of ['2026-12-32', '01-12-2026', 'tomorrow']) {
      const response = await get(`/payouts/bank-file?date=${date}`, operatorHeaders);
      expect(response.statusCode, response.body).toBe(422);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().errors).toEqual([{ pointer: '/query/date', detail: 'must be a date as YYYY-MM-DD' }]);
    }
  });

  it('answers 403 to a biller', async () => {
    const response = await get(`/payouts/bank-file?date=${DAY}`, headersA);
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('GET /payouts/bank-file?format=pain.001', () => {
  const url = (date: string) => `/payouts/bank-file?date=${date}&format=pain.001`;
  const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => name === 'CdtTrfTxInf' }).parse(xml);

  it('answers 409 while the currency has no active collection account to pay from', async () => {
    const response = await get(url(DAY), operatorHeaders);
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}no-collection-account`, currencies: ['GBP'] });
  });

  it('answers the pain.001 document of the live payouts as an XML attachment, as the CLI writes it', async () => {
    await createCollectionAccount(t.db);
    const response = await t.app.inject({ method: 'GET', url: url(DAY), headers: operatorHeaders });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/xml');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="payouts-${DAY}.pain.001.xml"`);

    const message = parse(response.body).Document.CstmrCdtTrfInitn;
    const expected = parse((await payoutPain001File(t.db, DAY)).xml).Document.CstmrCdtTrfInitn;
    expect(message).toEqual({ ...expected, GrpHdr: { ...expected.GrpHdr, CreDtTm: message.GrpHdr.CreDtTm } });
    expect(message.GrpHdr).toMatchObject({ NbOfTxs: '2', CtrlSum: '128.45' });
    const rows = await t.db.selectFrom('payouts').select(['reference', 'amount']).where('id', 'in', [payouts.aPaidGbp.id, payouts.bPendingGbp.id]).execute();
    const transfers = message.PmtInf.CdtTrfTxInf.map((transfer: { PmtId: { EndToEndId: string }; Amt: { InstdAmt: { '#text': string } } }) => [
      transfer.PmtId.EndToEndId,
      transfer.Amt.InstdAmt['#text'],
    ]);
    expect(transfers.sort()).toEqual(rows.map((row) => [row.reference, row.amount === 12_345 ? '123.45' : '5.00']).sort());
    expect(response.body).not.toContain(payouts.sandboxGbp.id);

    const cli = await runDeductions(['export', 'payouts', '--date', DAY, '--format', 'pain.001'], cliEnvOf(t.config));
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout.replace(/<CreDtTm>[^<]*<\/CreDtTm>/, '')).toBe(response.body.replace(/<CreDtTm>[^<]*<\/CreDtTm>/, ''));
  });

  it('answers 404 for a date without payouts, 400 for an unknown format, 403 to a biller', async () => {
    const none = await get(url('2027-01-04'), operatorHeaders);
    expect(none.statusCode).toBe(404);
    expect(none.json().detail).toBe('A live payout made on 2027-01-04 was not found');
    expect((await get(`/payouts/bank-file?date=${DAY}&format=mt101`, operatorHeaders)).statusCode).toBe(400);
    expect((await get(url(DAY), headersA)).statusCode).toBe(403);
    expect((await get(`/payouts/bank-file?date=${DAY}&format=csv`, operatorHeaders)).headers['content-type']).toMatch(/^text\/csv/);
  });
});
