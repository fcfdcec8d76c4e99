import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from 'bullmq';
import { parse } from 'csv-parse/sync';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { exportPayouts } from '../../../src/faces/cli/export-commands.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { findBrokenLedgerLinks } from '../../../src/cycle/ledger/ledger-repository.ts';
import { payoutFileColumns } from '../../../src/settlement/payouts/payout-file.ts';
import { canSettlePayout, payoutDecision, payoutReference, runPayouts, settlementCutoff, type PayoutGroupOutcome } from '../../../src/settlement/payouts/payout-service.ts';
import { runPayoutsProcessor } from '../../../jobs/run-payouts.ts';
import {
  createBiller,
  createCollectionAccount,
  createCollectionAttemptRow,
  createEmployee,
  createEmployer,
  createMandateRow,
  createOperator,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
} from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Tuesday 1 December 2026: with one working day of settlement, pay dates up to Monday 30 November are
// settled, so the Friday 27 November pay date pays out and the 1 December one waits for tomorrow.
const TODAY = '2026-12-01';
const TOMORROW = '2026-12-02';
const SETTLED_PAY_DATE = '2026-11-27';
const FRESH_PAY_DATE = '2026-12-01';
const NO_HOLIDAYS: ReadonlySet<string> = new Set();

const calendar = [
  { pay_date: '2026-10-30', payroll_cutoff_date: '2026-10-23', pay_period: '7-2026', lock_date: '2026-10-21' },
  { pay_date: SETTLED_PAY_DATE, payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: FRESH_PAY_DATE, payroll_cutoff_date: '2026-11-24', pay_period: '9-2026', lock_date: '2026-11-20' },
];

let t: TestApp;
let payrollId: string;
let employees: Array<{ id: string }>;
let operatorHeaders: Record<string, string>;

type Payment = Awaited<ReturnType<typeof createPaymentRequestRow>>;

beforeAll(async () => {
  t = await startTestApp();
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
  payrollId = payroll.id;
  employees = [];
  for (let i = 0; i < 3; i++) {
    employees.push((await createEmployee(t.db, { providerId: provider.id, payrollId, employerId: employer.id })).employee);
  }
  operatorHeaders = await authHeaders(t.app, await createOperator(t.db));
});
afterAll(async () => t?.close());

async function beneficiaryAccount(billerClientId: string, currency = 'GBP') {
  await t.db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: billerClientId, currency, account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' })
    .execute();
}

async function paymentOf(biller: IssuedCredentials, options: { amount: number; status: Payment['status']; payDate: string; employee?: number }) {
  const mandate = await createMandateRow(t.db, {
    billerClientId: biller.clientId,
    employeeId: employees[options.employee ?? 0]!.id,
    payrollId,
  });
  return createPaymentRequestRow(t.db, { mandate, status: options.status, amount: options.amount, targetPayDate: options.payDate });
}

/**
 * What reconciliation would post: the pay date's attempt (created on first use) and one signed ledger
 * entry, with the payment's collected_amount kept equal to the sum of its entries.
 */
