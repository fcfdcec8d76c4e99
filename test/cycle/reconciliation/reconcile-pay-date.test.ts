import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { performRerun, requestRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { findLedgerDiscrepancies } from '../../../src/cycle/ledger/ledger-repository.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { attemptsOf, calendar, createWorld, ledgerOf, paymentEvents, paymentRow, PD1, PD2, PD3, PD4, sum } from './reconciliation-world.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t.close());

async function counts(payrollId: string) {
  const [ledger, events, attempts, exceptions] = await Promise.all([
    t.db
      .selectFrom('ledger_entries')
      .innerJoin('payment_requests as pr', 'pr.id', 'ledger_entries.payment_request_id')
      .select('ledger_entries.id')
      .where('pr.payroll_id', '=', payrollId)
      .execute(),
    t.db.selectFrom('events').innerJoin('payment_requests as pr', 'pr.id', 'events.resource_id').select('events.id').where('pr.payroll_id', '=', payrollId).execute(),
    t.db.selectFrom('collection_attempts').select('id').where('payroll_id', '=', payrollId).execute(),
    t.db.selectFrom('reconciliation_exceptions').select('id').where('payroll_id', '=', payrollId).execute(),
  ]);
  return { ledger: ledger.length, events: events.length, attempts: attempts.length, exceptions: exceptions.length };
}

