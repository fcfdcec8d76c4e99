import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../src/directory/auth/clients-service.ts';
import { payrollScheduleResponseSchema } from '../../../src/directory/payroll-providers/reference-schemas.ts';
import { createBiller, createEmploymentWorld, createOperator, createProviderClient, futureMonthlyPayDates } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;
let billerHeaders: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  world = await createEmploymentWorld(t.db);
  billerHeaders = await authHeaders(t.app, await createBiller(t.db));
});
afterAll(async () => {
  await t.close();
});

const getPayroll = (id: string, headers: Record<string, string>) => injectJson(t.app, { method: 'GET', url: `/payrolls/${id}`, headers });

describe('GET /payrolls/:payroll_id', () => {
  it('gives a biller the payroll and every pay date with its lock date', async () => {
    const response = await getPayroll(world.payroll.id, billerHeaders);

    expect(response.statusCode, response.body).toBe(200);
    const body = payrollScheduleResponseSchema.parse(response.json());
    expect(body).toEqual({
      payroll: {
        id: world.payroll.id,
        employer_id: world.employer.external_id,
        name: world.payroll.name,
        payment_run_frequency: 'monthly',
        currency: 'GBP',
        pay_dates: futureMonthlyPayDates(),
      },
    });
    expect(body.payroll.pay_dates.every((d) => d.lock_date !== undefined)).toBe(true);
  });

  it('includes pay dates whose lock has already run', async () => {
    const extra = { pay_date: '2020-01-31', payroll_cutoff_date: '2020-01-24', pay_period: '10-2019', lock_date: '2020-01-22' };
    const other = await createEmploymentWorld(t.db);
    await t.db
      .insertInto('pay_dates')
      .values({ payroll_id: other.payroll.id, ...extra })
      .execute();

    const response = await getPayroll(other.payroll.id, billerHeaders);

    expect(response.json().payroll.pay_dates[0]).toEqual(extra);
  });

  it("gives a payroll provider its own payroll, and 404 for another provider's", async () => {
    const own = await createProviderClient(t.db, world.provider.id);
    const ownResponse = await getPayroll(world.payroll.id, await authHeaders(t.app, own));
    expect(ownResponse.statusCode).toBe(200);
    expect(ownResponse.json().payroll.id).toBe(world.payroll.id);

    const stranger = await createProviderClient(t.db);
    const strangerResponse = await getPayroll(world.payroll.id, await authHeaders(t.app, stranger));
    expect(strangerResponse.statusCode).toBe(404);
    expect(strangerResponse.json().payroll).toBeUndefined();
  });

  it('answers 404 for an unknown id and for an id that is not a UUID', async () => {
    const unknown = await getPayroll(crypto.randomUUID(), billerHeaders);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/application\/problem\+json/);

    const malformed = await getPayroll('not-a-uuid', billerHeaders);
    expect(malformed.statusCode).toBe(404);
  });

  it('is not for operators, even one granted availability:check', async () => {
    const operator = await createOperator(t.db);
    const response = await getPayroll(world.payroll.id, await authHeaders(t.app, operator));
    expect(response.statusCode).toBe(403);

    const scopedOperator = await createClient(t.db, { name: 'Scoped operator', role: 'operator', scopes: ['availability:check'] });
    const scoped = await getPayroll(world.payroll.id, await authHeaders(t.app, scopedOperator));
    expect(scoped.statusCode).toBe(403);
    expect(scoped.json().type).toMatch(/forbidden-role$/);
  });
});
