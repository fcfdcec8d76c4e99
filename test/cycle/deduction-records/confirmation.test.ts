import { Queue } from 'bullmq';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lockPayDate, relockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { deductionContentHash } from '../../../src/cycle/deduction-records/deduction-content.ts';
import { findBrokenRecordLinks } from '../../../src/cycle/deduction-records/record-links-repository.ts';
import { toMajorUnits } from '../../../src/platform/money/major-units.ts';
import {
  createBiller,
  createCollectionAccount,
  createEmployee,
  createEmployer,
  createMandateRow,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
  createProviderClient,
} from '../../support/factories.ts';
import { untilSessionsWaitForDatabaseLocks } from '../../support/database.ts';
import { authHeaders, fetchToken, injectJson, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

// The confirmation submission response as the salary-deduction interface describes it.
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const confirmationResponse = z.strictObject({
  confirmation: z.strictObject({
    id: uuid,
    payroll_id: uuid,
    pay_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    pay_period: z.string().regex(/^\d+-\d+$/),
    deduction_data_id: uuid,
    currency: z.string().regex(/^[A-Z]{3}$/),
    total_amount: z.number(),
    employee_count: z.number().int(),
    received_at: z.iso.datetime(),
  }),
});

const calendar = [
  { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
  { pay_date: '2027-01-28', payroll_cutoff_date: '2027-01-21', pay_period: '10-2026', lock_date: '2027-01-18' },
];

let t: TestApp;
let queue: Queue;
let provider: { id: string };
let employer: { id: string };
let credentials: Credentials;
let headers: Record<string, string>;
let payrollId: string;
let snapshotId: string;
let employees: string[];

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' } });
  queue = new Queue('pay-dates', { connection: { url: t.config.REDIS_URL }, prefix: t.config.QUEUE_PREFIX });
  await createCollectionAccount(t.db);
  provider = await createPayrollProvider(t.db);
  credentials = await createProviderClient(t.db, provider.id);
  headers = await authHeaders(t.app, credentials);
  employer = await createEmployer(t.db, provider.id);
  payrollId = (await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar })).id;
  const biller = await createBiller(t.db);
  employees = [];
  for (const amount of [12_550, 3_001, 5_000]) {
    const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId, employerId: employer.id });
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId });
    await createPaymentRequestRow(t.db, { mandate: { ...mandate, currency: 'GBP' }, amount, targetPayDate: '2026-11-27' });
    employees.push(employee.id);
  }
  snapshotId = (await lockPayDate(t.db, payrollId, '2026-11-27')).snapshotId;
});
afterAll(async () => {
  await queue.close();
  await t.close();
});

interface Line {
  employee_id: string;
  deducted_amount: number;
  leaver?: boolean;
}

function confirmation(lines: Line[], total: number, overrides: Record<string, unknown> = {}) {
  return {
    confirmation: { deduction_data_id: snapshotId, pay_period: '8-2026', currency: 'GBP', total_amount: total, deductions: lines, ...overrides },
  };
}

function submit(body: object, options: { payroll?: string; headers?: Record<string, string> } = {}) {
  return injectJson(t.app, {
    method: 'POST',
    url: `/deductions/${options.payroll ?? payrollId}/confirmation`,
    headers: options.headers ?? headers,
    body,
  });
}

async function recordCount() {
  const row = await t.db
    .selectFrom('deduction_records')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  const confirmations = await t.db
    .selectFrom('confirmations')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return { records: Number(row.count), confirmations: Number(confirmations.count) };
}

async function latestRecord(employeeId: string) {
  return t.db.selectFrom('deduction_records').selectAll().where('employee_id', '=', employeeId).orderBy('version', 'desc').executeTakeFirstOrThrow();
}