describe('reconcilePayDate', () => {
  it('settles full, partial and zero deductions with attempts, ledger entries, events and the snapshot status', async () => {
    const w = await createWorld(t.db, { employees: 3 });
    const full = await w.payment(0, 12_550);
    const partial = await w.payment(1, 10_000);
    const zero = await w.payment(2, 3_000);
    const lock = await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 12_550);
    await w.push(w.people[1]!.employee.id, PD1, 4_000);
    await w.push(w.people[2]!.employee.id, PD1, 0);

    const summary = await w.reconcile(PD1);
    expect(summary).toMatchObject({
      payrollId: w.payroll.id,
      payDate: PD1,
      snapshotId: lock.snapshotId,
      snapshotStatus: 'reconciled',
      employees: 3,
      collected: 16_550,
      carried: 0,
      failed: 1,
      partially: 1,
      exceptions: 0,
      ledgerEntries: 2,
      paymentsUpdated: 3,
    });

    expect(await paymentRow(t.db, full.id)).toMatchObject({ status: 'collected', collected_amount: 12_550, version: 3 });
    expect(await paymentRow(t.db, partial.id)).toMatchObject({ status: 'partially_collected', collected_amount: 4_000, version: 3 });
    expect(await paymentRow(t.db, zero.id)).toMatchObject({ status: 'failed', collected_amount: 0, version: 3 });

    expect(await attemptsOf(t.db, full.id)).toEqual([
      expect.objectContaining({
        attempt_number: 1,
        pay_date: PD1,
        requested_amount: 12_550,
        deducted_amount: 12_550,
        collected_amount: 12_550,
        shortfall_amount: 0,
        outcome: 'collected',
        push_version: 1,
        revision: 0,
        carried_to_pay_date: null,
      }),
    ]);
    expect(await attemptsOf(t.db, partial.id)).toEqual([
      expect.objectContaining({ requested_amount: 10_000, collected_amount: 4_000, shortfall_amount: 6_000, outcome: 'partially_collected' }),
    ]);
    expect(await attemptsOf(t.db, zero.id)).toEqual([expect.objectContaining({ collected_amount: 0, shortfall_amount: 3_000, outcome: 'failed' })]);

    expect((await ledgerOf(t.db, full.id)).map((e) => [e.kind, e.amount, e.revision, e.pay_date, e.payout_id])).toEqual([['payment_collected', 12_550, 0, PD1, null]]);
    expect((await ledgerOf(t.db, partial.id)).map((e) => [e.kind, e.amount])).toEqual([['payment_collected', 4_000]]);
    expect(await ledgerOf(t.db, zero.id)).toEqual([]);

    // The lock's event, then reconciliation's, carrying the new status and version.
    expect((await paymentEvents(t.db, full.id)).map((d) => [d.status, d.version, d.collected_amount])).toEqual([
      ['instructed', 2, 0],
      ['collected', 3, 12_550],
    ]);
    expect((await paymentEvents(t.db, zero.id)).at(-1)).toMatchObject({ status: 'failed', version: 3 });

    const snapshot = await t.db.selectFrom('deduction_snapshots').select('status').where('id', '=', lock.snapshotId).executeTakeFirstOrThrow();
    expect(snapshot.status).toBe('reconciled');
    expect(await findLedgerDiscrepancies(t.db, [full.id, partial.id, zero.id])).toEqual([]);
  });

  it('allocates one employee deduction across two payments, earliest due date first', async () => {
    const w = await createWorld(t.db);
    const laterDue = await w.payment(0, 6_000, { due: '2026-11-20' });
    const earlierDue = await w.payment(0, 4_000, { due: '2026-11-05' });
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 5_000);

    const summary = await w.reconcile(PD1);
    expect(summary).toMatchObject({ employees: 1, collected: 5_000, partially: 1 });
    expect(await paymentRow(t.db, earlierDue.id)).toMatchObject({ status: 'collected', collected_amount: 4_000 });
    expect(await paymentRow(t.db, laterDue.id)).toMatchObject({ status: 'partially_collected', collected_amount: 1_000 });
    expect(await attemptsOf(t.db, laterDue.id)).toEqual([expect.objectContaining({ requested_amount: 6_000, collected_amount: 1_000, shortfall_amount: 5_000 })]);
  });

  it('leaves employees without a record instructed until they report, and marks the snapshot confirmed meanwhile', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const reported = await w.payment(0, 2_000);
    const silent = await w.payment(1, 3_000);
    const lock = await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 2_000);

    const summary = await w.reconcile(PD1);
    expect(summary).toMatchObject({ employees: 1, snapshotStatus: 'confirmed' });
    expect((await paymentRow(t.db, reported.id)).status).toBe('collected');
    expect(await paymentRow(t.db, silent.id)).toMatchObject({ status: 'instructed', version: 2 });
    expect(await attemptsOf(t.db, silent.id)).toEqual([]);
    const snapshot = await t.db.selectFrom('deduction_snapshots').select('status').where('id', '=', lock.snapshotId).executeTakeFirstOrThrow();
    expect(snapshot.status).toBe('confirmed');
  });

  it('carries an allowed shortfall to the next open pay date, whose lock then asks for the remainder', async () => {
    const w = await createWorld(t.db);
    const employeeId = w.people[0]!.employee.id;
    const carried = await w.payment(0, 10_000, { allowPostDue: true });
    await w.lock(PD1);
    await w.push(employeeId, PD1, 4_000);

    const summary = await w.reconcile(PD1);
    expect(summary).toMatchObject({ carried: 1, failed: 0, partially: 0, collected: 4_000 });
    expect(await paymentRow(t.db, carried.id)).toMatchObject({ status: 'pending', target_pay_date: PD2, collected_amount: 4_000, attempts: 1 });
    expect(await attemptsOf(t.db, carried.id)).toEqual([expect.objectContaining({ outcome: 'carried', carried_to_pay_date: PD2, shortfall_amount: 6_000 })]);
    expect((await paymentEvents(t.db, carried.id)).at(-1)).toMatchObject({ status: 'pending', collected_amount: 4_000 });

    const next = await w.lock(PD2);
    const line = await t.db
      .selectFrom('deduction_lines')
      .selectAll()
      .where('snapshot_id', '=', next.snapshotId)
      .where('employee_id', '=', employeeId)
      .executeTakeFirstOrThrow();
    expect(line.requested_amount).toBe(6_000);
    const link = await t.db.selectFrom('deduction_line_payments').selectAll().where('snapshot_id', '=', next.snapshotId).executeTakeFirstOrThrow();
    expect(link).toMatchObject({ payment_request_id: carried.id, requested_amount: 6_000 });
    expect(await paymentRow(t.db, carried.id)).toMatchObject({ status: 'instructed', attempts: 2 });

    await w.push(employeeId, PD2, 6_000);
    await w.reconcile(PD2);
    expect(await paymentRow(t.db, carried.id)).toMatchObject({ status: 'collected', collected_amount: 10_000 });
    expect((await attemptsOf(t.db, carried.id)).map((a) => [a.attempt_number, a.pay_date, a.collected_amount, a.outcome])).toEqual([
      [1, PD1, 4_000, 'carried'],
      [2, PD2, 6_000, 'collected'],
    ]);
    expect(sum((await ledgerOf(t.db, carried.id)).map((e) => e.amount))).toBe(10_000);

    // A late correction of the first pay date corrects the money; the settled status follows it.
    await w.push(employeeId, PD1, 3_000);
    await w.reconcile(PD1);
    expect(await paymentRow(t.db, carried.id)).toMatchObject({ status: 'partially_collected', collected_amount: 9_000, target_pay_date: PD2 });
    expect((await attemptsOf(t.db, carried.id)).map((a) => [a.pay_date, a.collected_amount, a.outcome, a.carried_to_pay_date])).toEqual([
      [PD1, 3_000, 'carried', PD2],
      [PD2, 6_000, 'collected', null],
    ]);
    expect(await findLedgerDiscrepancies(t.db, [carried.id])).toEqual([]);
  });

  it('does not carry when the payment does not allow it, the mandate is not active, or no pay date is open', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const notAllowed = await w.payment(0, 5_000, { allowPostDue: false });
    const revokedMandate = await w.payment(1, 5_000, { allowPostDue: true });
    await w.lock(PD1);
    await t.db.updateTable('mandates').set({ status: 'revoked' }).where('id', '=', w.people[1]!.mandate.id).execute();
    await w.push(w.people[0]!.employee.id, PD1, 1_000);
    await w.push(w.people[1]!.employee.id, PD1, 0);

    expect(await w.reconcile(PD1)).toMatchObject({ carried: 0, partially: 1, failed: 1 });
    expect(await paymentRow(t.db, notAllowed.id)).toMatchObject({ status: 'partially_collected', target_pay_date: PD1 });
    expect(await paymentRow(t.db, revokedMandate.id)).toMatchObject({ status: 'failed', target_pay_date: PD1 });

    const lastPayDateOnly = await createWorld(t.db, { payDates: [calendar[0]!] });
    const nowhereToGo = await lastPayDateOnly.payment(0, 5_000, { allowPostDue: true });
    await lastPayDateOnly.lock(PD1);
    await lastPayDateOnly.push(lastPayDateOnly.people[0]!.employee.id, PD1, 0);
    expect(await lastPayDateOnly.reconcile(PD1)).toMatchObject({ carried: 0, failed: 1 });
    expect(await attemptsOf(t.db, nowhereToGo.id)).toEqual([expect.objectContaining({ outcome: 'failed', carried_to_pay_date: null })]);
  });

  it('stops carrying at the third attempt: failed when nothing was ever collected, partially collected otherwise', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const [nothing, some] = [w.people[0]!.employee.id, w.people[1]!.employee.id];
    const neverPaid = await w.payment(0, 3_000, { allowPostDue: true });
    const partlyPaid = await w.payment(1, 3_000, { allowPostDue: true });
    for (const [payDate, next] of [
      [PD1, PD2],
      [PD2, PD3],
    ] as const) {
      await w.lock(payDate);
      await w.push(nothing, payDate, 0);
      await w.push(some, payDate, payDate === PD1 ? 500 : 0);
      expect(await w.reconcile(payDate)).toMatchObject({ carried: 2 });
      expect((await paymentRow(t.db, neverPaid.id)).target_pay_date).toBe(next);
    }
    await w.lock(PD3);
    await w.push(nothing, PD3, 0);
    await w.push(some, PD3, 0);
    expect(await w.reconcile(PD3)).toMatchObject({ carried: 0, failed: 1, partially: 1 });
    expect(await paymentRow(t.db, neverPaid.id)).toMatchObject({ status: 'failed', attempts: 3, collected_amount: 0 });
    expect(await paymentRow(t.db, partlyPaid.id)).toMatchObject({ status: 'partially_collected', attempts: 3, collected_amount: 500 });
    expect((await attemptsOf(t.db, partlyPaid.id)).map((a) => [a.attempt_number, a.outcome, a.requested_amount])).toEqual([
      [1, 'carried', 3_000],
      [2, 'carried', 2_500],
      [3, 'partially_collected', 2_500],
    ]);
  });

  it('re-reconciles a later version with a reversal and a new entry, and collected_amount follows', async () => {
    const w = await createWorld(t.db);
    const employeeId = w.people[0]!.employee.id;
    const payment = await w.payment(0, 5_000);
    await w.lock(PD1);
    await w.push(employeeId, PD1, 5_000);
    await w.reconcile(PD1);
    expect(await paymentRow(t.db, payment.id)).toMatchObject({ status: 'collected', collected_amount: 5_000 });

    await w.push(employeeId, PD1, 3_000);
    expect(await w.reconcile(PD1)).toMatchObject({ ledgerEntries: 2, partially: 1, collected: 3_000 });
    expect(await paymentRow(t.db, payment.id)).toMatchObject({ status: 'partially_collected', collected_amount: 3_000 });

    await w.push(employeeId, PD1, 5_000);
    expect(await w.reconcile(PD1)).toMatchObject({ ledgerEntries: 2, partially: 0, collected: 5_000 });
    expect(await paymentRow(t.db, payment.id)).toMatchObject({ status: 'collected', collected_amount: 5_000 });

    expect((await ledgerOf(t.db, payment.id)).map((e) => [e.revision, e.kind, e.amount])).toEqual([
      [0, 'payment_collected', 5_000],
      [1, 'payment_collected', 3_000],
      [1, 'collection_reversed', -5_000],
      [2, 'payment_collected', 5_000],
      [2, 'collection_reversed', -3_000],
    ]);
    expect(await attemptsOf(t.db, payment.id)).toEqual([expect.objectContaining({ revision: 2, push_version: 3, collected_amount: 5_000, outcome: 'collected' })]);
    expect((await paymentEvents(t.db, payment.id)).map((d) => d.status)).toEqual(['instructed', 'collected', 'partially_collected', 'collected']);
  });

  it('posts nothing and emits nothing when run again over the same records', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    await w.payment(0, 5_000);
    const second = await w.payment(1, 5_000, { allowPostDue: true });
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 7_000);
    await w.push(w.people[1]!.employee.id, PD1, 2_000);
    const first = await w.reconcile(PD1);
    expect(first.ledgerEntries).toBe(2);
    const before = await counts(w.payroll.id);
    const versionBefore = (await paymentRow(t.db, second.id)).version;

    const again = await w.reconcile(PD1);
    expect(again).toMatchObject({ ledgerEntries: 0, exceptions: 0, paymentsUpdated: 0, collected: first.collected, carried: 1 });
    expect(await counts(w.payroll.id)).toEqual(before);
    expect((await paymentRow(t.db, second.id)).version).toBe(versionBefore);
  });

  it('records over-deductions and unexpected employees once, and never posts them to the ledger', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const payment = await w.payment(0, 5_000);
    await w.lock(PD1);
    const stranger = w.people[1]!.employee.id; // has a mandate but nothing requested on PD1
    await w.push(w.people[0]!.employee.id, PD1, 7_000);
    await w.push(stranger, PD1, 1_234);

    expect(await w.reconcile(PD1)).toMatchObject({ exceptions: 2, collected: 5_000 });
    expect(await w.reconcile(PD1)).toMatchObject({ exceptions: 0 });
    const exceptions = await t.db
      .selectFrom('reconciliation_exceptions')
      .select(['kind', 'employee_id', 'amount', 'record_version', 'currency'])
      .where('payroll_id', '=', w.payroll.id)
      .orderBy('kind')
      .execute();
    expect(exceptions).toEqual([
      { kind: 'over_deduction', employee_id: w.people[0]!.employee.id, amount: 2_000, record_version: 1, currency: 'GBP' },
      { kind: 'unexpected_employee', employee_id: stranger, amount: 1_234, record_version: 1, currency: 'GBP' },
    ]);
    expect(await paymentRow(t.db, payment.id)).toMatchObject({ collected_amount: 5_000, status: 'collected' });
    const ledger = await t.db.selectFrom('ledger_entries').select('amount').where('pay_date', '=', PD1).where('payment_request_id', '=', payment.id).execute();
    expect(sum(ledger.map((e) => e.amount))).toBe(5_000);
  });

  it('in final mode records a missing confirmation and takes the employee as deducted 0; a late record still corrects it', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const failed = await w.payment(0, 2_000);
    const carried = await w.payment(1, 2_000, { allowPostDue: true });
    const lock = await w.lock(PD1);

    expect(await w.reconcile(PD1)).toMatchObject({ employees: 0, snapshotStatus: 'locked' });
    expect((await paymentRow(t.db, failed.id)).status).toBe('instructed');

    expect(await w.reconcile(PD1, { final: true })).toMatchObject({ employees: 2, exceptions: 2, failed: 1, carried: 1, snapshotStatus: 'reconciled' });
    expect(await paymentRow(t.db, failed.id)).toMatchObject({ status: 'failed', collected_amount: 0 });
    expect(await paymentRow(t.db, carried.id)).toMatchObject({ status: 'pending', target_pay_date: PD2 });
    const missing = await t.db.selectFrom('reconciliation_exceptions').selectAll().where('payroll_id', '=', w.payroll.id).execute();
    expect(missing.map((e) => [e.kind, e.amount, e.record_version])).toEqual([
      ['missing_confirmation', 2_000, null],
      ['missing_confirmation', 2_000, null],
    ]);
    expect(await w.reconcile(PD1, { final: true })).toMatchObject({ exceptions: 0, ledgerEntries: 0, paymentsUpdated: 0 });

    await w.push(w.people[0]!.employee.id, PD1, 2_000);
    await w.reconcile(PD1);
    expect(await paymentRow(t.db, failed.id)).toMatchObject({ status: 'collected', collected_amount: 2_000 });
    expect(await attemptsOf(t.db, failed.id)).toEqual([expect.objectContaining({ revision: 1, push_version: 1, outcome: 'collected' })]);
    const snapshot = await t.db.selectFrom('deduction_snapshots').select('status').where('id', '=', lock.snapshotId).executeTakeFirstOrThrow();
    expect(snapshot.status).toBe('reconciled');
  });

  it('never double counts across a re-run, which carries what the pay date already reconciled as it was asked', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const partial = await w.payment(0, 10_000);
    const full = await w.payment(1, 4_000);
    const first = await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 6_000);
    await w.push(w.people[1]!.employee.id, PD1, 4_000);
    await w.reconcile(PD1);
    const before = await counts(w.payroll.id);

    const rerun = await requestRerun(t.db, {
      payrollId: w.payroll.id,
      payDate: PD1,
      reason: 'employer fixed a payroll reference',
      actor: cliActor('ops@example.com'),
      force: true,
    });
    const outcome = await performRerun(t.db, rerun.id);
    expect(outcome.snapshotId).not.toBe(first.snapshotId);
    const lines = await t.db.selectFrom('deduction_lines').select(['employee_id', 'requested_amount']).where('snapshot_id', '=', outcome.snapshotId).execute();
    // Payroll has answered for this pay date: the new version tells it the same, partly collected or not.
    expect(lines.sort((a, b) => a.requested_amount - b.requested_amount)).toEqual([
      { employee_id: w.people[1]!.employee.id, requested_amount: 4_000 },
      { employee_id: w.people[0]!.employee.id, requested_amount: 10_000 },
    ]);

    const summary = await w.reconcile(PD1);
    expect(summary).toMatchObject({ snapshotId: outcome.snapshotId, snapshotStatus: 'reconciled', ledgerEntries: 0, exceptions: 0, collected: 10_000 });
    expect(await counts(w.payroll.id)).toEqual(before);
    expect(await paymentRow(t.db, partial.id)).toMatchObject({ status: 'partially_collected', collected_amount: 6_000 });
    expect(await paymentRow(t.db, full.id)).toMatchObject({ status: 'collected', collected_amount: 4_000 });

    // A corrected push after the re-run is netted against what the attempt already posted.
    await w.push(w.people[0]!.employee.id, PD1, 10_000);
    await w.reconcile(PD1);
    expect(await paymentRow(t.db, partial.id)).toMatchObject({ status: 'collected', collected_amount: 10_000 });
    expect(sum((await ledgerOf(t.db, partial.id)).map((e) => e.amount))).toBe(10_000);
    expect(await attemptsOf(t.db, partial.id)).toHaveLength(1);
    expect(await findLedgerDiscrepancies(t.db, [partial.id, full.id])).toEqual([]);
  });

  it('completes a schedule whose instalments are all collected and errors one with a failed instalment', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    const schedules = [];
    for (const person of w.people) {
      schedules.push(
        await t.db
          .insertInto('schedules')
          .values({ biller_client_id: w.biller.clientId, mandate_id: person.mandate.id, currency: 'GBP', total_amount: 2_000, instalment_count: 2 })
          .returningAll()
          .executeTakeFirstOrThrow(),
      );
    }
    const [good, bad] = schedules as [(typeof schedules)[number], (typeof schedules)[number]];
    await w.payment(0, 1_000, { schedule: { id: good.id, instalment: 1 }, due: '2026-11-01' });
    await w.payment(0, 1_000, { schedule: { id: good.id, instalment: 2 }, due: '2026-11-02' });
    await w.payment(1, 1_000, { schedule: { id: bad.id, instalment: 1 }, due: '2026-11-01' });
    await w.payment(1, 1_000, { schedule: { id: bad.id, instalment: 2 }, due: '2026-11-02' });
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 2_000);
    await w.push(w.people[1]!.employee.id, PD1, 1_000);
    await w.reconcile(PD1);

    const rows = await t.db.selectFrom('schedules').select(['id', 'status', 'version']).where('id', 'in', [good.id, bad.id]).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(good.id)).toMatchObject({ status: 'completed', version: 2 });
    expect(byId.get(bad.id)).toMatchObject({ status: 'errored', version: 2 });
  });

  it('keeps paid_out when a later version changes nothing about the money, and moves it back when one reduces it', async () => {
    const w = await createWorld(t.db);
    const employeeId = w.people[0]!.employee.id;
    const payment = await w.payment(0, 5_000);
    await w.lock(PD1);
    await w.push(employeeId, PD1, 5_000);
    await w.reconcile(PD1);
    // What the payout job does once the money has left (its own tests cover the payout itself).
    await t.db.updateTable('payment_requests').set({ status: 'paid_out', paid_out_amount: 5_000 }).where('id', '=', payment.id).execute();

    await w.push(employeeId, PD1, 5_000); // same amount, higher version
    expect(await w.reconcile(PD1)).toMatchObject({ ledgerEntries: 0, paymentsUpdated: 0 });
    expect((await paymentRow(t.db, payment.id)).status).toBe('paid_out');
    expect(await attemptsOf(t.db, payment.id)).toEqual([expect.objectContaining({ push_version: 2, revision: 0 })]);

    // The reversal is unpaid, for the next payout to claw back; paid_out_amount keeps what left.
    await w.push(employeeId, PD1, 3_000);
    expect(await w.reconcile(PD1)).toMatchObject({ ledgerEntries: 2, paymentsUpdated: 1 });
    expect(await paymentRow(t.db, payment.id)).toMatchObject({ status: 'partially_collected', collected_amount: 3_000, paid_out_amount: 5_000 });
    const unpaid = await t.db
      .selectFrom('ledger_entries')
      .select(['kind', 'amount'])
      .where('payment_request_id', '=', payment.id)
      .where('payout_id', 'is', null)
      .where('revision', '=', 1)
      .orderBy('kind')
      .execute();
    expect(unpaid).toEqual([
      { kind: 'collection_reversed', amount: -5_000 },
      { kind: 'payment_collected', amount: 3_000 },
    ]);
  });

  it('does nothing for a pay date that is not locked', async () => {
    const w = await createWorld(t.db);
    await w.payment(0, 5_000, { target: PD4 });
    expect(await w.reconcile(PD4)).toMatchObject({ snapshotId: null, employees: 0, ledgerEntries: 0 });
  });
});
