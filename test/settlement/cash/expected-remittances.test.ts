import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { DEFAULT_AMOUNT_LIMITS } from '../../../src/collections/payments/amount-limits.ts';
import { lockPayDateOfRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { loadHolidays } from '../../../src/directory/calendars/bank-holiday-repository.ts';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { addWorkingDays } from '../../../src/directory/calendars/working-days.ts';
import { runNightlyNow } from '../../../src/faces/workers/nightly-runner.ts';
import { runRerunNow } from '../../../src/faces/workers/rerun-runner.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { listRemittanceFacts, saveRemittances, updateReceived } from '../../../src/settlement/cash/remittance-repository.ts';
import { bringRemittancesUpToDate, expectedRemittancesFollowUp, expectRemittances, remittancePolicyOf } from '../../../src/settlement/cash/remittance-service.ts';
import { remittanceDueDate } from '../../../src/settlement/cash/remittance-status.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { cashPolicy, parsedStatement } from '../../support/cash.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { signedInAs } from '../../support/console.ts';
import { untilSessionsWaitForDatabaseLocks } from '../../support/database.ts';
import { createCollectionAccount, createOperator, createPaymentRequestRow, createProviderClient, futureMonthlyPayDates } from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { buildWorld } from '../../support/world.ts';

// Expected remittances (issue 33): a payroll pay date's remittance exists from its lock, expecting what
// was requested, before any statement arrives; it expects what payroll deducted once payroll has
// reported, follows a re-run without losing the cash matched to it, and turns late once its due date
// passes with nothing received. Through the real lock, re-run and reconciliation jobs, the command
// line, the API and the console.

let t: TestApp;
let host: WorkerHost;
let account: { sort_code: string; account_number: string };
let operator: Record<string, string>;
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' } });
  host = await composition.startWorkers(runtimeOf(t), { schedule: false });
  const created = await createCollectionAccount(t.db);
  account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
  operator = await authHeaders(t.app, await createOperator(t.db));
});
afterAll(async () => {
  await host?.close();
  await t?.close();
});

const PAYMENTS = [12_550, 3_001] as const;
const REQUESTED = 15_551;

/** A payroll with two employees, each asked for a payment on the first of its (future) pay dates. */
async function payrollWithPayments() {
  const payDates = futureMonthlyPayDates(2);
  const w = await buildWorld(t.db, { payDates, billers: 1, employees: PAYMENTS.length, mandates: true });
  const payDate = payDates[0]!;
  for (const [index, amount] of PAYMENTS.entries()) {
    await createPaymentRequestRow(t.db, { mandate: { ...w.mandates[index]!.mandate, currency: 'GBP' }, amount, targetPayDate: payDate.pay_date });
  }
  return { ...w, payDate, key: { payrollId: w.payroll.id, payDate: payDate.pay_date } };
}

type Locked = Awaited<ReturnType<typeof payrollWithPayments>>;

/** Locks the pay date as the lock job does (the expected remittance in the lock's transaction). */
const lockAsTheJobDoes = (w: Locked) => lockPayDateOfRun(t.db, undefined, w.key, DEFAULT_AMOUNT_LIMITS, expectedRemittancesFollowUp(t.config));

const remittancesOf = (payrollId: string) => t.db.selectFrom('remittances').selectAll().where('payroll_id', '=', payrollId).execute();
const remittanceOf = async (payrollId: string) => {
  const rows = await remittancesOf(payrollId);
  expect(rows).toHaveLength(1);
  return rows[0]!;
};
const referenceOf = async (w: Locked) =>
  (
    await t.db
      .selectFrom('requested_payments as rp')
      .innerJoin('deduction_snapshots as s', 's.id', 'rp.snapshot_id')
      .select('rp.payment_reference')
      .where('s.payroll_id', '=', w.payroll.id)
      .where('s.status', '<>', 'superseded')
      .executeTakeFirstOrThrow()
  ).payment_reference;

