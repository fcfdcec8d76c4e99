import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPayloadSql, recordPaymentUpdatedEvents } from '../../../src/collections/payments/payment-event-repository.ts';
import { toPaymentResource } from '../../../src/collections/payments/payment-resource.ts';
import { createBiller, createEmploymentWorld, createMandateRow, createPaymentRequestRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// Reconciliation and payouts build payment_request.updated events in SQL; webhooks and the events
// API must not be able to tell them from events recordEvents builds with toPaymentResource.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function paymentWorld() {
  const { payroll, employee } = await createEmploymentWorld(t.db);
  const biller = await createBiller(t.db);
  const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
  return { biller, mandate };
}

describe('payment_request.updated events built in SQL', () => {
  it('carry exactly toPaymentResource of the row, in the envelope recordEvents writes', async () => {
    const { biller, mandate } = await paymentWorld();
    const plain = await createPaymentRequestRow(t.db, { mandate, amount: 12_550 });
    const rich = await createPaymentRequestRow(t.db, { mandate, status: 'cancelled', amount: 99_999_999_999 });
    const schedule = await t.db
      .insertInto('schedules')
      .values({ biller_client_id: biller.clientId, mandate_id: mandate.id, currency: 'GBP', total_amount: 1000, instalment_count: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Every nullable field set, instants with microseconds (node-pg truncates to milliseconds), a
    // metadata object with nesting, unicode and a quote.
    // Fields set only when a request is made (a trigger refuses to change them later): set here with
    // triggers off, as a fixture.
    await t.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await sql`
      update payment_requests
      set schedule_id = ${schedule.id}, instalment_number = 1, due_date = '2026-12-20', allow_post_due_date_deduction = true,
          metadata = ${JSON.stringify({ loan: 'L-1 "x"', nested: { n: 1.5, list: [1, null, 'é'] } })}::jsonb,
          collected_amount = 7, paid_out_amount = 3, attempts = 2, version = 9, status_reason = 'over the "limit" é',
          created_at = '2026-11-01 10:00:00.999999+00', updated_at = '2026-11-02 23:59:59.000500+00',
          cancelled_at = '2026-11-03 00:00:00.123456+00'
      where id = ${rich.id}
    `.execute(trx);
    });

    const ids = [plain.id, rich.id];
    expect(await recordPaymentUpdatedEvents(t.db, ids)).toBe(2);

    const rows = await t.db.selectFrom('payment_requests').selectAll().where('id', 'in', ids).execute();
    const events = await t.db
      .selectFrom('events')
      .select(['id', 'type', 'biller_client_id', 'resource_type', 'resource_id', 'created_at', 'payload as stored', eventPayloadSql('events').as('payload')])
      .where('resource_id', 'in', ids)
      .execute();
    expect(events).toHaveLength(2);
    // Stored narrow: the payload is rendered when read.
    expect(events.map((event) => event.stored)).toEqual([null, null]);
    for (const row of rows) {
      const event = events.find((candidate) => candidate.resource_id === row.id)!;
      expect(event).toMatchObject({ type: 'payment_request.updated', biller_client_id: biller.clientId, resource_type: 'payment_request' });
      // Time-ordered like timeOrderedUuid: version 7, RFC variant, this millisecond's clock in front.
      expect(event.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(Math.abs(Number.parseInt(event.id.replace('-', '').slice(0, 12), 16) - Date.now())).toBeLessThan(60_000);
      expect(event.payload).toEqual({
        id: event.id,
        type: 'payment_request.updated',
        created_at: event.created_at.toISOString(),
        data: toPaymentResource(row),
      });
    }
    const rich_ = events.find((candidate) => candidate.resource_id === rich.id)!.payload as { data: Record<string, unknown> };
    expect(rich_.data).toMatchObject({ created_at: '2026-11-01T10:00:00.999Z', updated_at: '2026-11-02T23:59:59.000Z', cancelled_at: '2026-11-03T00:00:00.123Z' });
  });

  it('an event stored narrow shows the payment as it was when the event was written, not as it is now', async () => {
    const { mandate } = await paymentWorld();
    const payment = await createPaymentRequestRow(t.db, { mandate, amount: 4_000 });
    await sql`update payment_requests set status = 'instructed', attempts = 1, version = version + 1, updated_at = now() where id = ${payment.id}::uuid`.execute(t.db);
    await recordPaymentUpdatedEvents(t.db, [payment.id]);
    const instructed = await t.db.selectFrom('payment_requests').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow();
    await sql`update payment_requests set status = 'collected', collected_amount = 4000, version = version + 1, updated_at = now() where id = ${payment.id}::uuid`.execute(
      t.db,
    );
    await recordPaymentUpdatedEvents(t.db, [payment.id]);
    const collected = await t.db.selectFrom('payment_requests').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow();

    const events = await t.db
      .selectFrom('events')
      .select(['sequence', eventPayloadSql('events').as('payload')])
      .where('resource_id', '=', payment.id)
      .orderBy('sequence')
      .execute();
    expect(events.map((event) => (event.payload as { data: unknown }).data)).toEqual([toPaymentResource(instructed), toPaymentResource(collected)]);
    expect(events.map((event) => (event.payload as { data: { status: string } }).data.status)).toEqual(['instructed', 'collected']);
  });

  it('the fields a payment request is made with cannot change afterwards (its events render them from the row)', async () => {
    const { mandate } = await paymentWorld();
    const payment = await createPaymentRequestRow(t.db, { mandate, amount: 4_000 });
    for (const change of [
      sql`amount = 4001`,
      sql`currency = 'EUR'`,
      sql`metadata = '{"a": 1}'::jsonb`,
      sql`due_date = '2027-01-01'`,
      sql`created_at = now() - interval '1 day'`,
    ]) {
      await expect(sql`update payment_requests set ${change} where id = ${payment.id}::uuid`.execute(t.db)).rejects.toMatchObject({ code: '23514' });
    }
    // Naming one with its own value, and changing what may change, are fine.
    await sql`update payment_requests set amount = 4000, status = 'cancelled', cancelled_at = now() where id = ${payment.id}::uuid`.execute(t.db);
    expect(await t.db.selectFrom('payment_requests').select(['amount', 'status']).where('id', '=', payment.id).executeTakeFirstOrThrow()).toEqual({
      amount: 4_000,
      status: 'cancelled',
    });
  });

  it('writes nothing for no payments', async () => {
    expect(await recordPaymentUpdatedEvents(t.db, [])).toBe(0);
  });
});
