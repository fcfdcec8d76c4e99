import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { createBiller, createEmploymentWorld, createMandateRow, createPaymentRequestRow, createPayoutRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let billerA: IssuedCredentials;
let billerB: IssuedCredentials;
let headersA: Record<string, string>;
let headersB: Record<string, string>;
let paymentIds: string[];

beforeAll(async () => {
  t = await startTestApp();
  const world = await createEmploymentWorld(t.db);
  billerA = await createBiller(t.db);
  billerB = await createBiller(t.db);
  headersA = await authHeaders(t.app, billerA);
  headersB = await authHeaders(t.app, billerB);
  const mandate = await createMandateRow(t.db, {
    billerClientId: billerA.clientId,
    employeeId: world.employee.id,
    payrollId: world.payroll.id,
  });
  paymentIds = [];
  for (const amount of [5000, 7345]) {
    paymentIds.push((await createPaymentRequestRow(t.db, { mandate, status: 'collected', amount })).id);
  }
});
afterAll(async () => t?.close());

function expectProblem(response: LightMyRequestResponse, status: number, slug: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json().type).toBe(PROBLEM_TYPE_BASE + slug);
}

const get = (url: string, headers: Record<string, string>) => injectJson(t.app, { method: 'GET', url, headers });

describe('GET /payouts/:payout_id', () => {
  it('shows the payout with its bank transfer in major units and its signed items', async () => {
    const payout = await createPayoutRow(t.db, {
      billerClientId: billerA.clientId,
      payoutDate: '2026-12-01',
      items: [
        { paymentRequestId: paymentIds[0]!, kind: 'payment_collected', amount: 5000 },
        { paymentRequestId: paymentIds[1]!, kind: 'payment_collected', amount: 7345 },
        { paymentRequestId: paymentIds[0]!, kind: 'collection_reversed', amount: -1000 },
      ],
    });
    const response = await get(`/payouts/${payout.id}`, headersA);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json().payout;
    expect(body).toMatchObject({
      id: payout.id,
      status: 'pending',
      currency: 'GBP',
      amount: 11_345,
      payout_date: '2026-12-01',
      reference: payout.reference,
      payment_information: {
        payment_reference: payout.reference,
        payment_amount: 113.45,
        payment_account: { account_number: '55779911', sort_code: '20-00-00', account_holder_name: 'Biller Beneficiary Ltd' },
      },
      paid_at: null,
      failed_at: null,
      failure_reason: null,
      version: 1,
      created_at: payout.created_at.toISOString(),
    });
    expect(body.items).toHaveLength(3);
    expect(body.items).toEqual(
      expect.arrayContaining([
        { payment_request_id: paymentIds[0], kind: 'payment_collected', amount: 5000 },
        { payment_request_id: paymentIds[0], kind: 'collection_reversed', amount: -1000 },
        { payment_request_id: paymentIds[1], kind: 'payment_collected', amount: 7345 },
      ]),
    );
    // A reversal sits next to the collection it reverses.
    const forFirst = body.items.map((item: { payment_request_id: string }) => item.payment_request_id === paymentIds[0]);
    expect(forFirst.indexOf(true) + 1).toBe(forFirst.lastIndexOf(true));
  });

  it('shows failed payouts with their reason', async () => {
    const payout = await createPayoutRow(t.db, { billerClientId: billerA.clientId, status: 'failed', amount: 100 });
    const body = (await get(`/payouts/${payout.id}`, headersA)).json().payout;
    expect(body).toMatchObject({ status: 'failed', failure_reason: 'Account closed', items: [] });
    expect(body.payment_information.payment_amount).toBe(1);
    expect(body.failed_at).toBe(payout.failed_at!.toISOString());
  });

  it('answers 404 for an unknown id, a non-UUID id and another biller', async () => {
    const payout = await createPayoutRow(t.db, { billerClientId: billerA.clientId });
    expectProblem(await get(`/payouts/${randomUUID()}`, headersA), 404, 'not-found');
    expectProblem(await get('/payouts/nope', headersA), 404, 'not-found');
    expectProblem(await get(`/payouts/${payout.id}`, headersB), 404, 'not-found');
  });
});

describe('GET /payouts', () => {
  let billerC: IssuedCredentials;
  let headersC: Record<string, string>;
  /** Newest first. */
  let created: Array<{ id: string; status: string; currency: string }>;

  beforeAll(async () => {
    billerC = await createBiller(t.db);
    headersC = await authHeaders(t.app, billerC);
    created = [];
    for (const [status, currency] of [
      ['paid', 'GBP'],
      ['pending', 'GBP'],
      ['paid', 'EUR'],
      ['failed', 'GBP'],
      ['pending', 'EUR'],
    ] as const) {
      created.unshift(await createPayoutRow(t.db, { billerClientId: billerC.clientId, status, currency }));
    }
  });

  it('lists newest first without items, paging with after and before without duplicates or gaps', async () => {
    const pages: string[][] = [];
    let body: { payouts: Array<{ id: string; items?: unknown }>; paging: { after: string | null; before: string | null } };
    let after: string | null = null;
    do {
      const response = await get(`/payouts?limit=2${after ? `&after=${after}` : ''}`, headersC);
      expect(response.statusCode, response.body).toBe(200);
      body = response.json();
      for (const payout of body.payouts) expect(payout).not.toHaveProperty('items');
      pages.push(body.payouts.map((p) => p.id));
      after = body.paging.after;
      if (pages.length > 5) throw new Error('paging does not end');
    } while (after);
    expect(pages.flat()).toEqual(created.map((p) => p.id));

    const back = await get(`/payouts?limit=2&before=${body.paging.before}`, headersC);
    expect(back.json().payouts.map((p: { id: string }) => p.id)).toEqual(pages[1]);
  });

  it('filters by status and currency', async () => {
    const paid = (await get('/payouts?status=paid', headersC)).json().payouts;
    expect(paid.map((p: { id: string }) => p.id)).toEqual(created.filter((p) => p.status === 'paid').map((p) => p.id));
    const eur = (await get('/payouts?currency=EUR', headersC)).json().payouts;
    expect(eur.map((p: { id: string }) => p.id)).toEqual(created.filter((p) => p.currency === 'EUR').map((p) => p.id));
    const both = (await get('/payouts?currency=EUR&status=pending', headersC)).json().payouts;
    expect(both).toHaveLength(1);
    expect(both[0]).toMatchObject({ status: 'pending', currency: 'EUR' });
    expectProblem(await get('/payouts?status=sent', headersC), 400, 'validation-failed');
  });

  it("never lists another biller's payouts", async () => {
    const listed = (await get('/payouts?limit=500', headersB)).json().payouts;
    expect(listed).toEqual([]);
    const own = (await get('/payouts?limit=500', headersA)).json().payouts.map((p: { id: string }) => p.id);
    const rows = await t.db.selectFrom('payouts').select('id').where('biller_client_id', '=', billerA.clientId).execute();
    expect(own.sort()).toEqual(rows.map((r) => r.id).sort());
  });
});

describe('authentication and scopes', () => {
  it('answers 401 without credentials and 403 without payouts:read', async () => {
    const payout = await createPayoutRow(t.db, { billerClientId: billerA.clientId });
    const noScope = await authHeaders(t.app, billerA, 'payments:read');
    for (const url of [`/payouts/${payout.id}`, '/payouts']) {
      expect((await get(url, {})).statusCode).toBe(401);
      expectProblem(await get(url, noScope), 403, 'insufficient-scope');
    }
  });
});