/** The line `deductions remittances list` prints for this pay date, with the options given. */
async function cliLine(w: Locked, ...options: string[]) {
  const run = await runDeductions(['remittances', 'list', '--pay-date', w.payDate.pay_date, ...options], cliEnvOf(t.config));
  expect(run.code, run.stderr).toBe(0);
  return run.stdout.split('\n').find((line) => line.includes(w.payroll.name)) ?? null;
}

async function apiRemittance(w: Locked, status?: string) {
  const response = await t.app.inject({
    method: 'GET',
    url: `/remittances?payroll_id=${w.payroll.id}&pay_date=${w.payDate.pay_date}${status ? `&status=${status}` : ''}`,
    headers: operator,
  });
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { remittances: Array<Record<string, unknown>> }).remittances;
}

/** Reconciliations of the payroll that have completed. */
const reconciliationsOf = async (payrollId: string) =>
  Number(
    (
      await t.db
        .selectFrom('reconciliation_runs')
        .select((eb) => eb.fn.countAll<string>().as('runs'))
        .where('payroll_id', '=', payrollId)
        .where('outcome', '=', 'completed')
        .executeTakeFirstOrThrow()
    ).runs,
  );

/** Waits for the reconciliation job a record asked for (debounced, run by the workers) to have completed. */
async function untilReconciled(payrollId: string, completedBefore: number) {
  const deadline = Date.now() + 20_000;
  while ((await reconciliationsOf(payrollId)) <= completedBefore) {
    if (Date.now() > deadline) throw new Error(`payroll ${payrollId} was not reconciled`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What payroll reported for the first employee, stored as the push endpoint stores it (no reconciliation follows). */
async function insertRecord(w: Locked, amount: number) {
  const providerClient = await createProviderClient(t.db, w.provider.id);
  const employeeId = w.people[0]!.employee.id;
  await t.db
    .insertInto('deduction_records')
    .values({
      payroll_id: w.payroll.id,
      pay_date: w.payDate.pay_date,
      pay_period: w.payDate.pay_period,
      employee_id: employeeId,
      record_id: crypto.randomUUID(),
      version: 1,
      deduction_amount: amount,
      currency: 'GBP',
      requested_payments: JSON.stringify([]),
      content_hash: `${employeeId}:1:${amount}`,
      source: 'push',
      received_by_client_id: providerClient.clientId,
    })
    .execute();
}

describe('an expected remittance from the lock', () => {
  // Spawns the command line three times and runs the nightly through the workers.
  it('exists once the nightly lock has run, expecting what was requested, in the CLI, the API and the console', { timeout: 60_000 }, async () => {
    const w = await payrollWithPayments();
    expect(await remittancesOf(w.payroll.id)).toEqual([]);

    const summary = await runNightlyNow(runtimeOf(t), w.payDate.lock_date, { workers: host, pollMs: 50 });
    expect(summary.failures).toEqual([]);
    // The run has finished, so its lock transactions (and the remittances they made) have committed.
    const holidays = await loadHolidays(t.db, 'england-and-wales');
    const reference = await referenceOf(w);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({
      employer_id: w.employer.id,
      payment_reference: reference,
      currency: 'GBP',
      requested: REQUESTED,
      deducted: null,
      expected: REQUESTED,
      received: 0,
      status: 'expected',
      overdue_at: null,
      due_date: remittanceDueDate(w.payDate.pay_date, t.config.REMITTANCE_LATE_WORKING_DAYS, holidays),
    });

    const line = await cliLine(w);
    expect(line).toMatch(/^\S+\s+expected\s/);
    expect(line).toContain('155.51');
    expect(line).toContain(reference);

    expect(await apiRemittance(w)).toEqual([
      expect.objectContaining({ payment_reference: reference, requested: REQUESTED, deducted: null, expected: REQUESTED, received: 0, owed: REQUESTED, status: 'expected' }),
    ]);

    const { browser } = await signedInAs(t.app, t.db, 'finance');
    const list = await browser.get(`/console/cash/remittances?pay_date=${w.payDate.pay_date}&status=expected`);
    expect(list.statusCode).toBe(200);
    const row = list.body.split('<tr>').find((cells) => cells.includes(reference));
    expect(row).toBeDefined();
    expect(row).toContain('155.51');
    expect(row).toContain('expected');
    const overview = await browser.get('/console/cash');
    const expectedCount = overview.body.match(/status=expected">.*?<\/a><\/td>\s*<td[^>]*>(\d+)<\/td>/s)?.[1];
    expect(Number(expectedCount)).toBeGreaterThanOrEqual(1);
  });

  it('is made once however often the pay date is locked, at once or again', async () => {
    const w = await payrollWithPayments();
    const [first, second] = await Promise.all([lockAsTheJobDoes(w), lockAsTheJobDoes(w)]);
    expect([first.created, second.created].sort()).toEqual([false, true]);
    const made = await remittanceOf(w.payroll.id);
    expect(made).toMatchObject({ requested: REQUESTED, expected: REQUESTED, status: 'expected' });

    const again = await lockAsTheJobDoes(w);
    expect(again.created).toBe(false);
    // Nothing to change: the same row, not written again.
    expect(await remittanceOf(w.payroll.id)).toEqual(made);
    const outcome = await t.db.transaction().execute(async (trx) => expectRemittances(trx, await remittancePolicyOf(trx, t.config), [w.key, w.key]));
    expect(outcome).toEqual({ created: 0, updated: 0, failed: 0 });
  });

  it('expects what payroll deducted once its confirmation is reconciled', { timeout: 30_000 }, async () => {
    const w = await payrollWithPayments();
    const locked = await lockAsTheJobDoes(w);
    const provider = await authHeaders(t.app, await createProviderClient(t.db, w.provider.id));
    const before = await reconciliationsOf(w.payroll.id);
    const response = await injectJson(t.app, {
      method: 'POST',
      url: `/deductions/${w.payroll.id}/confirmation`,
      headers: provider,
      body: {
        confirmation: {
          deduction_data_id: locked.snapshotId,
          pay_period: w.payDate.pay_period,
          currency: 'GBP',
          total_amount: 145.5,
          deductions: [
            { employee_id: w.people[0]!.employee.id, deducted_amount: 125.5 },
            { employee_id: w.people[1]!.employee.id, deducted_amount: 20 },
          ],
        },
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    await untilReconciled(w.payroll.id, before);

    expect(await remittanceOf(w.payroll.id)).toMatchObject({ requested: REQUESTED, deducted: 14_550, expected: 14_550, received: 0, status: 'expected' });
    expect(await apiRemittance(w)).toEqual([expect.objectContaining({ requested: REQUESTED, deducted: 14_550, expected: 14_550, owed: 14_550 })]);
    expect(await cliLine(w)).toContain('145.50');
  });

  it('follows a re-run, keeping the cash already matched to it', { timeout: 30_000 }, async () => {
    const w = await payrollWithPayments();
    await lockAsTheJobDoes(w);
    const reference = await referenceOf(w);
    const before = await remittanceOf(w.payroll.id);
    const read = parsedStatement(account, `EXPECTED-${reference}`, [{ amount: REQUESTED, remittanceInformation: reference, bookingDate: w.payDate.pay_date }]);
    const imported = await t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor: cliActor('finance-test'), policy: cashPolicy(w.payDate.pay_date) }));
    expect(imported.matching).toMatchObject({ matches: 1, byRule: { exact: 1 } });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ id: before.id, received: REQUESTED, status: 'received' });

    // A request that arrived after the lock: the operator re-runs the pay date to take it in.
    await createPaymentRequestRow(t.db, { mandate: { ...w.mandates[0]!.mandate, currency: 'GBP' }, amount: 1_449, targetPayDate: w.payDate.pay_date });
    const rerun = await runRerunNow(runtimeOf(t), { ...w.key, reason: 'a request arrived late', actor: cliActor('ops') }, { workers: host });
    expect(rerun).toMatchObject({ snapshotVersion: 2, created: true });

    const after = await remittanceOf(w.payroll.id);
    expect(after).toMatchObject({ id: before.id, payment_reference: reference, requested: 17_000, expected: 17_000, received: REQUESTED, status: 'short' });
    expect(after.version).toBeGreaterThan(before.version);
    const matches = await t.db.selectFrom('remittance_matches').select(['amount', 'unmatched_at']).where('payroll_id', '=', w.payroll.id).execute();
    expect(matches).toEqual([{ amount: REQUESTED, unmatched_at: null }]);
    const shown = await t.app.inject({ method: 'GET', url: `/remittances/${w.payroll.id}/${w.payDate.pay_date}`, headers: operator });
    expect(shown.json()).toMatchObject({ remittance: { expected: 17_000, received: REQUESTED, owed: 1_449, status: 'short' }, matches: [{ amount: REQUESTED }] });
  });

  it('expects nothing after a re-run that left nothing to ask for, and keeps what it received', { timeout: 30_000 }, async () => {
    const w = await payrollWithPayments();
    await lockAsTheJobDoes(w);
    const reference = await referenceOf(w);
    const read = parsedStatement(account, `NOTHING-${reference}`, [{ amount: REQUESTED, remittanceInformation: reference, bookingDate: w.payDate.pay_date }]);
    await t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor: cliActor('finance-test'), policy: cashPolicy(w.payDate.pay_date) }));
    // Every mandate revoked since the lock: the re-run asks for nothing.
    await t.db
      .updateTable('mandates')
      .set({ status: 'revoked' })
      .where(
        'id',
        'in',
        w.mandates.map((m) => m.mandate.id),
      )
      .execute();
    await runRerunNow(runtimeOf(t), { ...w.key, reason: 'mandates revoked', actor: cliActor('ops') }, { workers: host });
    expect(await referenceOf(w).catch(() => null)).toBeNull();
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ payment_reference: reference, requested: 0, expected: 0, received: REQUESTED, status: 'over' });
  });

  // Spawns the command line four times.
  it('turns late once its due date has passed with nothing received, alike in the CLI, the API and the console', { timeout: 60_000 }, async () => {
    const w = await payrollWithPayments();
    await lockAsTheJobDoes(w);
    const { due_date: dueDate } = await remittanceOf(w.payroll.id);
    const reference = await referenceOf(w);

    // The daily payout run on the due date: still on time.
    const onTime = await runDeductions(['payouts', 'run', '--date', dueDate], cliEnvOf(t.config));
    expect(onTime.code, onTime.stderr).toBe(0);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ status: 'expected', overdue_at: null });
    expect(await cliLine(w, '--status', 'late')).toBeNull();

    // The next working day's run: late, its billers told once.
    const nextDay = addWorkingDays(dueDate, 1, await loadHolidays(t.db, 'england-and-wales'));
    const late = await runDeductions(['payouts', 'run', '--date', nextDay], cliEnvOf(t.config));
    expect(late.code, late.stderr).toBe(0);
    const remittance = await remittanceOf(w.payroll.id);
    expect(remittance).toMatchObject({ status: 'late', received: 0 });
    expect(remittance.overdue_at).not.toBeNull();
    const overdue = await t.db.selectFrom('events').select('type').where('biller_client_id', '=', w.biller.clientId).where('type', '=', 'remittance.overdue').execute();
    expect(overdue).toHaveLength(1);

    const line = await cliLine(w, '--status', 'late');
    expect(line).toMatch(/^\S+\s+late\s/);
    expect(line).toContain(`due ${dueDate}`);
    expect(await apiRemittance(w, 'late')).toEqual([expect.objectContaining({ payment_reference: reference, status: 'late', due_date: dueDate, owed: REQUESTED })]);
    expect(await apiRemittance(w, 'expected')).toEqual([]);
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const list = await browser.get(`/console/cash/remittances?pay_date=${w.payDate.pay_date}&status=late`);
    const row = list.body.split('<tr>').find((cells) => cells.includes(reference));
    expect(row).toContain('late');
    expect(row).toContain(dueDate);
  });
});

