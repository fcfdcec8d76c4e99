import { sql, type Transaction } from 'kysely';
import type { DB } from '../../src/db/tables.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBiller, createEmployee, createEmployer, createMandateRow, createPaymentRequestRow, createPayroll, createPayrollProvider, futureMonthlyPayDates } from '../support/factories.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

// Reconciliation and payouts rewrite a million payment requests a night. They stay cheap only while
// PostgreSQL can update each row in place (a heap-only tuple: no new index entries), which an index
// reading a settled column, or a full page, would silently prevent (migration 20261122060000).

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

/** The columns a reconciliation or payout changes on a payment it settles. */
const SETTLING_COLUMNS = ['status', 'collected_amount', 'paid_out_amount', 'version', 'updated_at'];

describe('settling payment requests updates them in place', () => {
  it('no index on payment_requests reads a column that settling changes, in its keys or its predicate', async () => {
    const { rows } = await sql<{ definition: string }>`
      select pg_get_indexdef(indexrelid) as definition from pg_index where indrelid = 'payment_requests'::regclass
    `.execute(t.db);
    expect(rows.length).toBeGreaterThanOrEqual(5);
    const offending = rows.filter(({ definition }) => SETTLING_COLUMNS.some((column) => new RegExp(`\\b${column}\\b`).test(definition)));
    expect(offending).toEqual([]);
    const lockIndex = rows.find(({ definition }) => definition.includes('payment_requests_lock_idx'));
    expect(lockIndex?.definition).toMatch(/WHERE awaiting_lock$/);
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

    // The backend's counters run on until it reports them, so each transaction reads them before and after.
    const updateCounts = async (trx: Transaction<DB>) =>
      (
        await sql<{ updated: number; in_place: number }>`
          select pg_stat_get_xact_tuples_updated('payment_requests'::regclass)::int as updated,
                 pg_stat_get_xact_tuples_hot_updated('payment_requests'::regclass)::int as in_place
        `.execute(trx)
      ).rows[0]!;
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
    const settled = await t.db.selectFrom('payment_requests').select(['status', 'awaiting_lock']).where('id', 'in', [...instructed, ...collected]).execute();
    expect(new Set(settled.map((row) => `${row.status}/${row.awaiting_lock}`))).toEqual(new Set(['collected/false', 'paid_out/false']));
  });

  it('awaiting_lock follows the status: a request carried back to pending is found by the lock index again', async () => {
    const mandate = await mandateOnNewPayroll();
    const payment = await createPaymentRequestRow(t.db, { mandate, status: 'instructed' });
    const awaiting = () => t.db.selectFrom('payment_requests').select('awaiting_lock').where('id', '=', payment.id).executeTakeFirstOrThrow();
    expect(await awaiting()).toEqual({ awaiting_lock: false });
    await t.db.updateTable('payment_requests').set({ status: 'pending' }).where('id', '=', payment.id).execute();
    expect(await awaiting()).toEqual({ awaiting_lock: true });
  });
});
