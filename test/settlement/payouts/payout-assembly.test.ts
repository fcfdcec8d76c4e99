import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { findBrokenLedgerLinks } from '../../../src/cycle/ledger/ledger-repository.ts';
import { payoutChunkOf } from '../../../src/settlement/payouts/payout-chunks.ts';
import { fundLedgerEntries } from '../../../src/settlement/cash/funding-service.ts';
import { holdOpenPayoutAssembly, insertPayoutAssembly, rowLockPayoutAssembly, payOutChunk } from '../../../src/settlement/payouts/payout-run-repository.ts';
import {
  payOutGroups,
  payoutReference,
  runPayouts,
  settlementCutoff,
  type PayoutGroupOutcome,
  type PayoutRunOptions,
  type PayoutRunSummary,
} from '../../../src/settlement/payouts/payout-service.ts';
import {
  createBiller,
  createCollectionAttemptRow,
  createEmployee,
  createEmployer,
  createMandateRow,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
} from '../../support/factories.ts';
import { untilSessionsWaitForDatabaseLocks } from '../../support/database.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// A payout assembled in chunks (payout-chunks.ts, payout-service.ts): each chunk its own transaction,
// the payout's row written only when the last is in. These tests split payouts of a few dozen entries
// into chunks (minEntriesPerChunk 1) and hold the result to what one transaction would have written.

const TODAY = '2026-12-01';
const PAY_DATE = '2026-11-27';
const calendar = [{ pay_date: PAY_DATE, payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' }];

let t: TestApp;
let payrollId: string;
let employeeIds: string[];

beforeAll(async () => {
  t = await startTestApp();
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  payrollId = (await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar })).id;
  employeeIds = [];
  for (let i = 0; i < 4; i++) employeeIds.push((await createEmployee(t.db, { providerId: provider.id, payrollId, employerId: employer.id })).employee.id);
});
afterAll(async () => t?.close());

const options = (overrides: Partial<PayoutRunOptions> = {}): PayoutRunOptions => ({
  funding: 'deducted',
  today: TODAY,
  settlementDelayWorkingDays: 1,
  holidays: new Set(),
  ...overrides,
});

/** A biller with a beneficiary account and `count` payments collected in full on PAY_DATE (amounts 100, 101, ...). */
async function billerWithCollections(count: number, options: { reversed?: boolean } = {}) {
  const biller = await createBiller(t.db);
  await t.db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: biller.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' })
    .execute();
  const payments = [];
  for (let i = 0; i < count; i++) {
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employeeIds[i % employeeIds.length]!, payrollId });
    const amount = 100 + i;
    const payment = await createPaymentRequestRow(t.db, { mandate, status: 'collected', amount, collectedAmount: amount, targetPayDate: PAY_DATE });
    const attempt = await createCollectionAttemptRow(t.db, payment, {
      pay_date: PAY_DATE,
      attempt_number: 1,
      requested_amount: amount,
      deducted_amount: amount,
      collected_amount: amount,
      outcome: 'collected',
      push_version: 1,
    });
    const entry = { biller_client_id: biller.clientId, payment_request_id: payment.id, collection_attempt_id: attempt.id, currency: 'GBP', pay_date: PAY_DATE };
    await t.db
      .insertInto('ledger_entries')
      .values({ ...entry, revision: 0, kind: 'payment_collected', amount })
      .execute();
    if (options.reversed)
      await t.db
        .insertInto('ledger_entries')
        .values({ ...entry, revision: 1, kind: 'collection_reversed', amount: -amount })
        .execute();
    payments.push(payment);
  }
  return { biller, payments, total: payments.reduce((sum, payment) => sum + payment.amount, 0) };
}

function outcomeOf(groups: PayoutGroupOutcome[], biller: IssuedCredentials) {
  const found = groups.filter((group) => group.billerClientId === biller.clientId);
  expect(found).toHaveLength(1);
  return found[0]!;
}

const paymentsOf = (biller: IssuedCredentials) =>
  t.db
    .selectFrom('payment_requests')
    .select(['id', 'status', 'amount', 'paid_out_amount', 'version', sql<string>`xmin::text`.as('written_by')])
    .where('biller_client_id', '=', biller.clientId)
    .execute();

async function eventsOf(biller: IssuedCredentials) {
  return t.db.selectFrom('events').select(['type', 'resource_id', 'payment_status']).where('biller_client_id', '=', biller.clientId).execute();
}

