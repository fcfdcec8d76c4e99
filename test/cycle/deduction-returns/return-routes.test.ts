import { createHash, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deductionReturnReportSchema } from '../../../src/cycle/deduction-returns/return-resource.ts';
import { createProviderClient } from '../../support/factories.ts';
import { readInstructionFile } from '../../support/instruction-file.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { filledIn, lockedReturnWorld, PAY_DATE, type ReturnWorld } from './return-world.ts';

// The providers' API of the deduction return file: GET it pre-filled, POST it back as the pay date's
// confirmation, with the confirmation route's scopes.

let t: TestApp;
let queue: Queue;
let world: ReturnWorld;
let headers: Record<string, string>;
let clientId: string;

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' } });
  queue = new Queue('pay-dates', { connection: { url: t.config.REDIS_URL }, prefix: t.config.QUEUE_PREFIX });
  const client = await createProviderClient(t.db);
  clientId = client.clientId;
  const providerId = (await t.db.selectFrom('clients').select('payroll_provider_id').where('id', '=', client.clientId).executeTakeFirstOrThrow()).payroll_provider_id!;
  world = await lockedReturnWorld(t.db, [12_550, 3_001], { providerId });
  headers = await authHeaders(t.app, client);
});
afterAll(async () => {
  await queue?.close();
  await t?.close();
});

const url = (payrollId = world.payrollId) => `/payrolls/${payrollId}/pay-dates/${PAY_DATE}/deduction-return-file`;

function post(body: Buffer | string, query: string, extra: Record<string, string> = {}, as = headers) {
  return t.app.inject({ method: 'POST', url: `${url()}?${query}`, headers: { ...as, 'content-type': 'text/csv', ...extra }, payload: body });
}

async function download(as = headers, payrollId = world.payrollId) {
  return t.app.inject({ method: 'GET', url: url(payrollId), headers: as });
}

describe('GET /payrolls/{payroll_id}/pay-dates/{pay_date}/deduction-return-file', () => {
  it('answers the pre-filled file as a CSV attachment with its digest, to the payroll’s own provider only', async () => {
    const response = await download();
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    const instruction = await t.db.selectFrom('instruction_files').select('file_name').where('payroll_id', '=', world.payrollId).executeTakeFirstOrThrow();
    expect(response.headers['content-disposition']).toBe(`attachment; filename="${instruction.file_name.replace(/\.csv$/, '')}_deduction-return.csv"`);
    expect(response.headers.digest).toBe(`sha-256=${createHash('sha256').update(response.rawPayload).digest('base64')}`);
    expect(readInstructionFile(response.rawPayload).items.map((row) => row.amount_deducted)).toEqual(['125.50', '30.01']);

    const stranger = await authHeaders(t.app, await createProviderClient(t.db));
    expect((await download(stranger)).statusCode).toBe(404);
    const notLocked = await lockedReturnWorld(t.db, [100], { lock: false });
    expect((await download(headers, notLocked.payrollId)).statusCode).toBe(404);
  });
});

