import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBrokenLedgerLinks } from '../../../src/cycle/ledger/ledger-repository.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1 } from '../reconciliation/reconciliation-world.ts';

// Attempts, ledger entries and payout items have no foreign keys (migration 20261122030000); the
// audit query stands in for them. It must find nothing after real reconciliations and payouts, and
// find each kind of broken reference when one is made by hand.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t?.close());

describe('findBrokenLedgerLinks', () => {
  it('finds nothing after reconciliation and a payout, and every broken reference made by hand', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const first = await w.payment(0, 5_000);
    const second = await w.payment(1, 3_000);
    const ids = [first.id, second.id];
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 5_000);
    await w.push(w.people[1]!.employee.id, PD1, 1_000);
    await w.reconcile(PD1);
    await t.db
      .insertInto('beneficiary_accounts')
      .values({ biller_client_id: w.biller.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' })
      .execute();
    const payouts = await runPayouts(t.db, { funding: 'deducted', today: '2026-11-03', settlementDelayWorkingDays: 1, holidays: new Set() });
    expect(payouts.groups.find((group) => group.billerClientId === w.biller.clientId)).toMatchObject({ outcome: 'paid_out', amount: 6_000 });
    expect(await findBrokenLedgerLinks(t.db, ids)).toEqual([]);

    const entries = await t.db.selectFrom('ledger_entries').selectAll().where('payment_request_id', 'in', ids).orderBy('amount', 'desc').execute();
    const [entry, other] = entries as [(typeof entries)[number], (typeof entries)[number]];
    const item = await t.db.selectFrom('payout_items').selectAll().where('ledger_entry_id', '=', entry.id).executeTakeFirstOrThrow();
    const attempt = await t.db.selectFrom('collection_attempts').selectAll().where('id', '=', entry.collection_attempt_id).executeTakeFirstOrThrow();
    const missing = crypto.randomUUID();

    // Each wrong in its own row, so each is reported once.
    await sql`update collection_attempts set pay_date = '2026-10-31' where id = ${attempt.id}`.execute(t.db);
    await sql`update collection_attempts set currency = 'EUR' where id = ${other.collection_attempt_id}`.execute(t.db);
    await sql`update ledger_entries set biller_client_id = ${missing} where id = ${other.id}`.execute(t.db);
    await sql`update payout_items set amount = amount + 1 where id = ${item.id}`.execute(t.db);
    await sql`update payout_items set released_at = now() where ledger_entry_id = ${other.id}`.execute(t.db);
    await sql`
      insert into ledger_entries (biller_client_id, payment_request_id, collection_attempt_id, revision, kind, amount, currency, pay_date)
      values (${w.biller.clientId}, ${first.id}, ${missing}, 0, 'payment_collected', 1, 'GBP', ${PD1})
    `.execute(t.db);
    await sql`
      insert into payout_items (payout_id, ledger_entry_id, payment_request_id, kind, amount)
      values (${item.payout_id}, ${missing}, ${second.id}, 'payment_collected', 1)
    `.execute(t.db);

    const broken = await findBrokenLedgerLinks(t.db, ids);
    expect(broken.map(({ table, problem }) => [table, problem]).sort()).toEqual(
      [
        ['collection_attempts', 'pay date missing'],
        ['collection_attempts', "employee, mandate, biller or currency is not its payment's"],
        ['ledger_entries', "biller or currency is not its payment's"],
        ['ledger_entries', 'collection attempt missing'],
        // The attempt's pay date moved, so its entry no longer agrees with it.
        ['ledger_entries', "pay date is not its attempt's"],
        ['payout_items', 'ledger entry missing'],
        ['payout_items', 'released, yet its payout did not fail or still holds the entry'],
        ['payout_items', "payment, kind or amount is not its ledger entry's"],
      ].sort(),
    );
  });
});