describe('bringing remittances in line', () => {
  it('never writes over a remittance another transaction changed after it was read', async () => {
    const w = await payrollWithPayments();
    await lockAsTheJobDoes(w);
    const [stale] = await listRemittanceFacts(t.db, { payDates: [w.key] });
    expect(stale).toMatchObject({ version: 1, expected: REQUESTED });
    // Payroll reports, and the reconciliation's follow-up brings the remittance in line: version 2.
    await insertRecord(w, 10_000);
    await t.db.transaction().execute((trx) => expectedRemittancesFollowUp(t.config)(trx, [w.key]));
    const current = await remittanceOf(w.payroll.id);
    expect(current).toMatchObject({ version: 2, deducted: 10_000, expected: 10_000 });

    // A write computed from the version read before (as a refresh that read it then would make) is left out.
    const fromStale = {
      id: current.id,
      payrollId: w.payroll.id,
      payDate: w.payDate.pay_date,
      employerId: w.employer.id,
      currency: 'GBP',
      paymentReference: current.payment_reference,
      requested: REQUESTED,
      deducted: null,
      expected: REQUESTED,
      status: 'expected' as const,
      dueDate: current.due_date,
    };
    expect(await saveRemittances(t.db, [{ ...fromStale, readVersion: stale!.version }])).toEqual(new Set());
    // And so is one that would make it anew, as if none existed.
    expect(await saveRemittances(t.db, [{ ...fromStale, readVersion: null }])).toEqual(new Set());
    expect(await remittanceOf(w.payroll.id)).toEqual(current);
    // Computed from the version there is, it is written.
    expect(await saveRemittances(t.db, [{ ...fromStale, readVersion: current.version }])).toEqual(new Set([current.id]));
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ version: 3, expected: REQUESTED });
  });

  it('computes a remittance again when cash moved it while a refresh was writing, rather than write over the cash', async () => {
    const w = await payrollWithPayments();
    await lockAsTheJobDoes(w);
    const before = await remittanceOf(w.payroll.id);
    // Payroll reports (not reconciled yet): the next refresh has a new expected amount to write.
    await insertRecord(w, 10_000);
    // Meanwhile money moves on the remittance in a transaction still open (as a failed payout's
    // reassessment, which holds no cash advisory lock, does): the refresh must wait for it, then see it.
    let moved!: () => void;
    let commit!: () => void;
    const hasMoved = new Promise<void>((resolve) => (moved = resolve));
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const moving = t.db.transaction().execute(async (trx) => {
      await updateReceived(trx, [{ id: before.id, delta: 100, shortfall: 0, status: 'short' }]);
      moved();
      await committed;
    });
    await hasMoved;
    const refreshing = bringRemittancesUpToDate(t.db, cashPolicy(w.payDate.pay_date));
    await untilSessionsWaitForDatabaseLocks(t.db, 1, 'the refresh');
    commit();
    await moving;
    const outcome = await refreshing;
    expect(outcome.failed).toBe(0);
    // Computed from what was read before the money moved, the write would have said `expected` with 1.00 received.
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 100, deducted: 10_000, expected: 10_000, status: 'short', version: before.version + 2 });
  });

  // Spawns the command line twice.
  it('`deductions migrate` makes the remittances of pay dates locked before the lock made them', { timeout: 30_000 }, async () => {
    const w = await payrollWithPayments();
    // Locked as a worker of the previous release did: no remittance.
    await lockPayDate(t.db, w.payroll.id, w.payDate.pay_date);
    expect(await remittancesOf(w.payroll.id)).toEqual([]);

    const first = await runDeductions(['migrate'], cliEnvOf(t.config));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^\d+ expected remittance\(s\) made for pay dates already locked$/m);
    const today = serviceToday(new Date(), t.config.SERVICE_TIME_ZONE);
    const made = await remittanceOf(w.payroll.id);
    expect(made).toMatchObject({ requested: REQUESTED, expected: REQUESTED, received: 0, status: today > made.due_date ? 'late' : 'expected' });

    const second = await runDeductions(['migrate'], cliEnvOf(t.config));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toMatch(/expected remittance/);
    expect(await remittanceOf(w.payroll.id)).toEqual(made);
  });
});