describe('POST /deductions/{payroll_id}/confirmation', () => {
  it('stores one new version per employee on top of pushed versions, confirms the snapshot and queues reconciliation', async () => {
    const [pushed, second, leaver] = employees as [string, string, string];
    for (const version of [1, 2, 3]) {
      const response = await injectJson(t.app, {
        method: 'POST',
        url: `/deductions/payroll/${payrollId}`,
        headers,
        body: { pay_period: '8-2026', id: `P-${version}`, version, salary_deduction: { employee_id: pushed, deduction_amount: 100 + version, currency: 'GBP' } },
      });
      expect(response.statusCode, response.body).toBe(200);
    }
    await queue.obliterate({ force: true });

    const response = await submit(
      confirmation(
        [
          { employee_id: pushed, deducted_amount: 125.5 },
          { employee_id: second, deducted_amount: 30.01 },
          { employee_id: leaver, deducted_amount: 0, leaver: true },
        ],
        155.51,
      ),
    );
    expect(response.statusCode, response.body).toBe(201);
    const body = confirmationResponse.parse(response.json());
    expect(body.confirmation).toMatchObject({
      payroll_id: payrollId,
      pay_date: '2026-11-27',
      pay_period: '8-2026',
      deduction_data_id: snapshotId,
      currency: 'GBP',
      total_amount: 155.51,
      employee_count: 3,
    });
    const confirmationId = body.confirmation.id;

    expect(await latestRecord(pushed)).toMatchObject({
      version: 4,
      deduction_amount: 12_550,
      source: 'confirmation',
      confirmation_id: confirmationId,
      leaver: false,
      pay_date: '2026-11-27',
      pay_period: '8-2026',
    });
    expect(await latestRecord(second)).toMatchObject({ version: 1, deduction_amount: 3_001, confirmation_id: confirmationId });
    expect(await latestRecord(leaver)).toMatchObject({ version: 1, deduction_amount: 0, leaver: true });
    // Hashed in SQL for speed, yet the same content hash a push of this content would get.
    for (const [employeeId, amount, isLeaver] of [
      [pushed, 12_550, false],
      [leaver, 0, true],
    ] as const) {
      expect((await latestRecord(employeeId)).content_hash).toBe(
        deductionContentHash({ employeeId, deductionAmount: amount, currency: 'GBP', leaver: isLeaver, requestedPayments: [] }),
      );
    }
    const stored = await t.db.selectFrom('confirmations').selectAll().where('id', '=', confirmationId).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ payroll_id: payrollId, deduction_data_id: snapshotId, total_amount: 15_551, employee_count: 3, currency: 'GBP' });
    const snapshot = await t.db.selectFrom('deduction_snapshots').select('status').where('id', '=', snapshotId).executeTakeFirstOrThrow();
    expect(snapshot.status).toBe('confirmed');

    const jobs = (await queue.getJobs(['delayed', 'waiting', 'prioritized'])).filter((job) => job.name === 'reconcile-pay-date');
    expect(jobs.map((job) => job.data)).toEqual([{ payrollId, payDate: '2026-11-27' }]);

    // A corrected confirmation is another version per employee; a push of an older version then loses.
    const again = await submit(
      confirmation(
        [
          { employee_id: pushed, deducted_amount: 120 },
          { employee_id: second, deducted_amount: 30.01 },
        ],
        150.01,
      ),
    );
    expect(again.statusCode, again.body).toBe(201);
    expect((await latestRecord(pushed)).version).toBe(5);
    expect((await latestRecord(second)).version).toBe(2);
    expect((await latestRecord(leaver)).version).toBe(1);
    const stalePush = await injectJson(t.app, {
      method: 'POST',
      url: `/deductions/payroll/${payrollId}`,
      headers,
      body: { pay_period: '8-2026', id: 'P-4', version: 4, salary_deduction: { employee_id: pushed, deduction_amount: 1, currency: 'GBP' } },
    });
    expect(stalePush.statusCode).toBe(409);
    expect(stalePush.json().current_version).toBe(5);
    // The records have no foreign keys (migration 20261122031000); this audit stands in for them.
    expect(await findBrokenRecordLinks(t.db, payrollId)).toEqual([]);
  });

  it('audits records whose references were broken by hand', async () => {
    const [first, second, third] = employees as [string, string, string];
    const response = await submit(
      confirmation(
        [
          { employee_id: first, deducted_amount: 1 },
          { employee_id: second, deducted_amount: 2 },
          { employee_id: third, deducted_amount: 3 },
        ],
        6,
      ),
    );
    expect(response.statusCode, response.body).toBe(201);
    const confirmationId = confirmationResponse.parse(response.json()).confirmation.id;
    expect(await findBrokenRecordLinks(t.db, payrollId)).toEqual([]);
    const records = await t.db.selectFrom('deduction_records').select(['id', 'employee_id']).where('confirmation_id', '=', confirmationId).execute();
    const recordOf = (employeeId: string) => records.find((record) => record.employee_id === employeeId)!.id;
    const elsewhere = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
    const stranger = (await createEmployee(t.db, { providerId: provider.id, payrollId: elsewhere.id, employerId: employer.id })).employee.id;
    await sql`update deduction_records set employee_id = ${stranger} where id = ${recordOf(first)}`.execute(t.db);
    await sql`update deduction_records set pay_period = '9-2026' where id = ${recordOf(second)}`.execute(t.db);
    await sql`update deduction_records set confirmation_id = ${crypto.randomUUID()} where id = ${recordOf(third)}`.execute(t.db);
    expect((await findBrokenRecordLinks(t.db, payrollId)).map((broken) => [broken.id, broken.problem]).sort()).toEqual(
      [
        [recordOf(first), 'employee not on the payroll'],
        [recordOf(second), "pay period is not the pay date's"],
        [recordOf(third), 'confirmation missing'],
      ].sort(),
    );
    await sql`delete from deduction_records where confirmation_id = ${confirmationId} or id = ${recordOf(third)}`.execute(t.db);
  });

  it('replays a retried submission with the same Idempotency-Key instead of storing new versions', async () => {
    const body = confirmation([{ employee_id: employees[1]!, deducted_amount: 12 }], 12);
    const key = crypto.randomUUID();
    const first = await submit(body, { headers: { ...headers, 'idempotency-key': key } });
    expect(first.statusCode, first.body).toBe(201);
    const before = await recordCount();
    const replay = await submit(body, { headers: { ...headers, 'idempotency-key': key } });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().confirmation.id).toBe(first.json().confirmation.id);
    expect(await recordCount()).toEqual(before);
  });

  it('answers 422 confirmation-total-mismatch naming both totals, and stores nothing', async () => {
    const before = await recordCount();
    const response = await submit(
      confirmation(
        [
          { employee_id: employees[0]!, deducted_amount: 0.1 },
          { employee_id: employees[1]!, deducted_amount: 0.2 },
        ],
        0.31,
      ),
    );
    expect(response.statusCode).toBe(422);
    const problem = response.json();
    expect(problem.type).toMatch(/confirmation-total-mismatch$/);
    expect(problem.detail).toContain('0.31');
    expect(problem.detail).toContain('0.30');
    expect(problem.errors[0].pointer).toBe('/confirmation/total_amount');
    expect(await recordCount()).toEqual(before);
  });

  it('accepts a total that only float addition would get wrong (0.1 + 0.2 = 0.3)', async () => {
    const response = await submit(
      confirmation(
        [
          { employee_id: employees[0]!, deducted_amount: 0.1 },
          { employee_id: employees[1]!, deducted_amount: 0.2 },
        ],
        0.3,
      ),
    );
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().confirmation.total_amount).toBe(0.3);
  });

  it('answers 409 for superseded deduction data, naming the current one, and stores nothing', async () => {
    const first = await lockPayDate(t.db, payrollId, '2026-12-24');
    const rerun = await t.db.transaction().execute((trx) => relockPayDate(trx, payrollId, '2026-12-24'));
    const before = await recordCount();
    const response = await submit(confirmation([{ employee_id: employees[0]!, deducted_amount: 1 }], 1, { deduction_data_id: first.snapshotId, pay_period: '9-2026' }));
    expect(response.statusCode).toBe(409);
    expect(response.json().current_deduction_data_id).toBe(rerun.snapshotId);
    expect(response.json().detail).toContain(rerun.snapshotId);
    expect(await recordCount()).toEqual(before);
    const current = await submit(confirmation([{ employee_id: employees[0]!, deducted_amount: 1 }], 1, { deduction_data_id: rerun.snapshotId, pay_period: '9-2026' }));
    expect(current.statusCode, current.body).toBe(201);
  });

  it('answers 409 when a re-run supersedes the deduction data while the confirmation waits for its pay date', async () => {
    const first = await lockPayDate(t.db, payrollId, '2027-01-28');
    const before = await recordCount();
    // The re-run holds the pay date (and has superseded the snapshot) until it is told to commit.
    let commitRerun!: () => void;
    const released = new Promise<void>((resolve) => (commitRerun = resolve));
    let rerunSnapshotId = '';
    const rerun = t.db.transaction().execute(async (trx) => {
      rerunSnapshotId = (await relockPayDate(trx, payrollId, '2027-01-28')).snapshotId;
      await released;
    });
    while (rerunSnapshotId === '') await new Promise((resolve) => setTimeout(resolve, 5));

    const pending = submit(confirmation([{ employee_id: employees[0]!, deducted_amount: 1 }], 1, { deduction_data_id: first.snapshotId, pay_period: '10-2026' }));
    // Until the confirmation's session waits for the pay date's row lock.
    await untilSessionsWaitForDatabaseLocks(t.db, 1, 'the confirmation');
    commitRerun();
    await rerun;

    const response = await pending;
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json().current_deduction_data_id).toBe(rerunSnapshotId);
    expect(await recordCount()).toEqual(before);
  });

  it('answers 404 for unknown deduction data, another payroll’s, an unknown payroll and another provider’s', async () => {
    const line = [{ employee_id: employees[0]!, deducted_amount: 1 }];
    expect((await submit(confirmation(line, 1, { deduction_data_id: crypto.randomUUID() }))).statusCode).toBe(404);

    const otherPayroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
    const otherSnapshot = await lockPayDate(t.db, otherPayroll.id, '2026-11-27');
    expect((await submit(confirmation(line, 1, { deduction_data_id: otherSnapshot.snapshotId }))).statusCode).toBe(404);

    expect((await submit(confirmation(line, 1), { payroll: crypto.randomUUID() })).statusCode).toBe(404);
    expect((await submit(confirmation(line, 1), { payroll: 'not-a-uuid' })).statusCode).toBe(404);
    const stranger = await createProviderClient(t.db);
    expect((await submit(confirmation(line, 1), { headers: await authHeaders(t.app, stranger) })).statusCode).toBe(404);
  });

  it.each([
    [
      'a pay period other than the deduction data’s',
      () => confirmation([{ employee_id: employees[0]!, deducted_amount: 1 }], 1, { pay_period: '9-2026' }),
      '/confirmation/pay_period',
    ],
    ['a currency other than the payroll’s', () => confirmation([{ employee_id: employees[0]!, deducted_amount: 1 }], 1, { currency: 'EUR' }), '/confirmation/currency'],
    [
      'an employee not on the payroll',
      () =>
        confirmation(
          [
            { employee_id: employees[0]!, deducted_amount: 1 },
            { employee_id: crypto.randomUUID(), deducted_amount: 1 },
          ],
          2,
        ),
      '/confirmation/deductions/1/employee_id',
    ],
    [
      'a duplicate employee',
      () =>
        confirmation(
          [
            { employee_id: employees[0]!, deducted_amount: 1 },
            { employee_id: employees[1]!, deducted_amount: 1 },
            { employee_id: employees[0]!, deducted_amount: 1 },
          ],
          3,
        ),
      '/confirmation/deductions/2/employee_id',
    ],
    ['too many decimals on a line', () => confirmation([{ employee_id: employees[0]!, deducted_amount: 1.001 }], 1.001), '/confirmation/deductions/0/deducted_amount'],
    ['a negative amount', () => confirmation([{ employee_id: employees[0]!, deducted_amount: -1 }], 0), '/confirmation/deductions/0/deducted_amount'],
    ['no lines', () => confirmation([], 0), '/confirmation/deductions'],
    ['an unknown field', () => confirmation([{ employee_id: employees[0]!, deducted_amount: 1, bonus: 1 } as Line], 1), '/confirmation/deductions/0/bonus'],
  ])('answers 422 for %s, pointing at it, and stores nothing', async (_name, build, pointer) => {
    const before = await recordCount();
    const response = await submit(build());
    expect(response.statusCode, response.body).toBe(422);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json().errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    expect(await recordCount()).toEqual(before);
  });

  it('never races a concurrent push for a version number: the confirmation always lands', async () => {
    const [employeeId, other] = employees as [string, string];
    for (let round = 0; round < 5; round++) {
      const current = await t.db
        .selectFrom('deduction_records')
        .select((eb) => eb.fn.coalesce(eb.fn.max('version'), eb.lit(0)).as('version'))
        .where('employee_id', '=', employeeId)
        .executeTakeFirstOrThrow();
      const next = Number(current.version) + 1;
      const pushBody = {
        pay_period: '8-2026',
        id: `RACE-${round}`,
        version: next,
        salary_deduction: { employee_id: employeeId, deduction_amount: 7 + round, currency: 'GBP' },
      };
      const lines = [
        { employee_id: employeeId, deducted_amount: 5 },
        { employee_id: other, deducted_amount: 5 },
      ];
      const [pushed, confirmed] = await Promise.all([
        injectJson(t.app, { method: 'POST', url: `/deductions/payroll/${payrollId}`, headers, body: pushBody }),
        submit(confirmation(lines, 10)),
      ]);
      expect(confirmed.statusCode, confirmed.body).toBe(201);
      expect([200, 409], pushed.body).toContain(pushed.statusCode);
      const versions = await t.db
        .selectFrom('deduction_records')
        .select(['version', 'source'])
        .where('employee_id', '=', employeeId)
        .where('version', '>=', next)
        .orderBy('version')
        .execute();
      expect(versions.map((row) => row.source)).toEqual(pushed.statusCode === 200 ? ['push', 'confirmation'] : ['confirmation']);
    }
  });

  it('answers 401 without credentials and 403 without the scope or to a biller', async () => {
    const body = confirmation([{ employee_id: employees[0]!, deducted_amount: 1 }], 1);
    expect((await submit(body, { headers: {} })).statusCode).toBe(401);
    const narrowToken = await fetchToken(t.app, credentials, 'deduction_data:request');
    const narrow = await submit(body, { headers: { authorization: `Bearer ${narrowToken}`, 'x-api-key': credentials.apiKey } });
    expect(narrow.statusCode).toBe(403);
    const biller = await createBiller(t.db);
    expect((await submit(body, { headers: await authHeaders(t.app, biller) })).statusCode).toBe(403);
  });
});

