import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { findBrokenRecordLinks } from '../../../src/cycle/deduction-records/record-links-repository.ts';
import { fromMajorUnits } from '../../../src/platform/money/major-units.ts';
import { createBiller, createEmployee, createEmployer, createPayroll, createPayrollProvider, createProviderClient } from '../../support/factories.ts';
import { authHeaders, fetchToken, injectJson, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

// Written from the salary-deduction interface's "Salary deduction employee push record", response body.
const interfaceDocumentResponse = z.strictObject({
  pay_period: z.string(),
  id: z.string(),
  payroll_id: z.string(),
  version: z.number(),
  salary_deduction: z.strictObject({ employee_id: z.string(), deduction_amount: z.number(), currency: z.string() }),
  outcome: z.literal('Accepted'),
});

const calendar = [
  { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
];

let t: TestApp;
let queue: Queue;
let provider: { id: string };
let employer: { id: string };
let credentials: Credentials;
let headers: Record<string, string>;
let payrollId: string;

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' } });
  queue = new Queue('pay-dates', { connection: { url: t.config.REDIS_URL }, prefix: t.config.QUEUE_PREFIX });
  provider = await createPayrollProvider(t.db);
  credentials = await createProviderClient(t.db, provider.id);
  headers = await authHeaders(t.app, credentials);
  employer = await createEmployer(t.db, provider.id);
  payrollId = (await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar })).id;
});
afterAll(async () => {
  await queue.close();
  await t.close();
});

async function newEmployee(onPayrollId = payrollId): Promise<string> {
  const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: onPayrollId, employerId: employer.id });
  return employee.id;
}

function record(employeeId: string, version: number, amount: number, extra: Record<string, unknown> = {}) {
  return {
    pay_period: '8-2026',
    id: `REC-${employeeId.slice(0, 8)}-${version}`,
    version,
    salary_deduction: { employee_id: employeeId, deduction_amount: amount, currency: 'GBP' },
    ...extra,
  };
}

function push(body: object, options: { payroll?: string; headers?: Record<string, string> } = {}) {
  return injectJson(t.app, {
    method: 'POST',
    url: `/deductions/payroll/${options.payroll ?? payrollId}`,
    headers: options.headers ?? headers,
    body,
  });
}

async function storedVersions(employeeId: string) {
  return t.db
    .selectFrom('deduction_records')
    .select(['version', 'deduction_amount', 'source', 'requested_payments', 'record_id', 'pay_date', 'content_hash'])
    .where('employee_id', '=', employeeId)
    .orderBy('version')
    .execute();
}

