import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { createBiller, createOperator } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Where money goes: the collection account employers remit to, and each biller's beneficiary
// accounts. A change adds an account and keeps the one it replaces; it is audited with the reason.

let t: TestApp;
let operator: IssuedCredentials;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  operator = await createOperator(t.db);
  headers = await authHeaders(t.app, operator);
});
afterAll(async () => t?.close());

const post = (url: string, body: object, key: string | null = randomUUID()) =>
  injectJson(t.app, { method: 'POST', url, headers: { ...headers, ...(key ? { 'idempotency-key': key } : {}) }, body });
const get = (url: string) => t.app.inject({ method: 'GET', url, headers });
const account = (overrides: Record<string, unknown> = {}) => ({
  currency: 'GBP',
  sort_code: '20-00-00',
  account_number: '41234978',
  account_holder_name: 'Salary Deductions Collections Ltd',
  reason: 'board minute 12',
  ...overrides,
});

describe('the collection account', () => {
  it('is set per currency; a change keeps the account it replaced, inactive, and is audited without the full number', async () => {
    const first = await post('/admin/collection-accounts', account({ currency: 'EUR' }));
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ collection_account: { currency: 'EUR', active: true, deactivated_at: null }, replaced: null });
    const second = await post(
      '/admin/collection-accounts',
      account({ currency: 'EUR', account_number: '55779911', account_holder_name: ' New Holder Ltd ', reason: 'bank move' }),
    );
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({
      collection_account: { account_number: '55779911', account_holder_name: 'New Holder Ltd', active: true },
      replaced: { id: first.json().collection_account.id, active: false, deactivated_at: expect.any(String) },
    });

    const listed = (await get('/admin/collection-accounts?currency=EUR')).json().collection_accounts;
    expect(listed.map((a: { account_number: string; active: boolean }) => [a.account_number, a.active])).toEqual([
      ['55779911', true],
      ['41234978', false],
    ]);
    const active = await t.db.selectFrom('collection_accounts').select('account_number').where('currency', '=', 'EUR').where('active', '=', true).execute();
    expect(active).toEqual([{ account_number: '55779911' }]);

    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_type', '=', 'collection_account').where('resource_id', '=', 'EUR').orderBy('at').execute();
    expect(audit.map((entry) => [entry.action, entry.actor, entry.reason])).toEqual([
      ['collection_account.replaced', operator.clientId, 'board minute 12'],
      ['collection_account.replaced', operator.clientId, 'bank move'],
    ]);
    expect(audit[1]).toMatchObject({ before: { account_number: '****4978' }, after: { account_number: '****9911' } });
    expect(JSON.stringify(audit)).not.toContain('55779911');
  });

  it('refuses bad details with 422 naming each field, and a change without a reason or an Idempotency-Key', async () => {
    const bad = await post('/admin/collection-accounts', account({ sort_code: '200000', account_number: '1234567', account_holder_name: ' ' }));
    expect(bad.statusCode).toBe(422);
    expect(
      bad
        .json()
        .errors.map((e: { pointer: string }) => e.pointer)
        .sort(),
    ).toEqual(['/account_holder_name', '/account_number', '/sort_code']);
    const noReason = await post('/admin/collection-accounts', account({ reason: undefined }));
    expect(noReason.statusCode).toBe(422);
    expect(noReason.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/reason']);
    expect((await post('/admin/collection-accounts', account(), null)).statusCode).toBe(400);
    expect((await get('/admin/collection-accounts?currency=USD')).json().collection_accounts).toEqual([]);
  });

  it('is history: a row is never overwritten, switched back on or deleted, whoever writes to the table', async () => {
    const { collection_account: current } = (await post('/admin/collection-accounts', account({ currency: 'CHF' }))).json();
    const change = (set: Record<string, unknown>) => t.db.updateTable('collection_accounts').set(set).where('id', '=', current.id).execute();
    await expect(change({ account_number: '99999999' })).rejects.toThrow(/is history/);
    await expect(change({ sort_code: '11-11-11' })).rejects.toThrow(/is history/);
    await expect(t.db.deleteFrom('collection_accounts').where('id', '=', current.id).execute()).rejects.toThrow(/is history/);
    await change({ active: false, deactivated_at: new Date() });
    await expect(change({ active: true, deactivated_at: null })).rejects.toThrow(/is history/);
  });
});

