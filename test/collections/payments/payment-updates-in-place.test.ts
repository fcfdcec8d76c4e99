import { sql, type Transaction } from 'kysely';
import type { DB } from '../../../src/platform/db/tables.ts';
import { createDatabase } from '../../../src/platform/db/connection.ts';
import { lockDeductionData } from '../../../src/cycle/snapshots/pay-date-lock-repository.ts';
import { findPendingRequestsOffTheLockQueue } from '../../../src/cycle/snapshots/lock-queue-repository.ts';
import { untilSessionsWaitForDatabaseLocks } from '../../support/database.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createBiller,
  createEmployee,
  createEmployer,
  createMandateRow,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
  futureMonthlyPayDates,
} from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// The nightly lock, reconciliation and payouts rewrite a million payment requests a night each. They
// stay cheap only while PostgreSQL can update each row in place (a heap-only tuple: no new index
// entries), which an index reading a column they change, or a full page, would silently prevent
// (migrations 20261122060000 and 20261201010000). Pending requests are found through the lock queue
// (pending_payment_requests), which the database keeps whoever writes a request.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** An employee's mandate on a payroll of its own, with one pay date. */
async function mandateOnNewPayroll() {
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: futureMonthlyPayDates(1) });
  const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
  const biller = await createBiller(t.db);
  return createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
}

/** The columns the lock, a reconciliation or a payout changes on a payment it instructs or settles. */
const CHANGED_COLUMNS = ['status', 'attempts', 'collected_amount', 'paid_out_amount', 'version', 'updated_at', 'status_reason'];

/** The nightly lock's statement for one pay date of a payroll, in the caller's transaction, with the default limits. */
const rowLockPayDate = (trx: Transaction<DB>, payrollId: string, payDate: string) =>
  lockDeductionData(trx, {
    snapshotId: crypto.randomUUID(),
    payrollId,
    payDate,
    payPeriod: 'any',
    currency: 'GBP',
    collectionAccount: { account_number: '12345678', sort_code: '12-34-56', account_holder_name: 'Collections' },
    supersededSnapshotId: null,
    maxPaymentAmount: 100_000_000,
    maxMandateAmountPerPayDate: 100_000_000,
    maxSnapshotTotal: 100_000_000_000,
    refusalReason: 'over the limit',
  });

/** The backend's counters run on until it reports them, so each transaction reads them before and after. */
const updateCounts = async (trx: Transaction<DB>) =>
  (
    await sql<{ updated: number; in_place: number }>`
      select pg_stat_get_xact_tuples_updated('payment_requests'::regclass)::int as updated,
             pg_stat_get_xact_tuples_hot_updated('payment_requests'::regclass)::int as in_place
    `.execute(trx)
  ).rows[0]!;

describe('instructing and settling payment requests updates them in place', () => {
  it('no index on payment_requests reads a column that the lock or settling changes, in its keys or its predicate', async () => {
    const { rows } = await sql<{ definition: string }>`
      select pg_get_indexdef(indexrelid) as definition from pg_index where indrelid = 'payment_requests'::regclass
    `.execute(t.db);
    expect(rows.length).toBeGreaterThanOrEqual(4);
    const offending = rows.filter(({ definition }) => CHANGED_COLUMNS.some((column) => new RegExp(`\\b${column}\\b`).test(definition)));
    expect(offending).toEqual([]);
    const { rows: queueIndexes } = await sql<{ definition: string }>`
      select pg_get_indexdef(indexrelid) as definition from pg_index where indrelid = 'pending_payment_requests'::regclass
    `.execute(t.db);
    expect(queueIndexes.map((row) => row.definition).join('\n')).toMatch(/pending_payment_requests_lock_idx .*\(payroll_id, target_pay_date\)/);
  });

  it('the lock instructs a payroll’s pending requests in place, and takes them off the lock queue', async () => {
    const mandate = await mandateOnNewPayroll();
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await createPaymentRequestRow(t.db, { mandate, status: 'pending', amount: 1_000 + i })).id);
    const queued = () => t.db.selectFrom('pending_payment_requests').select('payment_request_id').where('payment_request_id', 'in', ids).execute();
    expect(await queued()).toHaveLength(60);
    const payDate = (await t.db.selectFrom('payment_requests').select('target_pay_date').where('id', '=', ids[0]!).executeTakeFirstOrThrow()).target_pay_date;
    const counts = await t.db.transaction().execute(async (trx) => {
      const before = await updateCounts(trx);
      const locked = await rowLockPayDate(trx, mandate.payroll_id, payDate);
      expect(locked.paymentsInstructed).toBe(60);
      const after = await updateCounts(trx);
      return { updated: after.updated - before.updated, in_place: after.in_place - before.in_place };
    });
    expect(counts).toEqual({ updated: 60, in_place: 60 });
    expect(await queued()).toEqual([]);
    const instructed = await t.db.selectFrom('payment_requests').select('status').where('id', 'in', ids).execute();
    expect(new Set(instructed.map((row) => row.status))).toEqual(new Set(['instructed']));
  });

  it('collecting and paying out a payroll’s requests in one transaction each are heap-only updates', async () => {
    const mandate = await mandateOnNewPayroll();
    // Enough rows to fill several pages. Each transaction settles rows written before it, as a pay
    // date's do: a row's second in-place update needs its first one's old version pruned, which any
    // older transaction still running (another test file's, here) holds up.
    const rowsIn = async (status: 'instructed' | 'collected') => {
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) ids.push((await createPaymentRequestRow(t.db, { mandate, status, amount: 1_000 + i })).id);
      return ids;
    };
    const instructed = await rowsIn('instructed');
    const collected = await rowsIn('collected');

    const heapOnlyUpdates = (settle: string, ids: string[]) =>
      t.db.transaction().execute(async (trx) => {
        const before = await updateCounts(trx);
        await sql`
          update payment_requests
          set status = ${settle}, collected_amount = amount, paid_out_amount = case when ${settle} = 'paid_out' then amount else 0 end,
              version = version + 1, updated_at = now()
          where id = any(${ids}::uuid[])
        `.execute(trx);
        const after = await updateCounts(trx);
        return { updated: after.updated - before.updated, in_place: after.in_place - before.in_place };
      });

    expect(await heapOnlyUpdates('collected', instructed)).toEqual({ updated: 60, in_place: 60 });
    expect(await heapOnlyUpdates('paid_out', collected)).toEqual({ updated: 60, in_place: 60 });
    const settled = await t.db
      .selectFrom('payment_requests')
      .select('status')
      .where('id', 'in', [...instructed, ...collected])
      .execute();
    expect(new Set(settled.map((row) => row.status))).toEqual(new Set(['collected', 'paid_out']));
  });
});

