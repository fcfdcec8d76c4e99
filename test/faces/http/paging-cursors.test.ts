import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { createBiller, createEmploymentWorld, createMandateRow, createPaymentRequestRow } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let billerA: IssuedCredentials;
let headersA: Record<string, string>;
let otherTenantsPaymentId: string;

beforeAll(async () => {
  t = await startTestApp();
  const world = await createEmploymentWorld(t.db);
  billerA = await createBiller(t.db);
  const billerB = await createBiller(t.db);
  headersA = await authHeaders(t.app, billerA);
  const mandateA = await createMandateRow(t.db, { billerClientId: billerA.clientId, employeeId: world.employee.id, payrollId: world.payroll.id });
  const mandateB = await createMandateRow(t.db, { billerClientId: billerB.clientId, employeeId: world.employee.id, payrollId: world.payroll.id });
  for (let i = 0; i < 5; i++) await createPaymentRequestRow(t.db, { mandate: mandateA, amount: 100 + i });
  otherTenantsPaymentId = (await createPaymentRequestRow(t.db, { mandate: mandateB })).id;
});
afterAll(async () => t?.close());

const list = (query: string) => t.app.inject({ method: 'GET', url: `/payments${query}`, headers: headersA });
const forged = (createdAt: string, id: string) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');

describe('paging cursors over the API', () => {
  it('walk every page with the cursors the API hands out, both ways', async () => {
    const seen: string[] = [];
    let page = (await list('?limit=2')).json();
    seen.push(...page.payments.map((p: { id: string }) => p.id));
    while (page.paging.after) {
      page = (await list(`?limit=2&after=${page.paging.after}`)).json();
      seen.push(...page.payments.map((p: { id: string }) => p.id));
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    const back = (await list(`?limit=2&before=${page.paging.before}`)).json();
    expect(back.payments).toHaveLength(2);
  });

  it('answer a forged cursor with an id that is no UUID with 400, not 500', async () => {
    const response = await list(`?after=${forged(new Date().toISOString(), "x' or 1=1 --")}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}invalid-cursor`,
      status: 400,
      errors: [{ pointer: '/query/after', detail: expect.any(String) }],
    });
  });

  it('answer a forged cursor naming another tenant’s row exactly as one naming nothing', async () => {
    const instant = new Date().toISOString();
    const theirs = await list(`?before=${forged(instant, otherTenantsPaymentId)}`);
    const nobodys = await list(`?before=${forged(instant, crypto.randomUUID())}`);
    expect(theirs.statusCode).toBe(400);
    expect(theirs.json().errors).toEqual([{ pointer: '/query/before', detail: expect.any(String) }]);
    const { instance: _theirs, ...theirsProblem } = theirs.json();
    const { instance: _nobodys, ...nobodysProblem } = nobodys.json();
    expect(theirsProblem).toEqual(nobodysProblem);
  });

  it('answer a cursor changed by one character with 400', async () => {
    const cursor = (await list('?limit=1')).json().paging.after as string;
    const changed = cursor.slice(0, 3) + (cursor[3] === 'A' ? 'B' : 'A') + cursor.slice(4);
    expect((await list(`?after=${changed}`)).statusCode).toBe(400);
  });
});