describe("a biller's beneficiary accounts over the API", () => {
  it('sets and replaces them, keeping the history, audited against the biller', async () => {
    const biller = await createBiller(t.db);
    const url = `/admin/billers/${biller.clientId}/beneficiary-accounts`;
    const first = await post(url, account({ sort_code: '60-16-13', account_number: '31926819', account_holder_name: 'Acme Lending Ltd', reason: 'onboarding form 17' }));
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ beneficiary_account: { biller_client_id: biller.clientId, account_number: '31926819', active: true }, replaced: null });
    const second = await post(url, account({ sort_code: '60-16-13', account_number: '11112220', account_holder_name: 'Acme Lending Ltd', reason: 'change of bank' }));
    expect(second.json().replaced).toMatchObject({ id: first.json().beneficiary_account.id, active: false });

    const listed = (await get(url)).json().beneficiary_accounts;
    expect(listed.map((a: { account_number: string; active: boolean }) => [a.account_number, a.active])).toEqual([
      ['11112220', true],
      ['31926819', false],
    ]);
    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', biller.clientId).orderBy('at').execute();
    expect(audit.map((entry) => [entry.action, entry.actor, entry.reason])).toEqual([
      ['beneficiary_account.replaced', operator.clientId, 'onboarding form 17'],
      ['beneficiary_account.replaced', operator.clientId, 'change of bank'],
    ]);
  });

  it('answers 404 for an unknown client, 409 to pay a client that is no biller, and 422 for bad details', async () => {
    expect((await post(`/admin/billers/${randomUUID()}/beneficiary-accounts`, account())).statusCode).toBe(404);
    expect((await post('/admin/billers/nope/beneficiary-accounts', account())).statusCode).toBe(404);
    expect((await get(`/admin/billers/${randomUUID()}/beneficiary-accounts`)).statusCode).toBe(404);
    expect((await get(`/admin/billers/${operator.clientId}/beneficiary-accounts`)).statusCode).toBe(404);
    expect((await post(`/admin/billers/${operator.clientId}/beneficiary-accounts`, account())).statusCode).toBe(409);
    const biller = await createBiller(t.db);
    const bad = await post(`/admin/billers/${biller.clientId}/beneficiary-accounts`, account({ account_number: '123456789' }));
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/account_number']);
    expect((await get(`/admin/billers/${biller.clientId}/beneficiary-accounts`)).json()).toEqual({ beneficiary_accounts: [] });
  });
});

describe('account details checked at setup, so no payout bounces on a mistyped number and no name blocks a payment file', () => {
  const problem = (response: { statusCode: number; headers: Record<string, unknown>; json: () => { errors: Array<{ pointer: string; detail: string }> } }) => {
    expect(response.statusCode).toBe(422);
    expect(String(response.headers['content-type'])).toContain('application/problem+json');
    return response.json().errors;
  };

  it('refuses a sort code and account number that fail the Vocalink modulus check, at the account number', async () => {
    const biller = await createBiller(t.db);
    for (const url of ['/admin/collection-accounts', `/admin/billers/${biller.clientId}/beneficiary-accounts`]) {
      // One digit off the collection account above.
      const refused = await post(url, account({ currency: 'SEK', account_number: '41234979' }));
      expect(problem(refused)).toEqual([
        { pointer: '/account_number', detail: 'fails the Vocalink modulus check for sort code 20-00-00: check both for a mistyped or swapped digit' },
      ]);
    }
    expect((await get('/admin/collection-accounts?currency=SEK')).json().collection_accounts).toEqual([]);
    // VocaLink's worked example passes.
    expect((await post('/admin/collection-accounts', account({ currency: 'SEK', sort_code: '08-99-99', account_number: '66374958' }))).statusCode).toBe(201);
  });

  it('refuses a holder name a payment file cannot carry, or that outgrows a pain.001 name once written in its characters', async () => {
    const biller = await createBiller(t.db);
    const url = `/admin/billers/${biller.clientId}/beneficiary-accounts`;
    for (const name of ['北京银行', '😀😀', 'A']) {
      const [error, ...rest] = problem(await post(url, account({ account_holder_name: name })));
      expect(rest).toEqual([]);
      expect(error).toMatchObject({ pointer: '/account_holder_name', detail: expect.stringMatching(/needs at least 2 letters or digits/) });
    }
    const long = problem(await post(url, account({ account_holder_name: `${'Щ'.repeat(20)} Ltd` })));
    expect(long).toEqual([{ pointer: '/account_holder_name', detail: expect.stringMatching(/^is 84 characters as a payment file writes it, over the 70/) }]);
    expect((await get(url)).json()).toEqual({ beneficiary_accounts: [] });
  });

  it('shows the holder name as the payment file will write it', async () => {
    const biller = await createBiller(t.db);
    const url = `/admin/billers/${biller.clientId}/beneficiary-accounts`;
    const set = await post(url, account({ currency: 'GBP', account_holder_name: 'Müller & Söhne Иванов', reason: 'onboarding' }));
    expect(set.statusCode, set.body).toBe(201);
    expect(set.json().beneficiary_account).toMatchObject({
      account_holder_name: 'Müller & Söhne Иванов',
      payment_file_name: 'Muller and Sohne Ivanov',
      payment_file_name_problem: null,
    });
    expect((await get(url)).json().beneficiary_accounts[0]).toMatchObject({ payment_file_name: 'Muller and Sohne Ivanov' });
    const collection = await post('/admin/collection-accounts', account({ currency: 'NOK', account_holder_name: 'Παπαδόπουλος & Co' }));
    expect(collection.json().collection_account).toMatchObject({ payment_file_name: 'Papadopoulos and Co', payment_file_name_problem: null });
  });

  it('shows operators an account stored before names were checked, with the name the file writes instead', async () => {
    const biller = await createBiller(t.db);
    await t.db
      .insertInto('beneficiary_accounts')
      .values({ biller_client_id: biller.clientId, currency: 'GBP', sort_code: '60-16-13', account_number: '31926819', account_holder_name: '北京银行' })
      .execute();
    const [stored] = (await get(`/admin/billers/${biller.clientId}/beneficiary-accounts`)).json().beneficiary_accounts;
    expect(stored).toMatchObject({
      account_holder_name: '北京银行',
      payment_file_name: 'BeiJingYinXing',
      payment_file_name_problem: expect.stringMatching(/^has no character a UK payment file can carry/),
    });
  });
});