describe('the lock queue', () => {
  const queueRowOf = (paymentId: string) =>
    t.db.selectFrom('pending_payment_requests').select(['payroll_id', 'target_pay_date']).where('payment_request_id', '=', paymentId).executeTakeFirst();

  it('holds every request inserted pending, however it is inserted, and none inserted in another status', async () => {
    const mandate = await mandateOnNewPayroll();
    const pending = await createPaymentRequestRow(t.db, { mandate, status: 'pending' });
    const instructed = await createPaymentRequestRow(t.db, { mandate, status: 'instructed' });
    expect(await queueRowOf(pending.id)).toEqual({ payroll_id: mandate.payroll_id, target_pay_date: pending.target_pay_date });
    expect(await queueRowOf(instructed.id)).toBeUndefined();
  });

  it('queues a request again when it comes back to pending, and follows its target pay date while it is pending', async () => {
    const mandate = await mandateOnNewPayroll();
    const payment = await createPaymentRequestRow(t.db, { mandate, status: 'instructed' });
    const nextPayDate = '2099-01-29';
    await t.db
      .insertInto('pay_dates')
      .values({ payroll_id: mandate.payroll_id, pay_date: nextPayDate, payroll_cutoff_date: '2099-01-22', lock_date: '2099-01-19', pay_period: '1-2099' })
      .execute();
    // A carried shortfall: back to pending, for the next pay date.
    await t.db.updateTable('payment_requests').set({ status: 'pending', target_pay_date: nextPayDate }).where('id', '=', payment.id).execute();
    expect(await queueRowOf(payment.id)).toEqual({ payroll_id: mandate.payroll_id, target_pay_date: nextPayDate });
    await t.db.updateTable('payment_requests').set({ target_pay_date: payment.target_pay_date }).where('id', '=', payment.id).execute();
    expect(await queueRowOf(payment.id)).toEqual({ payroll_id: mandate.payroll_id, target_pay_date: payment.target_pay_date });
  });

  it('keeps the row of a request brought back to pending while a lock was clearing it as stale', async () => {
    const mandate = await mandateOnNewPayroll();
    const payment = await createPaymentRequestRow(t.db, { mandate, status: 'pending' });
    // Re-reconciled out of pending (say, collected after all): its queue row stays, stale, for a lock to clear.
    await t.db.updateTable('payment_requests').set({ status: 'collected', collected_amount: payment.amount }).where('id', '=', payment.id).execute();
    expect(await queueRowOf(payment.id)).toBeDefined();

    // Another correction brings it back to pending (its trigger re-writes the queue row), not committed yet...
    const side = createDatabase(t.config.DATABASE_URL, 2);
    let commitCorrection!: () => void;
    const correctionMayCommit = new Promise<void>((resolve) => (commitCorrection = resolve));
    const correction = side.transaction().execute(async (trx) => {
      await trx.updateTable('payment_requests').set({ status: 'pending', collected_amount: 0 }).where('id', '=', payment.id).execute();
      await correctionMayCommit;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      // ...while the lock of the payroll's pay date reads the request as collected and comes to its queue row.
      const lock = t.db.transaction().execute((trx) => rowLockPayDate(trx, mandate.payroll_id, payment.target_pay_date));
      await untilSessionsWaitForDatabaseLocks(t.db, 1, 'the lock clearing the stale queue row');
      commitCorrection();
      await correction;
      expect((await lock).paymentsInstructed).toBe(0);
    } finally {
      commitCorrection();
      await side.destroy();
    }
    // Pending again, and still where the next lock looks.
    expect(await findPendingRequestsOffTheLockQueue(t.db, [payment.id])).toEqual([]);
    expect(await queueRowOf(payment.id)).toEqual({ payroll_id: mandate.payroll_id, target_pay_date: payment.target_pay_date });
  });
});
