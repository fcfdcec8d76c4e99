import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { EmploymentStatus } from '../../../src/platform/db/tables.ts';
import { markSnapshotConfirmed } from '../../../src/cycle/deduction-records/confirmation-repository.ts';
import { enableMandate } from '../../../src/collections/enablement/enablement-service.ts';
import { MANDATE_LIFECYCLE } from '../../../src/collections/mandates/mandate-transitions.ts';
import { revokeMandate } from '../../../src/collections/mandates/mandate-service.ts';
import { DEFAULT_AMOUNT_LIMITS } from '../../../src/collections/payments/amount-limits.ts';
import { cancelPaymentRequest } from '../../../src/collections/payments/payment-service.ts';
import { PAYMENT_REQUEST_LIFECYCLE } from '../../../src/collections/payments/payment-transitions.ts';
import { noProviderApis } from '../../../src/directory/payroll-providers/adapter.ts';
import { findEmployeeOnPayroll } from '../../../src/directory/payrolls/directory-repository.ts';
import { toEmployeeUpdatePayload } from '../../../src/directory/payrolls/employee-resource.ts';
import { followEmploymentChange } from '../../../src/collections/employee-changes/employment-change.ts';
import { replaceBeneficiaryAccount } from '../../../src/settlement/payouts/beneficiary-account-service.ts';
import { markPayoutFailed, markPayoutPaid, runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { PAYOUT_LIFECYCLE } from '../../../src/settlement/payouts/payout-transitions.ts';
import { performRerun, requestRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { cancelSchedule } from '../../../src/collections/schedules/schedule-service.ts';
import { SCHEDULE_LIFECYCLE } from '../../../src/collections/schedules/schedule-transitions.ts';
import type { StatusTransitions } from '../../../src/platform/shared/status-transitions.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { SNAPSHOT_LIFECYCLE } from '../../../src/cycle/snapshots/snapshot-transitions.ts';
import { createWorld, PD1, PD2, PD3 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { createCollectionAccount, createMandateRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// Statuses move in SQL, in bulk: the lock, reconciliation, payouts, cancellations, schedule settling,
// employment changes. Here a trigger records every status a row leaves and the one it reaches while
// the service's own paths run, and each recorded move must be one its lifecycle table allows. The
// paths are listed at the end, so a change that stops one running cannot leave this test vacuous.

const LIFECYCLES: Record<string, StatusTransitions<string>> = {
  payment_requests: PAYMENT_REQUEST_LIFECYCLE,
  mandates: MANDATE_LIFECYCLE,
  schedules: SCHEDULE_LIFECYCLE,
  payouts: PAYOUT_LIFECYCLE,
  deduction_snapshots: SNAPSHOT_LIFECYCLE,
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  await sql`create table status_moves_seen (resource text not null, from_status text not null, to_status text not null)`.execute(t.db);
  await sql`
    create function record_status_move() returns trigger language plpgsql as $$
    begin
      insert into status_moves_seen values (tg_table_name, old.status, new.status);
      return null;
    end $$
  `.execute(t.db);
  for (const table of Object.keys(LIFECYCLES)) {
    await sql`
      create trigger record_status_move after update on ${sql.table(table)}
      for each row when (old.status is distinct from new.status) execute function record_status_move()
    `.execute(t.db);
  }
});
afterAll(async () => t?.close());

describe('status moves written in SQL', () => {
  it('are all moves their lifecycle tables allow', async () => {
    const w = await createWorld(t.db, { employees: 9 });
    const employeeId = (person: number) => w.people[person]!.employee.id;
    const schedule = (person: number) =>
      t.db
        .insertInto('schedules')
        .values({ biller_client_id: w.biller.clientId, mandate_id: w.people[person]!.mandate.id, currency: 'GBP', total_amount: 1_000, instalment_count: 1 })
        .returning('id')
        .executeTakeFirstOrThrow();
    const employmentBecomes = (person: number, status: EmploymentStatus) =>
      t.db.transaction().execute(async (trx) => {
        const before = toEmployeeUpdatePayload((await findEmployeeOnPayroll(trx, employeeId(person), w.payroll.id))!);
        await trx.updateTable('employments').set({ employment_status: status }).where('employee_id', '=', employeeId(person)).where('payroll_id', '=', w.payroll.id).execute();
        await followEmploymentChange(trx, { employeeId: employeeId(person), payrollId: w.payroll.id, before });
      });
    const actor = cliActor('status-moves-test');

    // Due on PD1: collected, partly collected, carried, failed, a schedule's only instalment, and one
    // over the amount limit in a schedule (refused at the lock, erroring its schedule).
    await w.payment(0, 12_550);
    await w.payment(1, 10_000);
    const carried = await w.payment(2, 3_000, { allowPostDue: true });
    await w.payment(3, 3_000);
    const completing = await schedule(4);
    await w.payment(4, 1_000, { schedule: { id: completing.id, instalment: 1 } });
    const erroring = await schedule(5);
    await w.payment(5, 900_000, { schedule: { id: erroring.id, instalment: 1 } });
    // Cancelled before any lock: by the biller, with its schedule, with its revoked mandate.
    const cancelled = await w.payment(0, 1_000, { target: PD2 });
    const cancelledSchedule = await schedule(6);
    await w.payment(6, 1_000, { schedule: { id: cancelledSchedule.id, instalment: 1 }, target: PD2 });
    await w.payment(7, 1_000, { target: PD2 });
    await cancelPaymentRequest(t.db, w.biller.clientId, cancelled.id);
    await cancelSchedule(t.db, w.biller.clientId, cancelledSchedule.id);
    await revokeMandate(t.db, w.biller.clientId, w.people[7]!.mandate.id);

    const locked = await lockPayDate(t.db, w.payroll.id, PD1, { limits: { ...DEFAULT_AMOUNT_LIMITS, maxPaymentAmount: 100_000 } });
    expect(locked).toMatchObject({ paymentsInstructed: 5, paymentsRefused: 1 });

    // Payroll answers in two pushes: the snapshot is confirmed, then reconciled.
    await w.push(employeeId(0), PD1, 12_550);
    expect(await w.reconcile(PD1)).toMatchObject({ snapshotStatus: 'confirmed' });
    await w.push(employeeId(1), PD1, 4_000);
    await w.push(employeeId(2), PD1, 0);
    await w.push(employeeId(3), PD1, 0);
    await w.push(employeeId(4), PD1, 1_000);
    expect(await w.reconcile(PD1)).toMatchObject({ snapshotStatus: 'reconciled', carried: 1, failed: 1, partially: 1 });

    // The carried shortfall is asked for on PD2, whose records confirm its snapshot.
    const lockedPd2 = await lockPayDate(t.db, w.payroll.id, PD2);
    await markSnapshotConfirmed(t.db, lockedPd2.snapshotId);

    // Paid out, the bank rejects it, paid out again and the bank confirms it.
    await replaceBeneficiaryAccount(
      t.db,
      w.biller.clientId,
      { currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' },
      { actor, reason: 'onboarding' },
    );
    const payoutOf = async (today: string) => {
      const run = await runPayouts(t.db, { funding: 'deducted', today, settlementDelayWorkingDays: 1, holidays: new Set() });
      const group = run.groups.find((candidate) => candidate.billerClientId === w.biller.clientId);
      expect(group).toMatchObject({ outcome: 'paid_out' });
      return (group as { payoutId: string }).payoutId;
    };
    await markPayoutFailed(t.db, await payoutOf('2030-06-03'), { actor, reason: 'the bank returned it' });
    await markPayoutPaid(t.db, await payoutOf('2030-06-04'), { actor });

    // A later push takes back part of what was paid out; then an operator re-runs the pay date.
    await w.push(employeeId(0), PD1, 10_000);
    await w.reconcile(PD1);
    const rerun = await requestRerun(t.db, { payrollId: w.payroll.id, payDate: PD1, reason: 'employer fixed a reference', actor: cliActor('ops@example.com'), force: true });
    await performRerun(t.db, rerun.id);

    // Mandates: enabled, then the employee is away, back, and leaves (cancelling what is pending).
    const waiting = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: employeeId(8), payrollId: w.payroll.id, status: 'pending_enablement' });
    const caller = { clientId: w.biller.clientId, role: 'biller' as const, scopes: [], payrollProviderId: null };
    const enablement = { employee_id: employeeId(8), payroll_id: w.payroll.id, mandate_id: waiting.id };
    expect(await enableMandate(t.db, caller, enablement, { adapterFor: noProviderApis })).toMatchObject({ enablement: { status: 'enabled' } });
    await w.payment(8, 1_000, { target: PD3 });
    await employmentBecomes(8, 'unknown');
    await employmentBecomes(8, 'active');
    await employmentBecomes(8, 'leaver');

    // The carried shortfall's mandate is revoked after PD2 instructed it, and an operator re-runs PD2:
    // the new version no longer asks for it, so it is released (to pending) and cancelled.
    const statusOf = async (id: string) => (await t.db.selectFrom('payment_requests').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    expect(await statusOf(carried.id)).toBe('instructed');
    await revokeMandate(t.db, w.biller.clientId, w.people[2]!.mandate.id);
    const rerunPd2 = await requestRerun(t.db, { payrollId: w.payroll.id, payDate: PD2, reason: 'mandate revoked', actor: cliActor('ops@example.com') });
    await performRerun(t.db, rerunPd2.id);
    expect(await statusOf(carried.id)).toBe('cancelled');

    const { rows: seen } = await sql<{ resource: string; from_status: string; to_status: string }>`
      select distinct resource, from_status, to_status from status_moves_seen order by 1, 2, 3
    `.execute(t.db);
    const moves = seen.map((move) => `${move.resource}: ${move.from_status} -> ${move.to_status}`);
    const notAllowed = seen.filter((move) => !LIFECYCLES[move.resource]!.can(move.from_status, move.to_status));
    expect(notAllowed, 'moves the lifecycle tables do not allow').toEqual([]);

    expect(moves).toEqual(
      expect.arrayContaining([
        'payment_requests: pending -> cancelled',
        'payment_requests: pending -> instructed',
        'payment_requests: pending -> failed',
        'payment_requests: instructed -> collected',
        'payment_requests: instructed -> partially_collected',
        'payment_requests: instructed -> pending',
        'payment_requests: instructed -> failed',
        'payment_requests: collected -> paid_out',
        'payment_requests: paid_out -> collected',
        'payment_requests: paid_out -> partially_collected',
        'schedules: active -> cancelled',
        'schedules: active -> errored',
        'schedules: active -> completed',
        'payouts: pending -> failed',
        'payouts: pending -> paid',
        'deduction_snapshots: locked -> confirmed',
        'deduction_snapshots: confirmed -> reconciled',
        'deduction_snapshots: reconciled -> superseded',
        'mandates: active -> revoked',
        'mandates: pending_enablement -> active',
        'mandates: active -> suspended',
        'mandates: suspended -> active',
        'mandates: active -> expired',
      ]),
    );
  });
});