describe('POST /deductions/payroll/{payroll_id}: versioning', () => {
  it('stores a first version, answering in the interface shape with the amount as received', async () => {
    const employeeId = await newEmployee();
    const response = await push(record(employeeId, 1, 125.5));
    expect(response.statusCode, response.body).toBe(200);
    const body = interfaceDocumentResponse.parse(response.json());
    expect(body).toEqual({
      pay_period: '8-2026',
      id: `REC-${employeeId.slice(0, 8)}-1`,
      payroll_id: payrollId,
      version: 1,
      salary_deduction: { employee_id: employeeId, deduction_amount: 125.5, currency: 'GBP' },
      outcome: 'Accepted',
    });
    const rows = await storedVersions(employeeId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ version: 1, deduction_amount: 12_550, source: 'push', pay_date: '2026-11-27' });
    // The records have no foreign keys (migration 20261122031000); this audit stands in for them.
    expect(await findBrokenRecordLinks(t.db, payrollId)).toEqual([]);
  });

  it('applies the versioning table: higher replaces, same-equal is idempotent, same-different and lower are 409', async () => {
    const employeeId = await newEmployee();
    expect((await push(record(employeeId, 2, 100))).statusCode).toBe(200);

    // The same content written differently (125.50 vs 125.5, keys reordered, other record id): one row.
    const sameAgain = await t.app.inject({
      method: 'POST',
      url: `/deductions/payroll/${payrollId}`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: `{"version":2,"id":"another-id","salary_deduction":{"currency":"GBP","deduction_amount":100.00,"employee_id":"${employeeId.toUpperCase()}"},"pay_period":"8-2026"}`,
    });
    expect(sameAgain.statusCode, sameAgain.body).toBe(200);
    expect(sameAgain.json()).toMatchObject({ version: 2, outcome: 'Accepted', id: 'another-id' });
    expect(await storedVersions(employeeId)).toHaveLength(1);

    const sameDifferent = await push(record(employeeId, 2, 99.99));
    expect(sameDifferent.statusCode).toBe(409);
    expect(sameDifferent.headers['content-type']).toContain('application/problem+json');
    expect(sameDifferent.json()).toMatchObject({ status: 409, current_version: 2 });
    expect(sameDifferent.json().detail).toContain('current version is 2');

    const higher = await push(record(employeeId, 5, 80.01));
    expect(higher.statusCode).toBe(200);
    expect(higher.json().version).toBe(5);

    const lower = await push(record(employeeId, 4, 80.01));
    expect(lower.statusCode).toBe(409);
    expect(lower.json()).toMatchObject({ current_version: 5 });
    expect(lower.json().detail).toContain('current version 5');

    const rows = await storedVersions(employeeId);
    expect(rows.map((row) => [row.version, row.deduction_amount])).toEqual([
      [2, 10_000],
      [5, 8_001],
    ]);
  });

  it('keeps requested payments in minor units and counts them as content', async () => {
    const employeeId = await newEmployee();
    const requested = (amount: number) => [
      {
        payment_information: {
          payment_reference: 'SD-8-2026',
          payment_amount: amount,
          payment_account: { account_number: '41234978', sort_code: '04-00-04', account_holder_name: 'Collections Ltd' },
        },
      },
    ];
    expect((await push(record(employeeId, 1, 30.01, { requested_payments: requested(30.01) }))).statusCode).toBe(200);
    const [row] = await storedVersions(employeeId);
    expect(row!.requested_payments).toEqual(requested(3_001));
    const otherRequested = await push(record(employeeId, 1, 30.01, { requested_payments: requested(30.02) }));
    expect(otherRequested.statusCode).toBe(409);
  });

  it('queues reconciliation of the pay date after an accepted push, not after a replayed one', async () => {
    const otherPayroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
    const employeeId = await newEmployee(otherPayroll.id);
    const reconcileJobs = async () =>
      (await queue.getJobs(['delayed', 'waiting', 'prioritized'])).filter((job) => job.name === 'reconcile-pay-date' && job.data.payrollId === otherPayroll.id);
    expect(await reconcileJobs()).toHaveLength(0);
    expect((await push(record(employeeId, 1, 10), { payroll: otherPayroll.id })).statusCode).toBe(200);
    const jobs = await reconcileJobs();
    expect(jobs.map((job) => job.data)).toEqual([{ payrollId: otherPayroll.id, payDate: '2026-11-27' }]);

    await queue.obliterate({ force: true });
    expect((await push(record(employeeId, 1, 10), { payroll: otherPayroll.id })).statusCode).toBe(200);
    expect((await push(record(employeeId, 0, 10), { payroll: otherPayroll.id })).statusCode).toBe(409);
    expect(await reconcileJobs()).toHaveLength(0);
  });

  it('replays the stored answer for a repeated Idempotency-Key without storing again', async () => {
    const employeeId = await newEmployee();
    const key = crypto.randomUUID();
    const first = await push(record(employeeId, 1, 10), { headers: { ...headers, 'idempotency-key': key } });
    const replay = await push(record(employeeId, 1, 10), { headers: { ...headers, 'idempotency-key': key } });
    expect(first.statusCode).toBe(200);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await storedVersions(employeeId)).toHaveLength(1);
  });
});

describe('POST /deductions/payroll/{payroll_id}: concurrency', () => {
  it('ends with the higher of two concurrent versions current, whatever the arrival order', async () => {
    for (let round = 0; round < 6; round++) {
      const employeeId = await newEmployee();
      const low = record(employeeId, 1, 10);
      const high = record(employeeId, 2, 20);
      const [first, second] = round % 2 === 0 ? [low, high] : [high, low];
      const responses = await Promise.all([push(first), push(second)]);
      const byVersion = new Map(responses.map((response, i) => [[first, second][i]!.version, response]));
      expect(byVersion.get(2)!.statusCode).toBe(200);
      const lowResponse = byVersion.get(1)!;
      expect([200, 409]).toContain(lowResponse.statusCode);
      if (lowResponse.statusCode === 409) expect(lowResponse.json().current_version).toBe(2);
      const latest = await t.db
        .selectFrom('deduction_records')
        .select(['version', 'deduction_amount'])
        .where('employee_id', '=', employeeId)
        .orderBy('version', 'desc')
        .executeTakeFirstOrThrow();
      expect(latest).toEqual({ version: 2, deduction_amount: 2_000 });
    }
  });

  it('lets exactly one of two concurrent same-version pushes with different content win', async () => {
    for (let round = 0; round < 4; round++) {
      const employeeId = await newEmployee();
      const responses = await Promise.all([push(record(employeeId, 7, 10)), push(record(employeeId, 7, 11))]);
      expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 409]);
      const loser = responses.find((response) => response.statusCode === 409)!;
      expect(loser.json().current_version).toBe(7);
      const rows = await storedVersions(employeeId);
      expect(rows).toHaveLength(1);
      const winner = responses.find((response) => response.statusCode === 200)!;
      expect(rows[0]!.deduction_amount).toBe(fromMajorUnits(winner.json().salary_deduction.deduction_amount, 'GBP'));
    }
  });

  it('stores one row for two concurrent identical pushes, both answered 200', async () => {
    const employeeId = await newEmployee();
    const responses = await Promise.all([push(record(employeeId, 1, 10)), push(record(employeeId, 1, 10))]);
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200]);
    expect(await storedVersions(employeeId)).toHaveLength(1);
  });
});