/** Every statement any pool client sends while `work` runs (the app and the test share the pg module). */
async function countingStatements<T>(work: () => Promise<T>): Promise<{ result: T; count: number }> {
  const original = pg.Client.prototype.query;
  let count = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    count += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await work(), count };
  } finally {
    pg.Client.prototype.query = original;
  }
}

describe('POST /deductions/{payroll_id}/confirmation at full size', () => {
  it('stores a 100,000-line pay date in one request, set-based', async () => {
    const lineCount = 100_000;
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
    await sql`
      with employee as (
        insert into employees (payroll_provider_id, given_name, family_name)
        select ${provider.id}::uuid, 'Bulk', 'Employee ' || n from generate_series(1, ${lineCount}::int) as n
        returning id
      )
      insert into employments (employee_id, employer_id, payroll_id, payroll_reference)
      select id, ${employer.id}::uuid, ${payroll.id}::uuid, 'B' || row_number() over () from employee
    `.execute(t.db);
    const ids = (await t.db.selectFrom('employments').select('employee_id').where('payroll_id', '=', payroll.id).execute()).map((row) => row.employee_id);
    expect(ids).toHaveLength(lineCount);
    const lock = await lockPayDate(t.db, payroll.id, '2026-11-27');

    let totalPence = 0;
    const deductions = ids.map((employeeId, i) => {
      const pence = 1 + (i % 50_000);
      totalPence += pence;
      return { employee_id: employeeId, deducted_amount: toMajorUnits(pence, 'GBP'), leaver: i % 1000 === 0 };
    });
    const body = {
      confirmation: { deduction_data_id: lock.snapshotId, pay_period: '8-2026', currency: 'GBP', total_amount: toMajorUnits(totalPence, 'GBP'), deductions },
    };

    const statements = await countingStatements(() => submit(body, { payroll: payroll.id }));
    const response = statements.result;
    expect(response.statusCode, response.body.slice(0, 500)).toBe(201);
    expect(response.json().confirmation.employee_count).toBe(lineCount);
    // Set-based: the number of statements does not grow with the lines (authentication, a few
    // reads, three writes), where one query per line would be 100,000 of them.
    expect(statements.count).toBeLessThan(25);

    const stored = await t.db
      .selectFrom('deduction_records')
      .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.sum<string>('deduction_amount').as('total'), eb.fn.max('version').as('max_version')])
      .where('payroll_id', '=', payroll.id)
      .where('source', '=', 'confirmation')
      .executeTakeFirstOrThrow();
    expect({ count: Number(stored.count), total: Number(stored.total), maxVersion: stored.max_version }).toEqual({
      count: lineCount,
      total: totalPence,
      maxVersion: 1,
    });
  }, 120_000);
});
