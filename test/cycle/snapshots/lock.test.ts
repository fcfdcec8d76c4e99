import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { createCollectionAccount, createMandateRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { buildWorld, type World, type WorldOptions } from '../../support/world.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t.close());

const calendar = [
  { pay_date: '2026-10-30', payroll_cutoff_date: '2026-10-23', pay_period: '7-2026', lock_date: '2026-10-21' },
  { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
];
/** A payroll on `calendar`, one biller and three employees. */
const threePeople: WorldOptions = { payDates: calendar, billers: 1, employees: 3 };

async function payment(
  w: World,
  mandate: { id: string; employee_id: string; biller_client_id: string },
  amount: number,
  overrides: { status?: 'pending' | 'cancelled'; target?: string; due?: string } = {},
) {
  return t.db
    .insertInto('payment_requests')
    .values({
      biller_client_id: mandate.biller_client_id,
      mandate_id: mandate.id,
      payroll_id: w.payroll.id,
      employee_id: mandate.employee_id,
      currency: 'GBP',
      amount,
      status: overrides.status ?? 'pending',
      due_date: overrides.due ?? '2026-11-30',
      target_pay_date: overrides.target ?? '2026-11-27',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

describe('lockPayDate', () => {
  it('locks the due payments per employee and instructs them, once', async () => {
    const w = await buildWorld(t.db, threePeople);
    const [alice, bob, carol] = w.people;
    const m1 = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: alice!.employee.id, payrollId: w.payroll.id });
    const m2 = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: bob!.employee.id, payrollId: w.payroll.id });
    const revoked = await createMandateRow(t.db, {
      billerClientId: w.biller.clientId,
      employeeId: carol!.employee.id,
      payrollId: w.payroll.id,
      status: 'revoked',
    });
    const included = [await payment(w, m1, 12_550), await payment(w, m1, 4_000), await payment(w, m2, 999)];
    const cancelled = await payment(w, m2, 5_000, { status: 'cancelled' });
    const onRevokedMandate = await payment(w, revoked, 7_000);
    const nextPayDate = await payment(w, m2, 3_000, { target: '2026-12-24', due: '2026-12-31' });

    const outcome = await lockPayDate(t.db, w.payroll.id, '2026-11-27');
    expect(outcome).toMatchObject({ created: true, employeeCount: 2, totalAmount: 17_549, currency: 'GBP', paymentsInstructed: 3 });
    // The earlier pay date was due to lock first, so it locked first (empty) in the same job.
    expect(outcome.earlier?.map((e) => [e.payDate, e.created, e.paymentsInstructed])).toEqual([['2026-10-30', true, 0]]);

    const snapshot = await t.db.selectFrom('deduction_snapshots').selectAll().where('id', '=', outcome.snapshotId).executeTakeFirstOrThrow();
    expect(snapshot).toMatchObject({ status: 'locked', snapshot_version: 1, total_amount: 17_549, employee_count: 2, pay_period: '8-2026' });
    const lines = await t.db.selectFrom('deduction_lines').selectAll().where('snapshot_id', '=', snapshot.id).orderBy('requested_amount').execute();
    expect(lines.map((l) => [l.employee_id, l.requested_amount])).toEqual([
      [bob!.employee.id, 999],
      [alice!.employee.id, 16_550],
    ]);
    expect(lines.reduce((sum, l) => sum + l.requested_amount, 0)).toBe(snapshot.total_amount);
    expect(new Set(lines.map((l) => l.payment_reference)).size).toBe(2);
    const remittance = await t.db.selectFrom('requested_payments').selectAll().where('snapshot_id', '=', snapshot.id).execute();
    expect(remittance).toHaveLength(1);
    expect(remittance[0]).toMatchObject({ payment_amount: 17_549, sort_code: '04-00-04' });

    const statuses = await t.db.selectFrom('payment_requests').select(['id', 'status', 'attempts', 'version']).execute();
    const byId = new Map(statuses.map((s) => [s.id, s]));
    for (const p of included) expect(byId.get(p.id)).toMatchObject({ status: 'instructed', attempts: 1, version: 2 });
    expect(byId.get(cancelled.id)?.status).toBe('cancelled');
    expect(byId.get(onRevokedMandate.id)?.status).toBe('pending');
    expect(byId.get(nextPayDate.id)).toMatchObject({ status: 'pending', attempts: 0 });

    const events = await t.db.selectFrom('events').select(eventSelection).where('type', '=', 'payment_request.updated').execute();
    expect(events.map((e) => e.resource_id).sort()).toEqual(included.map((p) => p.id).sort());
    expect((events[0]!.payload as { data: { status: string } }).data.status).toBe('instructed');

    const pay = await t.db.selectFrom('pay_dates').select('locked_at').where('payroll_id', '=', w.payroll.id).where('pay_date', '=', '2026-11-27').executeTakeFirstOrThrow();
    expect(pay.locked_at).toBeInstanceOf(Date);

    // Running it again changes nothing.
    const again = await lockPayDate(t.db, w.payroll.id, '2026-11-27');
    expect(again).toMatchObject({ created: false, snapshotId: outcome.snapshotId, paymentsInstructed: 0 });
    const counts = await t.db
      .selectFrom('deduction_snapshots')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('payroll_id', '=', w.payroll.id)
      .where('pay_date', '=', '2026-11-27')
      .executeTakeFirstOrThrow();
    expect(Number(counts.n)).toBe(1);
    const eventsAfter = await t.db.selectFrom('events').select('id').where('type', '=', 'payment_request.updated').execute();
    expect(eventsAfter).toHaveLength(events.length);
  });

  it('writes the instruction file with the snapshot and leaves no row pointing at nothing', async () => {
    const w = await buildWorld(t.db, threePeople);
    const [alice, bob] = w.people;
    const m1 = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: alice!.employee.id, payrollId: w.payroll.id });
    const m2 = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: bob!.employee.id, payrollId: w.payroll.id });
    await payment(w, m1, 1_000);
    await payment(w, m1, 2_000);
    await payment(w, m2, 3_000);

    const outcome = await lockPayDate(t.db, w.payroll.id, '2026-11-27');
    expect(outcome.instructionFile).toMatchObject({ created: true, version: 1 });
    const file = await t.db.selectFrom('instruction_files').selectAll().where('snapshot_id', '=', outcome.snapshotId).executeTakeFirstOrThrow();
    expect(file).toMatchObject({ id: outcome.instructionFile.instructionFileId, item_count: 2, file_version: 1 });

    // The nightly tables keep their references without foreign keys (see the lean-nightly-writes
    // migration); the statements that write them must still never write a dangling one.
    const orphans = await sql<{ kind: string; n: number }>`
      select 'line without snapshot' as kind, count(*)::int as n from deduction_lines l
        where not exists (select 1 from deduction_snapshots s where s.id = l.snapshot_id)
      union all select 'line without employee', count(*)::int from deduction_lines l
        where not exists (select 1 from employees e where e.id = l.employee_id)
      union all select 'link without line of its snapshot', count(*)::int from deduction_line_payments lp
        where not exists (select 1 from deduction_lines l where l.id = lp.line_id and l.snapshot_id = lp.snapshot_id)
      union all select 'link without payment request', count(*)::int from deduction_line_payments lp
        where not exists (select 1 from payment_requests pr where pr.id = lp.payment_request_id)
      union all select 'item without file', count(*)::int from instruction_items i
        where not exists (select 1 from instruction_files f where f.id = i.instruction_file_id)
      union all select 'item without employee', count(*)::int from instruction_items i
        where not exists (select 1 from employees e where e.id = i.employee_id)
      union all select 'event without biller', count(*)::int from events ev
        where not exists (select 1 from clients c where c.id = ev.biller_client_id)
      union all select 'snapshot biller without a link of theirs', count(*)::int from snapshot_billers b
        where not exists (select 1 from deduction_line_payments lp join payment_requests pr on pr.id = lp.payment_request_id
                          where lp.snapshot_id = b.snapshot_id and pr.biller_client_id = b.biller_client_id)
      union all select 'link whose biller the snapshot does not name', count(*)::int from deduction_line_payments lp
        join payment_requests pr on pr.id = lp.payment_request_id
        where not exists (select 1 from snapshot_billers b where b.snapshot_id = lp.snapshot_id and b.biller_client_id = pr.biller_client_id)
    `.execute(t.db);
    const links = await t.db.selectFrom('deduction_line_payments').select('payment_request_id').where('snapshot_id', '=', outcome.snapshotId).execute();
    expect(links).toHaveLength(3);
    expect(Object.fromEntries(orphans.rows.map((row) => [row.kind, row.n]))).toEqual({
      'line without snapshot': 0,
      'line without employee': 0,
      'link without line of its snapshot': 0,
      'link without payment request': 0,
      'item without file': 0,
      'item without employee': 0,
      'event without biller': 0,
      'snapshot biller without a link of theirs': 0,
      'link whose biller the snapshot does not name': 0,
    });
  });

  it('names the billers whose collections the snapshot carries, and only those (who hears of its remittance)', async () => {
    const w = await buildWorld(t.db, { ...threePeople, billers: 3 });
    const [alice, bob] = w.people;
    const [first, second, third] = w.billers;
    const m1 = await createMandateRow(t.db, { billerClientId: first!.clientId, employeeId: alice!.employee.id, payrollId: w.payroll.id });
    const m2 = await createMandateRow(t.db, { billerClientId: second!.clientId, employeeId: bob!.employee.id, payrollId: w.payroll.id });
    const m3 = await createMandateRow(t.db, { billerClientId: second!.clientId, employeeId: alice!.employee.id, payrollId: w.payroll.id });
    const m4 = await createMandateRow(t.db, { billerClientId: third!.clientId, employeeId: bob!.employee.id, payrollId: w.payroll.id });
    await payment(w, m1, 1_000);
    await payment(w, m2, 2_000);
    await payment(w, m3, 3_000);
    // The third biller's only request is due on a later pay date: not in this snapshot.
    await payment(w, m4, 4_000, { target: '2026-12-24', due: '2026-12-31' });

    const outcome = await lockPayDate(t.db, w.payroll.id, '2026-11-27');
    const named = await t.db.selectFrom('snapshot_billers').select('biller_client_id').where('snapshot_id', '=', outcome.snapshotId).execute();
    expect(named.map((row) => row.biller_client_id).sort()).toEqual([first!.clientId, second!.clientId].sort());
  });

  it('applies the per-pay-date limitation in due-date order and leaves the rest pending', async () => {
    const w = await buildWorld(t.db, threePeople);
    const employee = w.people[0]!.employee;
    const mandate = await createMandateRow(t.db, {
      billerClientId: w.biller.clientId,
      employeeId: employee.id,
      payrollId: w.payroll.id,
      maxAmountPerPayDate: 10_000,
    });
    const early = await payment(w, mandate, 6_000, { due: '2026-11-28' });
    const later = await payment(w, mandate, 6_000, { due: '2026-11-29' });
    const latest = await payment(w, mandate, 6_000, { due: '2026-11-30' });

    const outcome = await lockPayDate(t.db, w.payroll.id, '2026-11-27');
    expect(outcome.totalAmount).toBe(10_000);
    const links = await t.db.selectFrom('deduction_line_payments').select(['payment_request_id', 'requested_amount']).where('snapshot_id', '=', outcome.snapshotId).execute();
    const requested = new Map(links.map((l) => [l.payment_request_id, l.requested_amount]));
    expect(requested.get(early.id)).toBe(6_000);
    expect(requested.get(later.id)).toBe(4_000);
    expect(requested.has(latest.id)).toBe(false);
    const latestRow = await t.db.selectFrom('payment_requests').select('status').where('id', '=', latest.id).executeTakeFirstOrThrow();
    expect(latestRow.status).toBe('pending');
  });

  it('locks a pay date with nothing due as an empty snapshot', async () => {
    const w = await buildWorld(t.db, threePeople);
    const outcome = await lockPayDate(t.db, w.payroll.id, '2026-10-30');
    expect(outcome).toMatchObject({ created: true, employeeCount: 0, totalAmount: 0, paymentsInstructed: 0 });
    const remittance = await t.db.selectFrom('requested_payments').selectAll().where('snapshot_id', '=', outcome.snapshotId).execute();
    expect(remittance).toHaveLength(0);
  });

  it('never instructs a payment twice when two pay dates of one payroll lock at once', async () => {
    for (let round = 0; round < 3; round++) {
      const w = await buildWorld(t.db, threePeople);
      const mandate = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: w.people[0]!.employee.id, payrollId: w.payroll.id });
      const early = await payment(w, mandate, 1_000, { target: '2026-10-30', due: '2026-10-31' });
      const later = await payment(w, mandate, 2_000, { target: '2026-11-27' });
      const jobs = [lockPayDate(t.db, w.payroll.id, '2026-11-27'), lockPayDate(t.db, w.payroll.id, '2026-10-30')];
      await Promise.all(round % 2 === 0 ? jobs : jobs.reverse());
      const links = await t.db
        .selectFrom('deduction_line_payments')
        .innerJoin('deduction_snapshots', 'deduction_snapshots.id', 'deduction_line_payments.snapshot_id')
        .select(['payment_request_id', 'deduction_snapshots.pay_date'])
        .where('deduction_snapshots.payroll_id', '=', w.payroll.id)
        .execute();
      expect(links.map((l) => [l.payment_request_id, l.pay_date]).sort()).toEqual(
        [
          [early.id, '2026-10-30'],
          [later.id, '2026-11-27'],
        ].sort(),
      );
      const attempts = await t.db.selectFrom('payment_requests').select('attempts').where('mandate_id', '=', mandate.id).execute();
      expect(attempts.map((a) => a.attempts)).toEqual([1, 1]);
    }
  });

  it('serialises two concurrent locks of one pay date into one snapshot', async () => {
    const w = await buildWorld(t.db, threePeople);
    const mandate = await createMandateRow(t.db, { billerClientId: w.biller.clientId, employeeId: w.people[0]!.employee.id, payrollId: w.payroll.id });
    await payment(w, mandate, 2_500);
    const [a, b] = await Promise.all([lockPayDate(t.db, w.payroll.id, '2026-11-27'), lockPayDate(t.db, w.payroll.id, '2026-11-27')]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(a.snapshotId).toBe(b.snapshotId);
    expect(a.paymentsInstructed + b.paymentsInstructed).toBe(1);
  });
});