describe('POST /deductions/payroll/{payroll_id}: rejections', () => {
  it('answers 404 for an unknown payroll, a malformed id and another provider’s payroll', async () => {
    const employeeId = await newEmployee();
    for (const payroll of [crypto.randomUUID(), 'payroll-1']) {
      const response = await push(record(employeeId, 1, 10), { payroll });
      expect(response.statusCode, payroll).toBe(404);
    }
    const otherProvider = await createPayrollProvider(t.db);
    const otherCredentials = await createProviderClient(t.db, otherProvider.id);
    const foreign = await push(record(employeeId, 1, 10), { headers: await authHeaders(t.app, otherCredentials) });
    expect(foreign.statusCode).toBe(404);
    expect(await storedVersions(employeeId)).toHaveLength(0);
  });

  it.each([
    ['an employee not on the payroll', async () => record(crypto.randomUUID(), 1, 10), '/salary_deduction/employee_id'],
    ['an employee id that is not a UUID', async () => record('WN-1', 1, 10), '/salary_deduction/employee_id'],
    [
      'an employee of another payroll',
      async () => {
        const other = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
        return record(await newEmployee(other.id), 1, 10);
      },
      '/salary_deduction/employee_id',
    ],
    [
      'a currency other than the payroll’s',
      async (e: string) => ({ ...record(e, 1, 10), salary_deduction: { employee_id: e, deduction_amount: 10, currency: 'EUR' } }),
      '/salary_deduction/currency',
    ],
    ['a pay period not in the calendar', async (e: string) => ({ ...record(e, 1, 10), pay_period: '10-2026' }), '/pay_period'],
    ['more decimals than GBP allows', async (e: string) => record(e, 1, 125.555), '/salary_deduction/deduction_amount'],
    ['a negative amount', async (e: string) => record(e, 1, -1), '/salary_deduction/deduction_amount'],
    [
      'requested payments with too many decimals',
      async (e: string) =>
        record(e, 1, 10, {
          requested_payments: [
            {
              payment_information: {
                payment_reference: 'R',
                payment_amount: 10.001,
                payment_account: { account_number: '1', sort_code: '04-00-04', account_holder_name: 'C' },
              },
            },
          ],
        }),
      '/requested_payments/0/payment_information/payment_amount',
    ],
    ['a fractional version', async (e: string) => record(e, 1.5, 10), '/version'],
  ])('answers 422 for %s, pointing at the field', async (_name, build, pointer) => {
    const employeeId = await newEmployee();
    const response = await push(await build(employeeId));
    expect(response.statusCode, response.body).toBe(422);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json().errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    expect(await storedVersions(employeeId)).toHaveLength(0);
  });

  it('answers 401 without credentials and 403 without the scope or to a biller', async () => {
    const employeeId = await newEmployee();
    expect((await push(record(employeeId, 1, 10), { headers: {} })).statusCode).toBe(401);
    const narrowToken = await fetchToken(t.app, credentials, 'deduction_data:request');
    const narrow = await push(record(employeeId, 1, 10), { headers: { authorization: `Bearer ${narrowToken}`, 'x-api-key': credentials.apiKey } });
    expect(narrow.statusCode).toBe(403);
    const biller = await createBiller(t.db);
    const asBiller = await push(record(employeeId, 1, 10), { headers: await authHeaders(t.app, biller) });
    expect(asBiller.statusCode).toBe(403);
    expect(await storedVersions(employeeId)).toHaveLength(0);
  });
});
