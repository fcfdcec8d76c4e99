import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { replaceCollectionAccount } from '../../../src/settlement/payouts/collection-account-service.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { untilSessionsWaitForDatabaseLocks } from '../../support/database.ts';
import { createCollectionAccount, createMandateRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { buildWorld } from '../../support/world.ts';

// Where payroll pays the money is read once the lock holds its payroll, not before: a lock that
// waited behind another job of the payroll while finance replaced the collection account must name
// the new account, never the one just deactivated.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t.close());

const calendar = [{ pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' }];

describe('lockPayDate and the collection account', () => {
  it('names the account that is active once the payroll is its own, when the account changed while it waited', async () => {
    const w = await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 1 });
    const mandate = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: w.people[0]!.employee.id, payrollId: w.payroll.id });
    await t.db
      .insertInto('payment_requests')
      .values({
        biller_client_id: w.biller.clientId,
        mandate_id: mandate.id,
        payroll_id: w.payroll.id,
        employee_id: mandate.employee_id,
        currency: 'GBP',
        amount: 12_550,
        status: 'pending',
        due_date: '2026-11-30',
        target_pay_date: '2026-11-27',
      })
      .execute();

    // Another job of the payroll holds it until told to finish.
    let finishOther!: () => void;
    const otherMayFinish = new Promise<void>((resolve) => (finishOther = resolve));
    let payrollHeld = false;
    const other = t.db.transaction().execute(async (trx) => {
      await sql`select 1 from payrolls where id = ${w.payroll.id}::uuid for update`.execute(trx);
      payrollHeld = true;
      await otherMayFinish;
    });
    while (!payrollHeld) await new Promise((resolve) => setTimeout(resolve, 5));

    const locking = lockPayDate(t.db, w.payroll.id, '2026-11-27');
    await untilSessionsWaitForDatabaseLocks(t.db, 1, 'the lock');
    const { current } = await t.db
      .transaction()
      .execute((trx) =>
        replaceCollectionAccount(
          trx,
          { currency: 'GBP', account_number: '87653921', sort_code: '20-30-40', account_holder_name: 'New Collections Ltd' },
          { actor: cliActor('finance-test'), reason: 'bank moved' },
        ),
      );
    finishOther();
    await other;

    const locked = await locking;
    expect(locked.created).toBe(true);
    const requested = await t.db
      .selectFrom('requested_payments')
      .select(['account_number', 'sort_code', 'account_holder_name'])
      .where('snapshot_id', '=', locked.snapshotId)
      .executeTakeFirstOrThrow();
    expect(requested).toEqual({ account_number: current.account_number, sort_code: '20-30-40', account_holder_name: 'New Collections Ltd' });
  });
});
