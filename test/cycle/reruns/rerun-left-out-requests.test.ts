import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mandateUsage } from '../../../src/collections/mandates/mandate-limitations.ts';
import { revokeMandate } from '../../../src/collections/mandates/mandate-service.ts';
import { toPaymentResource } from '../../../src/collections/payments/payment-resource.ts';
import { relockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { createPaymentRequestRow, createCollectionAccount } from '../../support/factories.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWorld, paymentEvents, paymentRow, PD1, PD2, type World } from '../reconciliation/reconciliation-world.ts';

// A re-run that no longer asks for a request its superseded snapshot had instructed (the mandate was
// revoked or suspended meanwhile, or has no room left under its cap) must not leave it instructed:
// nothing would ever settle it there (it is neither in the snapshot nor attempted), it would go on
// counting against the mandate's lifetime cap, and no event would tell the biller. It goes back to
// pending, and on to cancelled when its mandate has ended, each change with its event.

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await createCollectionAccount(database.db);
});
afterAll(async () => database?.drop());

const rerun = (w: World, payDate: string) => database.db.transaction().execute((trx) => relockPayDate(trx, w.payroll.id, payDate));

async function linkedTo(snapshotId: string) {
  const rows = await database.db.selectFrom('deduction_line_payments').select('payment_request_id').where('snapshot_id', '=', snapshotId).execute();
  return rows.map((row) => row.payment_request_id);
}

/** The last event says what GET says now: same version, same resource, value by value. */
async function expectLastEventIsCurrent(paymentId: string) {
  const events = await paymentEvents(database.db, paymentId);
  const row = await paymentRow(database.db, paymentId);
  expect(events.at(-1)).toEqual(JSON.parse(JSON.stringify(toPaymentResource(row))));
  return { events, row };
}

describe('a re-run leaving out a request its superseded snapshot instructed', () => {
  it('cancels it when its mandate was revoked (instructed -> pending -> cancelled, each with its event)', async () => {
    const w = await createWorld(database.db);
    const request = await w.payment(0, 5_000);
    const locked = await w.lock(PD1);
    expect(locked).toMatchObject({ paymentsInstructed: 1, totalAmount: 5_000 });

    // Revocation leaves what is instructed alone: the employer already has the amount.
    const revocation = await revokeMandate(database.db, w.biller.clientId, w.people[0]!.mandate.id);
    expect(revocation.cancelled_payment_ids).toEqual([]);
    expect(await paymentRow(database.db, request.id)).toMatchObject({ status: 'instructed', version: 2, attempts: 1 });

    const rerunOutcome = await rerun(w, PD1);
    expect(rerunOutcome).toMatchObject({ totalAmount: 0, paymentsInstructed: 0, paymentsReleased: 1, paymentsCancelled: 1 });
    expect(await linkedTo(rerunOutcome.snapshotId)).toEqual([]);

    const { events, row } = await expectLastEventIsCurrent(request.id);
    expect(row).toMatchObject({ status: 'cancelled', version: 4, attempts: 0 });
    expect(row.cancelled_at).not.toBeNull();
    expect(events.map((e) => [e.status, e.version])).toEqual([
      ['instructed', 2],
      ['pending', 3],
      ['cancelled', 4],
    ]);

    // Reconciling the new version settles nothing and changes nothing; the request stays cancelled.
    const reconciled = await w.reconcile(PD1, { final: true });
    expect(reconciled).toMatchObject({ snapshotStatus: 'reconciled', paymentsUpdated: 0 });
    const again = await rerun(w, PD1);
    expect(again).toMatchObject({ paymentsReleased: 0, paymentsCancelled: 0 });
    expect(await paymentRow(database.db, request.id)).toMatchObject({ status: 'cancelled', version: 4 });
    expect(await paymentEvents(database.db, request.id)).toHaveLength(3);
    // A repeated DELETE still answers what the revocation itself cancelled.
    expect((await revokeMandate(database.db, w.biller.clientId, w.people[0]!.mandate.id)).cancelled_payment_ids).toEqual([]);
  });

  it('returns it to pending when its mandate cap was lowered, so the lifetime cap stops counting it', async () => {
    const w = await createWorld(database.db);
    const mandate = w.people[0]!.mandate;
    // 3,000 already collected on the mandate on an earlier request.
    await createPaymentRequestRow(database.db, { mandate, status: 'collected', amount: 3_000, collectedAmount: 3_000, targetPayDate: PD1 });
    const request = await w.payment(0, 5_000);
    expect(await w.lock(PD1)).toMatchObject({ paymentsInstructed: 1, totalAmount: 5_000 });

    // The lifetime cap is lowered to what is already collected: no room is left for the request.
    await database.db.updateTable('mandates').set({ max_total_amount: 3_000 }).where('id', '=', mandate.id).execute();
    const rerunOutcome = await rerun(w, PD1);
    expect(rerunOutcome).toMatchObject({ totalAmount: 0, paymentsReleased: 1, paymentsCancelled: 0 });
    expect(await linkedTo(rerunOutcome.snapshotId)).toEqual([]);

    const { events, row } = await expectLastEventIsCurrent(request.id);
    expect(row).toMatchObject({ status: 'pending', version: 3, attempts: 0, target_pay_date: PD1 });
    expect(events.map((e) => [e.status, e.version])).toEqual([
      ['instructed', 2],
      ['pending', 3],
    ]);
    // What counts against the cap is what was collected, no longer the 5,000 nobody will ask for.
    const own = await database.db.selectFrom('payment_requests').selectAll().where('mandate_id', '=', mandate.id).execute();
    const used = mandateUsage(
      own.map((r) => ({ id: r.id, status: r.status, amount: r.amount, collectedAmount: r.collected_amount })),
      new Set(),
    );
    expect(used).toBe(3_000n);

    expect(await w.reconcile(PD1, { final: true })).toMatchObject({ snapshotStatus: 'reconciled', paymentsUpdated: 0 });
    expect(await paymentRow(database.db, request.id)).toMatchObject({ status: 'pending', version: 3 });

    // With room again, the next pay date asks for it in full, as its first attempt.
    await database.db.updateTable('mandates').set({ max_total_amount: 8_000 }).where('id', '=', mandate.id).execute();
    const next = await w.lock(PD2);
    expect(next).toMatchObject({ paymentsInstructed: 1, totalAmount: 5_000 });
    expect(await linkedTo(next.snapshotId)).toEqual([request.id]);
    await expectLastEventIsCurrent(request.id);
    expect(await paymentRow(database.db, request.id)).toMatchObject({ status: 'instructed', version: 4, attempts: 1 });
  });
});
