import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/platform/db/connection.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { untilSessionsWaitForDatabaseLocks } from '../../support/database.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

// POST /payments stores its idempotent response in the statement that inserts the payment request
// (EffectRoute.responseInWrite): no claim before the effect, no completion after it. These tests hold
// it to the same promise as every other keyed route: one payment per key, and the first answer for all.

let t: TestApp;
let biller: Credentials;
let headers: Record<string, string>;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;

beforeAll(async () => {
  t = await startTestApp();
  biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
  world = await createEmploymentWorld(t.db);
});
afterAll(async () => t?.close());

async function newMandate() {
  return (await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
}

function postPayment(key: string, record: Record<string, unknown>) {
  return injectJson(t.app, { method: 'POST', url: '/payments', headers: { ...headers, 'idempotency-key': key }, body: { payment_record: record } });
}

async function storedFor(mandateId: string) {
  const { rows } = await sql<{ payments: number; events: number }>`
    select (select count(*)::int from payment_requests where mandate_id = ${mandateId}) as payments,
           (select count(*)::int from events e join payment_requests p on p.id = e.resource_id where p.mandate_id = ${mandateId}) as events
  `.execute(t.db);
  return rows[0]!;
}

async function storedResponse(key: string) {
  return t.db
    .selectFrom('idempotency_keys')
    .select(['status', 'response_status', 'response_body'])
    .where('client_id', '=', biller.clientId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

describe('POST /payments idempotency, stored by the insert itself', () => {
  it('stores exactly the response it sent, committed with the payment and its event', async () => {
    const mandateId = await newMandate();
    const key = randomUUID();
    const first = await postPayment(key, { mandate_id: mandateId, amount: 1234 });
    expect(first.statusCode, first.body).toBe(201);
    expect(await storedResponse(key)).toMatchObject({ status: 'completed', response_status: 201 });
    expect((await storedResponse(key))!.response_body!.toString('utf8')).toBe(first.body);
    expect(await storedFor(mandateId)).toEqual({ payments: 1, events: 1 });
    // One statement wrote all three: the same transaction and the same command id (cmin). A claim
    // and a completion of their own would have left the key row with a later command than the insert.
    const { rows } = await sql<{ table: string; xmin: string; cmin: string }>`
      select 'payment' as table, xmin::text, cmin::text from payment_requests where id = ${first.json().payment.id}::uuid
      union all
      select 'event', xmin::text, cmin::text from events where resource_id = ${first.json().payment.id}::uuid
      union all
      select 'key', xmin::text, cmin::text from idempotency_keys where client_id = ${biller.clientId}::uuid and idempotency_key = ${key}::uuid
    `.execute(t.db);
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((row) => `${row.xmin}/${row.cmin}`)).size).toBe(1);

    const replay = await postPayment(key, { mandate_id: mandateId, amount: 1234 });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe(first.headers.location);
    expect(replay.body).toBe(first.body);
    expect(await storedFor(mandateId)).toEqual({ payments: 1, events: 1 });
  });

  it('writes one payment and one event for a burst of concurrent duplicates, and answers each with the first response', async () => {
    const mandateId = await newMandate();
    const key = randomUUID();
    // The mandate is held locked (from a pool of the test's own) until as many duplicates as the app's
    // pool holds are in flight, waiting for it: those overlap for sure, and the rest follow.
    const side = createDatabase(t.config.DATABASE_URL, 2);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holder = side.transaction().execute(async (trx) => {
      await sql`select 1 from mandates where id = ${mandateId}::uuid for no key update`.execute(trx);
      await released;
    });
    const burst = Promise.all(Array.from({ length: 10 }, () => postPayment(key, { mandate_id: mandateId, amount: 777 })));
    try {
      await untilSessionsWaitForDatabaseLocks(side, 5, 'five duplicate requests');
    } finally {
      release();
      await holder;
      await side.destroy();
    }
    const responses = await burst;
    const fresh = responses.filter((r) => r.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const response of responses) {
      expect(response.statusCode, response.body).toBe(201);
      expect(response.body).toBe(fresh[0]!.body);
    }
    expect(await storedFor(mandateId)).toEqual({ payments: 1, events: 1 });
  }, 60_000);

  it('refuses the same key on another mandate with idempotency-key-reused, whichever runs first', async () => {
    const [mandateA, mandateB] = [await newMandate(), await newMandate()];
    const key = randomUUID();
    const [a, b] = await Promise.all([postPayment(key, { mandate_id: mandateA, amount: 500 }), postPayment(key, { mandate_id: mandateB, amount: 500 })]);
    const statuses = [a.statusCode, b.statusCode].sort();
    expect(statuses).toEqual([201, 422]);
    const refused = a.statusCode === 422 ? a : b;
    expect(refused.json().type).toBe(`${PROBLEM_TYPE_BASE}idempotency-key-reused`);
    const stored = [await storedFor(mandateA), await storedFor(mandateB)];
    expect(stored.map((s) => s.payments).sort()).toEqual([0, 1]);
    expect(stored.map((s) => s.events).sort()).toEqual([0, 1]);
  });

  it('stores a refusal met after the insert (the per-pay-date limit) and replays it even once the room is free', async () => {
    const mandateId = await newMandate();
    const first = await postPayment(randomUUID(), { mandate_id: mandateId, amount: 70_000_000 });
    expect(first.statusCode, first.body).toBe(201);

    const key = randomUUID();
    const over = await postPayment(key, { mandate_id: mandateId, amount: 30_000_001 });
    expect(over.statusCode).toBe(422);
    expect(over.json().type).toBe(`${PROBLEM_TYPE_BASE}amount-over-limit`);
    expect(await storedResponse(key)).toMatchObject({ status: 'completed', response_status: 422 });
    expect(await storedFor(mandateId)).toEqual({ payments: 1, events: 1 });

    // Cancelling the first frees the room: the retry's insert would now pass, but the key is taken.
    const cancelled = await injectJson(t.app, { method: 'POST', url: `/payments/${first.json().payment.id}/cancel`, headers });
    expect(cancelled.statusCode).toBe(200);
    const retry = await postPayment(key, { mandate_id: mandateId, amount: 30_000_001 });
    expect(retry.statusCode).toBe(422);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(over.body);
    expect((await storedFor(mandateId)).payments).toBe(1);
  });

  it('replays the created payment after its mandate was revoked, where a new request would be refused', async () => {
    const mandateId = await newMandate();
    const key = randomUUID();
    const first = await postPayment(key, { mandate_id: mandateId, amount: 4321 });
    expect(first.statusCode, first.body).toBe(201);
    await t.db.updateTable('mandates').set({ status: 'revoked' }).where('id', '=', mandateId).execute();

    const replay = await postPayment(key, { mandate_id: mandateId, amount: 4321 });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const fresh = await postPayment(randomUUID(), { mandate_id: mandateId, amount: 4321 });
    expect(fresh.statusCode).toBe(422);
    expect(fresh.json().type).toBe(`${PROBLEM_TYPE_BASE}mandate-not-active`);
    expect(await storedFor(mandateId)).toEqual({ payments: 1, events: 1 });
  });
});