/** Runs `work` while one payment's update fails (a simulated crash of the chunk holding it), then lifts that. */
async function withPaymentRefused<T>(paymentId: string, work: () => Promise<T>): Promise<T> {
  const name = `refuse_payment_${paymentId.replaceAll('-', '_')}`;
  await sql
    .raw(
      `create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'simulated crash'; end $$;
       create trigger ${name} before update on payment_requests for each row when (old.id = '${paymentId}') execute function ${name}()`,
    )
    .execute(t.db);
  try {
    return await work();
  } finally {
    await sql.raw(`drop trigger ${name} on payment_requests; drop function ${name}()`).execute(t.db);
  }
}

describe('a payout assembled in chunks', () => {
  it('pays what one transaction would, each chunk holding whole payments in a transaction of its own', async () => {
    const { biller, payments, total } = await billerWithCollections(40);
    const summary = await runPayouts(t.db, options({ concurrency: 3, minEntriesPerChunk: 1 }));
    const outcome = outcomeOf(summary.groups, biller);
    expect(outcome).toMatchObject({ outcome: 'paid_out', amount: total, entries: 40, paymentsPaidOut: 40 });
    const payoutId = (outcome as { payoutId: string }).payoutId;

    const payout = await t.db.selectFrom('payouts').selectAll().where('id', '=', payoutId).executeTakeFirstOrThrow();
    expect(payout).toMatchObject({ amount: total, status: 'pending', payout_date: TODAY, reference: payoutReference(payoutId, TODAY), account_number: '31926819' });
    const items = await t.db.selectFrom('payout_items').select(['payment_request_id', 'amount']).where('payout_id', '=', payoutId).execute();
    expect(items.map((item) => item.payment_request_id).sort()).toEqual(payments.map((payment) => payment.id).sort());
    expect(await t.db.selectFrom('payout_assemblies').selectAll().execute()).toEqual([]);

    // Three chunks, three transactions: every payment of a chunk was written by its chunk's transaction.
    const written = await paymentsOf(biller);
    expect(written.every((payment) => payment.status === 'paid_out' && payment.paid_out_amount === payment.amount)).toBe(true);
    const transactionsByChunk = new Map<number, Set<string>>();
    for (const payment of written) {
      const chunk = payoutChunkOf(payment.id, 3);
      transactionsByChunk.set(chunk, (transactionsByChunk.get(chunk) ?? new Set()).add(payment.written_by));
    }
    expect([...transactionsByChunk.values()].every((transactions) => transactions.size === 1)).toBe(true);
    expect(new Set(written.map((payment) => payment.written_by)).size).toBe(transactionsByChunk.size);
    expect(transactionsByChunk.size).toBe(3);

    const events = await eventsOf(biller);
    expect(events.filter((event) => event.type === 'payout.created')).toEqual([{ type: 'payout.created', resource_id: payoutId, payment_status: null }]);
    const paidOut = events.filter((event) => event.type === 'payment_request.updated' && event.payment_status === 'paid_out');
    expect(paidOut.map((event) => event.resource_id).sort()).toEqual(payments.map((payment) => payment.id).sort());
    expect(
      await findBrokenLedgerLinks(
        t.db,
        payments.map((payment) => payment.id),
      ),
    ).toEqual([]);
  });

  it('is finished by the next run when a chunk failed: the payout is hidden until then, and nothing is paid twice', async () => {
    const { biller, payments, total } = await billerWithCollections(30);
    // One payment's update fails, so its chunk rolls back while the other chunks commit.
    const victim = payments[7]!;
    const first = await withPaymentRefused(victim.id, () => runPayouts(t.db, options({ concurrency: 3, minEntriesPerChunk: 1 })));
    expect(outcomeOf(first.groups, biller)).toMatchObject({ outcome: 'failed', error: expect.stringContaining('simulated crash') });
    const [assembly] = await t.db.selectFrom('payout_assemblies').selectAll().where('biller_client_id', '=', biller.clientId).execute();
    expect(assembly).toMatchObject({ chunks: 3, payout_date: TODAY, settled_through: '2026-11-30' });
    expect(await t.db.selectFrom('payouts').select('id').where('biller_client_id', '=', biller.clientId).execute()).toEqual([]);

    // The chunks that committed paid their payments; the failed one's are untouched.
    const victimChunk = payoutChunkOf(victim.id, 3);
    const halfway = await paymentsOf(biller);
    for (const payment of halfway) {
      expect(payment.status, payment.id).toBe(payoutChunkOf(payment.id, 3) === victimChunk ? 'collected' : 'paid_out');
    }
    // Entries of the payout being assembled are linked to it, not broken.
    expect(
      await findBrokenLedgerLinks(
        t.db,
        payments.map((payment) => payment.id),
      ),
    ).toEqual([]);
    // The payout itself is not shown until it is whole: not to the biller through the API.
    const listed = await injectJson(t.app, { method: 'GET', url: '/payouts', headers: await authHeaders(t.app, biller) });
    expect(listed.json().payouts).toEqual([]);

    const second = await runPayouts(t.db, options({ concurrency: 3, minEntriesPerChunk: 1 }));
    expect(outcomeOf(second.groups, biller)).toMatchObject({ outcome: 'paid_out', payoutId: assembly!.payout_id, amount: total, entries: 30 });
    const payout = await t.db.selectFrom('payouts').selectAll().where('biller_client_id', '=', biller.clientId).executeTakeFirstOrThrow();
    expect(payout).toMatchObject({ id: assembly!.payout_id, amount: total, payout_date: TODAY, reference: payoutReference(assembly!.payout_id, TODAY) });
    const finished = await paymentsOf(biller);
    expect(finished.every((payment) => payment.status === 'paid_out' && payment.paid_out_amount === payment.amount)).toBe(true);
    const events = await eventsOf(biller);
    expect(events.filter((event) => event.type === 'payout.created')).toHaveLength(1);
    expect(events.filter((event) => event.payment_status === 'paid_out')).toHaveLength(30);
    expect(await t.db.selectFrom('payout_assemblies').selectAll().where('biller_client_id', '=', biller.clientId).execute()).toEqual([]);
    expect(
      await findBrokenLedgerLinks(
        t.db,
        payments.map((payment) => payment.id),
      ),
    ).toEqual([]);
  });

  it('reports a failed chunk only once every other chunk of the payout has ended', async () => {
    const { biller, payments } = await billerWithCollections(30);
    const victim = payments[0]!;
    const held = payments.find((payment) => payoutChunkOf(payment.id, 3) !== payoutChunkOf(victim.id, 3))!;
    let returned = false;
    let run: Promise<PayoutRunSummary> | undefined;
    await withPaymentRefused(victim.id, () =>
      t.db.transaction().execute(async (trx) => {
        // Another chunk waits on this payment's row while the victim's chunk fails.
        await trx.selectFrom('payment_requests').select('id').where('id', '=', held.id).forUpdate().execute();
        run = runPayouts(t.db, options({ concurrency: 3, minEntriesPerChunk: 1 }));
        void run.then(() => (returned = true));
        await untilSessionsWaitForDatabaseLocks(t.db, 1, 'the chunk of the held payment');
        for (let i = 0; i < 100 && !returned; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(returned).toBe(false);
      }),
    );
    expect(outcomeOf((await run!).groups, biller)).toMatchObject({ outcome: 'failed', error: expect.stringContaining('simulated crash') });
    const [heldNow] = (await paymentsOf(biller)).filter((payment) => payment.id === held.id);
    expect(heldNow!.status).toBe('paid_out');
    // The next run finishes it.
    expect(outcomeOf((await runPayouts(t.db, options({ concurrency: 3, minEntriesPerChunk: 1 }))).groups, biller)).toMatchObject({ outcome: 'paid_out', entries: 30 });
  });

  it('left by a dead run, is finished by a later day’s run as that day’s payout, to the account active then', async () => {
    const { biller, payments, total } = await billerWithCollections(12);
    const first = await withPaymentRefused(payments[3]!.id, () => runPayouts(t.db, options({ concurrency: 2, minEntriesPerChunk: 1 })));
    expect(outcomeOf(first.groups, biller)).toMatchObject({ outcome: 'failed' });
    const [assembly] = await t.db.selectFrom('payout_assemblies').selectAll().where('biller_client_id', '=', biller.clientId).execute();
    // Finance replaced the account meanwhile.
    await t.db.updateTable('beneficiary_accounts').set({ active: false }).where('biller_client_id', '=', biller.clientId).execute();
    await t.db
      .insertInto('beneficiary_accounts')
      .values({ biller_client_id: biller.clientId, currency: 'GBP', account_number: '55779911', sort_code: '20-00-00', account_holder_name: 'Acme Lending Ltd (new)' })
      .execute();

    const nextDay = '2026-12-02';
    const second = await runPayouts(t.db, options({ today: nextDay, concurrency: 2, minEntriesPerChunk: 1 }));
    expect(second.groups.filter((group) => group.billerClientId === biller.clientId)).toEqual([
      expect.objectContaining({ outcome: 'paid_out', payoutId: assembly!.payout_id, amount: total, entries: 12 }),
    ]);
    const payout = await t.db.selectFrom('payouts').selectAll().where('biller_client_id', '=', biller.clientId).executeTakeFirstOrThrow();
    expect(payout).toMatchObject({
      id: assembly!.payout_id,
      amount: total,
      payout_date: nextDay,
      reference: payoutReference(assembly!.payout_id, nextDay),
      account_number: '55779911',
      sort_code: '20-00-00',
    });
    expect((await paymentsOf(biller)).every((payment) => payment.paid_out_amount === payment.amount)).toBe(true);
  });

  it('makes one payout when three runs assemble it at once, and none returns before it is made', async () => {
    const { biller, total } = await billerWithCollections(24);
    const payoutMade = async () => (await t.db.selectFrom('payouts').select('id').where('biller_client_id', '=', biller.clientId).execute()).length;
    const runs = [1, 2, 3].map(() => runPayouts(t.db, options({ concurrency: 2, minEntriesPerChunk: 1 })).then(async (summary) => ({ summary, made: await payoutMade() })));
    const finished = await Promise.all(runs);
    expect(finished.map((run) => run.made)).toEqual([1, 1, 1]);
    const outcomes = finished.map((run) => outcomeOf(run.summary.groups, biller));
    expect(outcomes.every((outcome) => outcome.outcome === 'paid_out' || outcome.outcome === 'already_paid_out_today')).toBe(true);
    const payouts = await t.db.selectFrom('payouts').selectAll().where('biller_client_id', '=', biller.clientId).execute();
    expect(payouts).toHaveLength(1);
    expect(payouts[0]!.amount).toBe(total);
    const items = await t.db.selectFrom('payout_items').select('amount').where('payout_id', '=', payouts[0]!.id).execute();
    expect(items).toHaveLength(24);
    const payments = await paymentsOf(biller);
    expect(payments.every((payment) => payment.paid_out_amount === payment.amount)).toBe(true);
    expect((await eventsOf(biller)).filter((event) => event.payment_status === 'paid_out')).toHaveLength(24);
  });

  it('is finished by a run that found none of its entries unpaid because another run attached them all meanwhile', async () => {
    const { biller, total } = await billerWithCollections(6);
    const cutoff = settlementCutoff(TODAY, 1, new Set());
    await fundLedgerEntries(t.db, { cutoff, defaultFunding: 'deducted' });
    let run: Promise<PayoutRunSummary> | undefined;
    // The other run plans and attaches everything while this run waits to read the unpaid entries: it
    // then finds no group to pay, and must find the half-made payout among the assemblies.
    await t.db.transaction().execute(async (trx) => {
      await sql`lock table ledger_entries in access exclusive mode`.execute(trx);
      run = payOutGroups(t.db, { billerClientId: biller.clientId }, TODAY, cutoff, {});
      await untilSessionsWaitForDatabaseLocks(t.db, 1, 'the run listing unpaid entries');
      const assembly = await insertPayoutAssembly(trx, {
        billerClientId: biller.clientId,
        currency: 'GBP',
        payoutId: crypto.randomUUID(),
        payoutDate: TODAY,
        settledThrough: cutoff,
        chunks: 1,
      });
      const toPay = { payoutId: assembly!.payout_id, billerClientId: biller.clientId, currency: 'GBP', settledThrough: cutoff };
      expect(await payOutChunk(trx, toPay, 0, 1)).toMatchObject({ net: total, entries: 6 });
    });
    const outcome = outcomeOf((await run!).groups, biller);
    expect(outcome).toMatchObject({ outcome: 'paid_out', amount: total, entries: 6 });
    const payouts = await t.db.selectFrom('payouts').select(['amount']).where('biller_client_id', '=', biller.clientId).execute();
    expect(payouts).toEqual([{ amount: total }]);
  });

  it('is withdrawn, every effect undone, when what it attached nets to nothing payable', async () => {
    // Collections reversed in full net to zero: a plan would carry them over. An assembly planned for
    // them anyway (the entries changed after a plan) must not become a payout.
    const { biller, payments } = await billerWithCollections(9, { reversed: true });
    const before = await paymentsOf(biller);
    const payoutId = crypto.randomUUID();
    await t.db
      .insertInto('payout_assemblies')
      .values({
        payout_id: payoutId,
        biller_client_id: biller.clientId,
        currency: 'GBP',
        payout_date: TODAY,
        settled_through: '2026-11-30',
        chunks: 2,
      })
      .execute();
    const summary = await runPayouts(t.db, options({ concurrency: 2, minEntriesPerChunk: 1 }));
    expect(summary.groups.filter((group) => group.billerClientId === biller.clientId)).toEqual([
      { billerClientId: biller.clientId, currency: 'GBP', outcome: 'carried_over', net: 0, entries: 18 },
      // Its entries are unpaid again, and its group nets to zero: carried over by the run's own plan too.
      { billerClientId: biller.clientId, currency: 'GBP', outcome: 'carried_over', net: 0, entries: 18 },
    ]);
    expect(await t.db.selectFrom('payouts').select('id').where('biller_client_id', '=', biller.clientId).execute()).toEqual([]);
    expect(await t.db.selectFrom('payout_items').select('id').where('payout_id', '=', payoutId).execute()).toEqual([]);
    expect(await t.db.selectFrom('payout_assemblies').select('payout_id').execute()).toEqual([]);
    const unpaid = await t.db.selectFrom('ledger_entries').select('id').where('biller_client_id', '=', biller.clientId).where('payout_id', 'is', null).execute();
    expect(unpaid).toHaveLength(18);
    const after = await paymentsOf(biller);
    for (const payment of after) {
      const was = before.find((candidate) => candidate.id === payment.id)!;
      expect({ status: payment.status, paid_out_amount: payment.paid_out_amount }).toEqual({ status: was.status, paid_out_amount: was.paid_out_amount });
    }
    expect(
      await findBrokenLedgerLinks(
        t.db,
        payments.map((payment) => payment.id),
      ),
    ).toEqual([]);
  });
});

describe('an open assembly, held by a chunk', () => {
  async function openAssembly() {
    const biller = await createBiller(t.db);
    const payoutId = crypto.randomUUID();
    await t.db
      .insertInto('payout_assemblies')
      .values({ payout_id: payoutId, biller_client_id: biller.clientId, currency: 'GBP', payout_date: TODAY, settled_through: '2026-11-30', chunks: 2 })
      .execute();
    return payoutId;
  }

  it('makes the transaction that finishes it wait until the chunk commits', async () => {
    const payoutId = await openAssembly();
    let chunkDone = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const chunk = t.db.transaction().execute(async (trx) => {
      expect(await holdOpenPayoutAssembly(trx, payoutId)).toBe(true);
      await released;
      chunkDone = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const finisher = t.db.transaction().execute(async (trx) => {
      const locked = await rowLockPayoutAssembly(trx, payoutId);
      return { locked: locked !== undefined, afterChunk: chunkDone };
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await chunk;
    expect(await finisher).toEqual({ locked: true, afterChunk: true });
  });

  it('is gone for a chunk that starts after it was finished, and fails one whose snapshot is older (which then runs again)', async () => {
    const payoutId = await openAssembly();
    const stale = t.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        await sql`select 1`.execute(trx); // the snapshot is taken here, while the assembly is open
        await t.db.deleteFrom('payout_assemblies').where('payout_id', '=', payoutId).execute(); // finished by another run
        return holdOpenPayoutAssembly(trx, payoutId);
      });
    await expect(stale).rejects.toMatchObject({ code: '40001' });
    expect(
      await t.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute((trx) => holdOpenPayoutAssembly(trx, payoutId)),
    ).toBe(false);
  });
});

describe('the chunk of a payment', () => {
  it('is computed the same in SQL as in payoutChunkOf, for any id and chunk count', async () => {
    const ids = Array.from({ length: 300 }, () => crypto.randomUUID());
    for (const chunks of [1, 2, 3, 7, 64]) {
      const rows = await sql<{ id: string; chunk: number }>`
        select id::text, get_byte(uuid_send(id), 15) % ${chunks}::int as chunk from unnest(${ids}::uuid[]) as ids(id)
      `.execute(t.db);
      expect(rows.rows.map((row) => [row.id, row.chunk])).toEqual(ids.map((id) => [id, payoutChunkOf(id, chunks)]));
    }
  });
});