async function post(payment: Payment, payDate: string, amount: number, revision = 0) {
  const attempt =
    (await t.db.selectFrom('collection_attempts').selectAll().where('payment_request_id', '=', payment.id).where('pay_date', '=', payDate).executeTakeFirst()) ??
    (await createCollectionAttemptRow(t.db, payment, {
      pay_date: payDate,
      attempt_number: (await t.db.selectFrom('collection_attempts').select('id').where('payment_request_id', '=', payment.id).execute()).length + 1,
      requested_amount: payment.amount,
      deducted_amount: amount,
      collected_amount: amount,
      outcome: 'collected',
      push_version: 1,
    }));
  const entry = await t.db
    .insertInto('ledger_entries')
    .values({
      biller_client_id: payment.biller_client_id,
      payment_request_id: payment.id,
      collection_attempt_id: attempt.id,
      revision,
      kind: amount > 0 ? 'payment_collected' : 'collection_reversed',
      amount,
      currency: payment.currency,
      pay_date: payDate,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await t.db
    .updateTable('payment_requests')
    .set((eb) => ({ collected_amount: eb('collected_amount', '+', amount) }))
    .where('id', '=', payment.id)
    .execute();
  return entry;
}

const run = (today: string) => runPayouts(t.db, { funding: 'deducted', today, settlementDelayWorkingDays: 1, holidays: NO_HOLIDAYS });

function outcomeOf(groups: PayoutGroupOutcome[], billerClientId: string) {
  const found = groups.filter((group) => group.billerClientId === billerClientId);
  expect(found).toHaveLength(1);
  return found[0]!;
}

const findPayment = (id: string) => t.db.selectFrom('payment_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const payoutsOf = (billerClientId: string) => t.db.selectFrom('payouts').selectAll().where('biller_client_id', '=', billerClientId).orderBy('payout_date').execute();

/** Ledger invariants: what reached the biller never exceeds what was collected, per payment and per biller. */
async function expectPaidOutWithinCollected(billerClientId: string) {
  const payments = await t.db.selectFrom('payment_requests').selectAll().where('biller_client_id', '=', billerClientId).execute();
  for (const payment of payments) {
    const entries = await t.db.selectFrom('ledger_entries').selectAll().where('payment_request_id', '=', payment.id).execute();
    const collected = entries.reduce((sum, entry) => sum + entry.amount, 0);
    const paidOut = entries.filter((entry) => entry.payout_id !== null).reduce((sum, entry) => sum + entry.amount, 0);
    expect(payment.collected_amount).toBe(collected);
    expect(payment.paid_out_amount).toBe(paidOut);
    expect(payment.paid_out_amount).toBeLessThanOrEqual(payment.collected_amount);
  }
  const payouts = (await payoutsOf(billerClientId)).filter((payout) => payout.status !== 'failed');
  const entries = await t.db.selectFrom('ledger_entries').selectAll().where('biller_client_id', '=', billerClientId).execute();
  const paidOut = payouts.reduce((sum, payout) => sum + payout.amount, 0);
  expect(paidOut).toBeLessThanOrEqual(entries.reduce((sum, entry) => sum + entry.amount, 0));
  expect(paidOut).toBe(entries.filter((entry) => entry.payout_id !== null).reduce((sum, entry) => sum + entry.amount, 0));
  expect(
    await findBrokenLedgerLinks(
      t.db,
      payments.map((payment) => payment.id),
    ),
  ).toEqual([]);
}

describe('payout rules', () => {
  it('settles pay dates a working day old, skipping weekends and holidays (every case: payout-calendar.test.ts)', () => {
    expect(settlementCutoff('2026-12-01', 1, NO_HOLIDAYS)).toBe('2026-11-30');
    expect(settlementCutoff('2026-11-30', 1, NO_HOLIDAYS)).toBe('2026-11-27');
    expect(settlementCutoff('2026-12-01', 1, new Set(['2026-11-30']))).toBe('2026-11-27');
    expect(settlementCutoff('2026-12-01', 0, NO_HOLIDAYS)).toBe('2026-12-01');
    // A Saturday's run counts from Friday: Friday's pay date has had no working day yet.
    expect(settlementCutoff('2026-11-28', 1, NO_HOLIDAYS)).toBe('2026-11-26');
  });

  it('pays only a positive net, and only to a beneficiary account', () => {
    expect(payoutDecision(1, true)).toBe('pay');
    expect(payoutDecision(1, false)).toBe('no_beneficiary_account');
    expect(payoutDecision(0, true)).toBe('carry_over');
    expect(payoutDecision(-500, true)).toBe('carry_over');
  });

  it('makes bank references of 18 characters from the date and the payout id', () => {
    const reference = payoutReference('0a1b2c3d-4e5f-6789-abcd-ef0123456789', '2026-12-01');
    expect(reference).toBe('PO2612010A1B2C3D4E');
    expect(reference).toHaveLength(18);
  });

  it('settles a payout only from pending', () => {
    expect(canSettlePayout('pending', 'paid')).toBe(true);
    expect(canSettlePayout('pending', 'failed')).toBe(true);
    expect(canSettlePayout('paid', 'failed')).toBe(false);
    expect(canSettlePayout('failed', 'paid')).toBe(false);
    expect(canSettlePayout('paid', 'paid')).toBe(false);
  });
});

describe('runPayouts', () => {
  let biller: IssuedCredentials;
  let corrected: Payment;
  let full: Payment;
  let fresh: Payment;
  let twoPayDates: Payment;
  let firstPayoutId: string;

  beforeAll(async () => {
    biller = await createBiller(t.db);
    await beneficiaryAccount(biller.clientId);
    // Reconciled in full, then a later push version showed 30.00 deducted: reversal and new collection.
    corrected = await paymentOf(biller, { amount: 5000, status: 'partially_collected', payDate: SETTLED_PAY_DATE });
    await post(corrected, SETTLED_PAY_DATE, 5000, 0);
    await post(corrected, SETTLED_PAY_DATE, -5000, 1);
    await post(corrected, SETTLED_PAY_DATE, 3000, 1);
    full = await paymentOf(biller, { amount: 4000, status: 'collected', payDate: SETTLED_PAY_DATE, employee: 1 });
    await post(full, SETTLED_PAY_DATE, 4000);
    fresh = await paymentOf(biller, { amount: 2500, status: 'collected', payDate: FRESH_PAY_DATE, employee: 2 });
    await post(fresh, FRESH_PAY_DATE, 2500);
    // Collected in full over two pay dates, only the first of them settled today.
    twoPayDates = await paymentOf(biller, { amount: 5000, status: 'collected', payDate: SETTLED_PAY_DATE, employee: 1 });
    await post(twoPayDates, SETTLED_PAY_DATE, 2000);
    await post(twoPayDates, FRESH_PAY_DATE, 3000);
  });

  it('pays out the settled entries as one payout with signed items, and leaves newer entries unpaid', async () => {
    const summary = await run(TODAY);
    expect(summary.settledThrough).toBe('2026-11-30');
    const outcome = outcomeOf(summary.groups, biller.clientId);
    expect(outcome).toMatchObject({ outcome: 'paid_out', currency: 'GBP', amount: 9000, entries: 5, paymentsPaidOut: 1 });
    firstPayoutId = (outcome as { payoutId: string }).payoutId;

    const [payout] = await payoutsOf(biller.clientId);
    expect(payout).toMatchObject({
      id: firstPayoutId,
      amount: 9000,
      status: 'pending',
      payout_date: TODAY,
      currency: 'GBP',
      account_number: '31926819',
      sort_code: '60-16-13',
      account_holder_name: 'Acme Lending Ltd',
      version: 1,
    });
    expect(payout!.reference).toBe(payoutReference(firstPayoutId, TODAY));

    const items = await t.db.selectFrom('payout_items').selectAll().where('payout_id', '=', firstPayoutId).execute();
    expect(items.map((item) => [item.payment_request_id, item.kind, item.amount]).sort()).toEqual(
      [
        [corrected.id, 'collection_reversed', -5000],
        [corrected.id, 'payment_collected', 3000],
        [corrected.id, 'payment_collected', 5000],
        [full.id, 'payment_collected', 4000],
        [twoPayDates.id, 'payment_collected', 2000],
      ].sort(),
    );
    expect(items.reduce((sum, item) => sum + item.amount, 0)).toBe(payout!.amount);

    const unpaid = await t.db
      .selectFrom('ledger_entries')
      .select(['payment_request_id', 'pay_date'])
      .where('biller_client_id', '=', biller.clientId)
      .where('payout_id', 'is', null)
      .execute();
    expect(unpaid.sort((a, b) => a.payment_request_id.localeCompare(b.payment_request_id))).toEqual(
      [
        { payment_request_id: fresh.id, pay_date: FRESH_PAY_DATE },
        { payment_request_id: twoPayDates.id, pay_date: FRESH_PAY_DATE },
      ].sort((a, b) => a.payment_request_id.localeCompare(b.payment_request_id)),
    );
    await expectPaidOutWithinCollected(biller.clientId);
  });

  it('moves a payment paid out in full to paid_out; every payment whose paid-out money changed is a new version with its event', async () => {
    const paidOut = await findPayment(full.id);
    expect(paidOut).toMatchObject({ status: 'paid_out', paid_out_amount: 4000, version: full.version + 1 });
    const partial = await findPayment(corrected.id);
    expect(partial).toMatchObject({ status: 'partially_collected', paid_out_amount: 3000, collected_amount: 3000, version: corrected.version + 1 });
    expect(await findPayment(fresh.id)).toMatchObject({ status: 'collected', paid_out_amount: 0, version: fresh.version });
    expect(await findPayment(twoPayDates.id)).toMatchObject({ status: 'collected', paid_out_amount: 2000, version: twoPayDates.version + 1 });

    const events = await t.db
      .selectFrom('events')
      .select(eventSelection)
      .where('type', '=', 'payment_request.updated')
      .where('biller_client_id', '=', biller.clientId)
      .execute();
    const latest = new Map(events.map((event) => [event.resource_id, (event.payload as { data: Record<string, unknown> }).data]));
    expect([...latest.keys()].sort()).toEqual([full.id, corrected.id, twoPayDates.id].sort());
    expect(latest.get(full.id)).toMatchObject({ status: 'paid_out', version: full.version + 1, paid_out_amount: 4000 });
    // The event says what GET says: same version, same paid-out amount, even though the status stayed.
    expect(latest.get(corrected.id)).toMatchObject({ status: 'partially_collected', version: corrected.version + 1, paid_out_amount: 3000 });
    expect(latest.get(twoPayDates.id)).toMatchObject({ status: 'collected', version: twoPayDates.version + 1, paid_out_amount: 2000 });
  });

  it('writes payout.created with the payout as the API shows it', async () => {
    const events = await t.db.selectFrom('events').select(eventSelection).where('type', '=', 'payout.created').where('biller_client_id', '=', biller.clientId).execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.resource_id).toBe(firstPayoutId);
    const response = await injectJson(t.app, { method: 'GET', url: `/payouts/${firstPayoutId}`, headers: await authHeaders(t.app, biller) });
    const { items: _items, ...shown } = response.json().payout;
    expect((events[0]!.payload as { data: unknown }).data).toEqual(shown);
    expect(shown).toMatchObject({ status: 'pending', amount: 9000, version: 1, payment_information: { payment_amount: 90 } });
  });

  it('writes nothing on a second run the same day', async () => {
    const count = async () => {
      const [payouts, items, events] = await Promise.all([
        t.db
          .selectFrom('payouts')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
        t.db
          .selectFrom('payout_items')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
        t.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return [payouts.n, items.n, events.n];
    };
    const before = await count();
    // A collection posted after today's payout waits for tomorrow, even though its pay date is settled.
    const late = await paymentOf(biller, { amount: 1200, status: 'collected', payDate: SETTLED_PAY_DATE, employee: 2 });
    await post(late, SETTLED_PAY_DATE, 1200);
    const summary = await run(TODAY);
    expect(outcomeOf(summary.groups, biller.clientId)).toMatchObject({ outcome: 'already_paid_out_today', payoutId: firstPayoutId });
    expect(await count()).toEqual(before);
    expect(await findPayment(full.id)).toMatchObject({ status: 'paid_out', version: full.version + 1 });
  });

  it('pays the newer entries the next day', async () => {
    const summary = await run(TOMORROW);
    expect(outcomeOf(summary.groups, biller.clientId)).toMatchObject({ outcome: 'paid_out', amount: 2500 + 1200 + 3000, entries: 3, paymentsPaidOut: 3 });
    expect(await findPayment(fresh.id)).toMatchObject({ status: 'paid_out', paid_out_amount: 2500 });
    expect(await findPayment(twoPayDates.id)).toMatchObject({ status: 'paid_out', paid_out_amount: 5000, version: twoPayDates.version + 2 });
    const unpaid = await t.db.selectFrom('ledger_entries').select('id').where('biller_client_id', '=', biller.clientId).where('payout_id', 'is', null).execute();
    expect(unpaid).toEqual([]);
    await expectPaidOutWithinCollected(biller.clientId);
  });
});

describe('carry-over and skips', () => {
  it('carries a net negative over (nothing written) and nets it into a later payout', async () => {
    const biller = await createBiller(t.db);
    await beneficiaryAccount(biller.clientId);
    // 20.00 collected on 30 October and paid out; the rest (30.00) collected on 1 December, not settled
    // yet today. Then a correction reverses the October collection.
    const corrected = await paymentOf(biller, { amount: 5000, status: 'partially_collected', payDate: '2026-10-30' });
    const october = await post(corrected, '2026-10-30', 2000);
    const old = await t.db
      .insertInto('payouts')
      .values({
        biller_client_id: biller.clientId,
        currency: 'GBP',
        amount: 2000,
        payout_date: '2026-11-02',
        reference: `OLD-${biller.clientId.slice(0, 8)}`,
        account_number: '31926819',
        sort_code: '60-16-13',
        account_holder_name: 'Acme Lending Ltd',
        status: 'paid',
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await t.db.updateTable('ledger_entries').set({ payout_id: old.id }).where('id', '=', october.id).execute();
    await t.db
      .insertInto('payout_items')
      .values({ payout_id: old.id, ledger_entry_id: october.id, payment_request_id: corrected.id, kind: 'payment_collected', amount: 2000 })
      .execute();
    await t.db.updateTable('payment_requests').set({ paid_out_amount: 2000 }).where('id', '=', corrected.id).execute();
    await post(corrected, FRESH_PAY_DATE, 3000);
    await post(corrected, '2026-10-30', -2000, 1);
    const small = await paymentOf(biller, { amount: 400, status: 'collected', payDate: SETTLED_PAY_DATE, employee: 1 });
    await post(small, SETTLED_PAY_DATE, 400);

    // Settled and unpaid today: -2000 + 400.
    const summary = await run(TODAY);
    expect(outcomeOf(summary.groups, biller.clientId)).toMatchObject({ outcome: 'carried_over', net: -1600, entries: 2 });
    expect(await payoutsOf(biller.clientId)).toHaveLength(1);
    const unpaid = await t.db.selectFrom('ledger_entries').select('id').where('biller_client_id', '=', biller.clientId).where('payout_id', 'is', null).execute();
    expect(unpaid).toHaveLength(3);
    expect(await findPayment(small.id)).toMatchObject({ status: 'collected', paid_out_amount: 0 });
    expect(await findPayment(corrected.id)).toMatchObject({ paid_out_amount: 2000 });

    // Tomorrow the December collection is settled too: -2000 + 400 + 3000.
    const later = await run(TOMORROW);
    const paid = outcomeOf(later.groups, biller.clientId);
    expect(paid).toMatchObject({ outcome: 'paid_out', amount: 1400, entries: 3, paymentsPaidOut: 1 });
    const items = await t.db
      .selectFrom('payout_items')
      .select(['kind', 'amount'])
      .where('payout_id', '=', (paid as { payoutId: string }).payoutId)
      .execute();
    expect(items.filter((item) => item.amount < 0)).toEqual([{ kind: 'collection_reversed', amount: -2000 }]);
    expect(await findPayment(small.id)).toMatchObject({ status: 'paid_out', paid_out_amount: 400 });
    expect(await findPayment(corrected.id)).toMatchObject({ status: 'partially_collected', paid_out_amount: 3000, collected_amount: 3000 });
    await expectPaidOutWithinCollected(biller.clientId);
  });

  it('skips and reports a biller without a beneficiary account in the currency', async () => {
    const biller = await createBiller(t.db);
    await beneficiaryAccount(biller.clientId, 'EUR');
    const payment = await paymentOf(biller, { amount: 900, status: 'collected', payDate: SETTLED_PAY_DATE });
    await post(payment, SETTLED_PAY_DATE, 900);
    const summary = await run(TODAY);
    expect(outcomeOf(summary.groups, biller.clientId)).toMatchObject({ outcome: 'no_beneficiary_account', currency: 'GBP', net: 900 });
    expect(await payoutsOf(biller.clientId)).toEqual([]);
    expect(await findPayment(payment.id)).toMatchObject({ status: 'collected', paid_out_amount: 0 });
  });
});

describe('marking payouts paid and failed', () => {
  let biller: IssuedCredentials;
  let payment: Payment;

  beforeAll(async () => {
    biller = await createBiller(t.db);
    await beneficiaryAccount(biller.clientId);
    payment = await paymentOf(biller, { amount: 6000, status: 'collected', payDate: SETTLED_PAY_DATE });
    await post(payment, SETTLED_PAY_DATE, 6000);
  });

  const mark = (payoutId: string, outcome: 'paid' | 'failed', headers: Record<string, string>, body?: unknown) =>
    injectJson(t.app, { method: 'POST', url: `/payouts/${payoutId}/${outcome}`, headers, body: body ?? (outcome === 'failed' ? { reason: 'Account closed' } : undefined) });

  it('releases a failed payout’s entries, and the next run pays them again', async () => {
    const first = outcomeOf((await run(TODAY)).groups, biller.clientId) as { payoutId: string };
    expect(await findPayment(payment.id)).toMatchObject({ status: 'paid_out', paid_out_amount: 6000 });
    const versionPaidOut = (await findPayment(payment.id)).version;

    const response = await mark(first.payoutId, 'failed', { ...operatorHeaders, 'idempotency-key': crypto.randomUUID() });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().payout).toMatchObject({ id: first.payoutId, status: 'failed', failure_reason: 'Account closed', version: 2 });
    expect(response.json().payout.failed_at).not.toBeNull();

    expect(await findPayment(payment.id)).toMatchObject({ status: 'collected', paid_out_amount: 0, version: versionPaidOut + 1 });
    const entries = await t.db.selectFrom('ledger_entries').select('payout_id').where('payment_request_id', '=', payment.id).execute();
    expect(entries).toEqual([{ payout_id: null }]);
    // The failed payout keeps its items, released, as the record of what the bank rejected.
    const kept = await t.db.selectFrom('payout_items').selectAll().where('payout_id', '=', first.payoutId).execute();
    expect(kept).toEqual([expect.objectContaining({ payment_request_id: payment.id, kind: 'payment_collected', amount: 6000, released_at: expect.any(Date) })]);
    const shown = await injectJson(t.app, { method: 'GET', url: `/payouts/${first.payoutId}`, headers: await authHeaders(t.app, biller) });
    expect(shown.json().payout).toMatchObject({ status: 'failed', items: [{ payment_request_id: payment.id, kind: 'payment_collected', amount: 6000 }] });
    const events = await t.db.selectFrom('events').select(eventSelection).where('resource_id', '=', payment.id).orderBy('sequence').execute();
    expect(events.map((event) => (event.payload as { data: { status: string } }).data.status)).toEqual(['paid_out', 'collected']);
    await expectPaidOutWithinCollected(biller.clientId);

    const again = outcomeOf((await run(TOMORROW)).groups, biller.clientId);
    expect(again).toMatchObject({ outcome: 'paid_out', amount: 6000, entries: 1, paymentsPaidOut: 1 });
    expect((again as { payoutId: string }).payoutId).not.toBe(first.payoutId);
    expect(await findPayment(payment.id)).toMatchObject({ status: 'paid_out', paid_out_amount: 6000 });
    // The same entry, now in the new payout's items too: only one of its items is unreleased.
    const itemsOfEntry = await t.db.selectFrom('payout_items').select(['payout_id', 'released_at']).where('payment_request_id', '=', payment.id).execute();
    expect(itemsOfEntry.filter((item) => item.released_at === null)).toEqual([{ payout_id: (again as { payoutId: string }).payoutId, released_at: null }]);
    expect(itemsOfEntry).toHaveLength(2);
    await expectPaidOutWithinCollected(biller.clientId);
  });

  it('marks a pending payout paid once; settling it again is 409', async () => {
    const [, latest] = await payoutsOf(biller.clientId);
    const paid = await mark(latest!.id, 'paid', operatorHeaders);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().payout).toMatchObject({ status: 'paid', version: 2 });
    expect(paid.json().payout.paid_at).not.toBeNull();

    for (const outcome of ['paid', 'failed'] as const) {
      const refused = await mark(latest!.id, outcome, operatorHeaders);
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.json()).toMatchObject({ type: `${PROBLEM_TYPE_BASE}payout-not-pending`, payout_status: 'paid' });
    }
    expect(await findPayment(payment.id)).toMatchObject({ status: 'paid_out', paid_out_amount: 6000 });
  });

  it('answers 404 for unknown and malformed payout ids, 422 for a failure without a reason', async () => {
    expect((await mark(crypto.randomUUID(), 'paid', operatorHeaders)).statusCode).toBe(404);
    expect((await mark('not-a-uuid', 'failed', operatorHeaders)).statusCode).toBe(404);
    const [, latest] = await payoutsOf(biller.clientId);
    const invalid = await mark(latest!.id, 'failed', operatorHeaders, { reason: '', extra: 1 });
    expect(invalid.statusCode).toBe(422);
    expect(
      invalid
        .json()
        .errors.map((error: { pointer: string }) => error.pointer)
        .sort(),
    ).toEqual(['/extra', '/reason']);
  });

  it('answers 401 without credentials and 403 to billers and to operators without payouts:write', async () => {
    const [first] = await payoutsOf(biller.clientId);
    for (const outcome of ['paid', 'failed'] as const) {
      const anonymous = await mark(first!.id, outcome, {});
      expect(anonymous.statusCode).toBe(401);

      const asBiller = await mark(first!.id, outcome, await authHeaders(t.app, biller));
      expect(asBiller.statusCode).toBe(403);

      const billerWithScope = await createBiller(t.db, ['payouts:read', 'payouts:write']);
      const wrongRole = await mark(first!.id, outcome, await authHeaders(t.app, billerWithScope));
      expect(wrongRole.statusCode).toBe(403);
      expect(wrongRole.json().type).toBe(`${PROBLEM_TYPE_BASE}forbidden-role`);

      const readOnly = await mark(first!.id, outcome, await authHeaders(t.app, await createOperator(t.db), 'payouts:read'));
      expect(readOnly.statusCode).toBe(403);
      expect(readOnly.headers['www-authenticate']).toContain('insufficient_scope');
    }
    expect((await payoutsOf(biller.clientId))[0]!.status).toBe('failed');
  });
});

describe('the bank payment file and the daily job', () => {
  it('exports the payment file of the pending payouts made on a date, with decimal amounts and bank details', async () => {
    await createCollectionAccount(t.db);
    const dir = mkdtempSync(join(tmpdir(), 'payouts-'));
    const out = join(dir, 'payouts.csv');
    const { download, written } = await exportPayouts(t.db, { date: TODAY, out });
    expect(written.map((file) => file.id)).toEqual([download.file.id]);
    const text = readFileSync(out, 'utf8');
    expect(text.split('\n')[0]).toBe(payoutFileColumns.join(','));
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    const payouts = await t.db
      .selectFrom('payouts')
      .innerJoin('clients', 'clients.id', 'payouts.biller_client_id')
      .select(['payouts.id', 'payouts.amount', 'payouts.status', 'payouts.reference', 'clients.name'])
      .where('payout_date', '=', TODAY)
      .where('payouts.status', '=', 'pending')
      .execute();
    // The day's failed payout is not instructed: its money went into tomorrow's payout.
    const settled = await t.db.selectFrom('payouts').select(['id', 'status']).where('payout_date', '=', TODAY).where('status', '!=', 'pending').execute();
    expect(settled.map((payout) => payout.status)).toContain('failed');
    for (const { id } of settled) expect(text).not.toContain(id);
    expect(rows).toHaveLength(payouts.length);
    expect(payouts.length).toBeGreaterThanOrEqual(1);
    for (const payout of payouts) {
      const row = rows.find((candidate) => candidate.payout_id === payout.id)!;
      expect(row).toMatchObject({
        reference: payout.reference,
        biller: payout.name,
        currency: 'GBP',
        payout_date: TODAY,
        status: 'pending',
        message_id: download.file.message_id,
        requested_execution_date: TODAY,
      });
      expect(row.amount).toMatch(/^\d+\.\d{2}$/);
      expect(Number(row.amount!.replace('.', ''))).toBe(payout.amount);
      expect(row).toMatchObject({ sort_code: '60-16-13', account_number: '31926819', account_holder_name: 'Acme Lending Ltd' });
    }
  });

  it('runs from the job payload and reports what it did', async () => {
    const processor = runPayoutsProcessor(
      t.db,
      {
        SERVICE_TIME_ZONE: 'Europe/London',
        SETTLEMENT_DELAY_WORKING_DAYS: 1,
        PAYOUT_FUNDING: 'deducted',
        PAYOUT_CONCURRENCY: 2,
        REMITTANCE_LATE_WORKING_DAYS: 3,
        REMITTANCE_TOLERANCE_MINOR: 100,
      },
      pino({ level: 'silent' }),
    );
    const biller = await createBiller(t.db);
    await beneficiaryAccount(biller.clientId);
    const payment = await paymentOf(biller, { amount: 777, status: 'collected', payDate: SETTLED_PAY_DATE });
    await post(payment, SETTLED_PAY_DATE, 777);
    const result = await processor({ data: { date: '2026-12-04' } } as Job);
    expect(result).toMatchObject({ payoutDate: '2026-12-04', settledThrough: '2026-12-03', payouts: 1 });
    expect(await findPayment(payment.id)).toMatchObject({ status: 'paid_out', paid_out_amount: 777 });
  });

  it("counts a weekend run's settlement from the Friday before: Friday's pay date waits for Monday", async () => {
    const biller = await createBiller(t.db);
    await beneficiaryAccount(biller.clientId);
    const payment = await paymentOf(biller, { amount: 1_234, status: 'collected', payDate: SETTLED_PAY_DATE });
    await post(payment, SETTLED_PAY_DATE, 1_234);
    // Saturday 28 November: no working day has passed since Friday 27th's pay date.
    for (const weekend of ['2026-11-28', '2026-11-29']) {
      const summary = await run(weekend);
      expect(summary.settledThrough).toBe('2026-11-26');
      expect(summary.groups.filter((group) => group.billerClientId === biller.clientId)).toEqual([]);
      expect(await findPayment(payment.id)).toMatchObject({ status: 'collected', paid_out_amount: 0 });
    }
    const monday = await run('2026-11-30');
    expect(monday.settledThrough).toBe(SETTLED_PAY_DATE);
    expect(outcomeOf(monday.groups, biller.clientId)).toMatchObject({ outcome: 'paid_out', amount: 1_234 });
  });
});