describe('POST /payrolls/{payroll_id}/pay-dates/{pay_date}/deduction-return-file', () => {
  it('checks with dry_run, confirms (201, by the provider’s client, reconciliation queued), then changes nothing for the same file (200)', async () => {
    const file = filledIn((await download()).rawPayload, { [world.people[1]!.payrollReference]: { deducted: '20.00', leaver: 'TRUE' } });

    const dry = await post(file, 'dry_run=true');
    expect(dry.statusCode, dry.body).toBe(200);
    expect(deductionReturnReportSchema.parse(dry.json())).toMatchObject({ outcome: 'would_confirm', applied: false, partly: 1, leavers: 1, deducted_total: 145.5 });
    expect(await t.db.selectFrom('confirmations').select('id').where('payroll_id', '=', world.payrollId).execute()).toEqual([]);

    await queue.obliterate({ force: true });
    const response = await post(file, '');
    expect(response.statusCode, response.body).toBe(201);
    const report = deductionReturnReportSchema.parse(response.json());
    expect(report).toMatchObject({ outcome: 'confirmed', applied: true, confirmed: 2, in_full: 1, partly: 1, leavers: 1 });
    const confirmation = await t.db.selectFrom('confirmations').selectAll().where('id', '=', report.confirmation_id!).executeTakeFirstOrThrow();
    expect(confirmation).toMatchObject({ submitted_by_client_id: clientId, submitted_by: null, total_amount: 14_550 });
    const records = await t.db
      .selectFrom('deduction_records')
      .select(['deduction_amount', 'leaver', 'received_by_client_id'])
      .where('confirmation_id', '=', confirmation.id)
      .execute();
    expect(records.sort((a, b) => b.deduction_amount - a.deduction_amount)).toEqual([
      { deduction_amount: 12_550, leaver: false, received_by_client_id: clientId },
      { deduction_amount: 2_000, leaver: true, received_by_client_id: clientId },
    ]);
    const imported = await t.db.selectFrom('deduction_return_imports').selectAll().where('id', '=', report.import_id!).executeTakeFirstOrThrow();
    expect(imported.imported_by).toBe(`client ${clientId}`);
    const jobs = (await queue.getJobs(['delayed', 'waiting', 'prioritized'])).filter((job) => job.name === 'reconcile-pay-date');
    expect(jobs.map((job) => job.data)).toEqual([{ payrollId: world.payrollId, payDate: PAY_DATE }]);

    const again = await post(file, '');
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ outcome: 'already_reported', applied: false, previous_import: { id: report.import_id, imported_by: `client ${clientId}` } });
  });

  it('refuses a bad file with 422, every fault a pointer to its line and column; partial confirms the good items', async () => {
    const other = await lockedReturnWorld(t.db, [5_000, 7_000], { providerId: world.providerId });
    const file = filledIn(
      (await download(headers, other.payrollId)).rawPayload,
      { [other.people[0]!.payrollReference]: { deducted: '50.001' }, [other.people[1]!.payrollReference]: { leaver: 'X' } },
      { keepTrailer: true },
    );
    const send = (query: string) =>
      t.app.inject({ method: 'POST', url: `${url(other.payrollId)}?${query}`, headers: { ...headers, 'content-type': 'text/csv; charset=utf-8' }, payload: file });
    const refused = await send('');
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = refused.json();
    expect(problem.type).toMatch(/\/deduction-return-rejected$/);
    expect(problem.errors).toEqual([
      { pointer: '/lines/3/amount_deducted', detail: 'has more than 2 decimal places for GBP, got 50.001' },
      { pointer: '/lines/4/leaver', detail: 'must be yes or no (or y, n, true, false), got X' },
    ]);
    expect(problem).toMatchObject({ rows: 2, rejected: 2, error_count: 2, errors_truncated: false });
    expect(await t.db.selectFrom('confirmations').select('id').where('payroll_id', '=', other.payrollId).execute()).toEqual([]);

    const onlyOneBad = filledIn((await download(headers, other.payrollId)).rawPayload, { [other.people[1]!.payrollReference]: { leaver: 'X' } }, { keepTrailer: true });
    const partial = await t.app.inject({
      method: 'POST',
      url: `${url(other.payrollId)}?partial`,
      headers: { ...headers, 'content-type': 'text/csv' },
      payload: onlyOneBad,
    });
    expect(partial.statusCode, partial.body).toBe(201);
    expect(partial.json()).toMatchObject({ outcome: 'confirmed', confirmed: 1, rejected: 1, errors: [{ line: 4, column: 'leaver' }] });
  });

  it('takes text/csv only, holds an Idempotency-Key to the Content-Digest of the file, and is the provider’s own', async () => {
    const file = (await download()).rawPayload;
    expect((await post(file, '', { 'content-type': 'application/json' })).statusCode).toBe(415);
    const key = { 'idempotency-key': randomUUID() };
    const withoutDigest = await post(file, 'dry_run', key);
    expect(withoutDigest.statusCode).toBe(400);
    expect(withoutDigest.json().type).toMatch(/\/content-digest-required$/);
    const wrongDigest = await post(file, 'dry_run', { ...key, 'content-digest': `sha-256=:${createHash('sha256').update('another file').digest('base64')}:` });
    expect(wrongDigest.statusCode).toBe(400);
    expect(wrongDigest.json().type).toMatch(/\/content-digest-mismatch$/);
    const digest = { 'idempotency-key': randomUUID(), 'content-digest': `sha-256=:${createHash('sha256').update(file).digest('base64')}:` };
    const first = await post(file, 'dry_run', digest);
    const replay = await post(file, 'dry_run', digest);
    expect([first.statusCode, replay.statusCode]).toEqual([200, 200]);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());

    const stranger = await authHeaders(t.app, await createProviderClient(t.db));
    expect((await post(file, 'dry_run', {}, stranger)).statusCode).toBe(404);
  });
});
