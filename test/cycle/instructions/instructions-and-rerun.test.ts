import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureInstructionFile } from '../../../src/cycle/instructions/instruction-service.ts';
import { sha256Hex } from '../../../src/cycle/instructions/instruction-file.ts';
import { deductionPaymentReference, remittancePaymentReference } from '../../../src/cycle/instructions/payment-reference.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { runRerunNow } from '../../../src/faces/workers/rerun-runner.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames, reconcilePayDateJob } from '../../../src/platform/queue/job-catalogue.ts';
import { composition } from '../../../bin/composition.ts';
import { createCollectionAccount, createProviderClient } from '../../support/factories.ts';
import { readInstructionFile } from '../../support/instruction-file.ts';
import { runtimeOf } from '../../support/runtime.ts';
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

/** A payroll on `calendar`, one biller, and `employees` employees each with an active mandate of it. */
const mandated = (employees: number): WorldOptions => ({ payDates: calendar, billers: 1, employees, mandates: true });

/** A payment request on one of the world's mandates, inserted directly. */
const pay = (w: World, m: World['mandates'][number], amount: number, payDate: string) =>
  t.db
    .insertInto('payment_requests')
    .values({
      biller_client_id: w.biller.clientId,
      mandate_id: m.mandate.id,
      payroll_id: w.payroll.id,
      employee_id: m.employee.id,
      currency: 'GBP',
      amount,
      target_pay_date: payDate,
    })
    .returningAll()
    .executeTakeFirstOrThrow();

async function lockAndInstruct(payrollId: string, payDate: string) {
  const lock = await lockPayDate(t.db, payrollId, payDate);
  const file = lock.instructionFile;
  const stored = await t.db.selectFrom('instruction_files').selectAll().where('id', '=', file.instructionFileId).executeTakeFirstOrThrow();
  const { header, items: rows, trailer } = readInstructionFile(stored.content);
  return { lock, file, stored, header, rows, trailer };
}

describe('instruction files', () => {
  it('carry new, continue, amend and stop across three consecutive pay dates', async () => {
    const w = await buildWorld(t.db, mandated(3));
    const [a, b, c] = w.mandates;
    // Pay date 1: A 50.00 and B 20.00 are new.
    await pay(w, a!, 5_000, '2026-10-30');
    await pay(w, b!, 2_000, '2026-10-30');
    const first = await lockAndInstruct(w.payroll.id, '2026-10-30');
    // Employees are named by their payroll reference (works number), never by our id.
    const ref = (m: typeof a) => m!.employment.payroll_reference;
    const action1 = Object.fromEntries(first.rows.map((r) => [r.payroll_reference, r.action]));
    expect(action1).toEqual({ [ref(a)]: 'new', [ref(b)]: 'new' });
    expect(first.stored.content.toString('utf8')).not.toContain(a!.employee.id);
    expect(first.stored.sha256).toBe(sha256Hex(first.stored.content));
    expect(first.rows.find((r) => r.payroll_reference === ref(a))).toMatchObject({ amount: '50.00', currency: 'GBP', pay_period: '7-2026', pay_date: '2026-10-30' });
    expect(first.header).toMatchObject({
      employer_name: w.employer.name,
      employer_external_id: w.employer.external_id,
      payroll_name: w.payroll.name,
      payroll_external_id: w.payroll.external_id,
      pay_date: '2026-10-30',
      pay_period: '7-2026',
      currency: 'GBP',
      file_version: '1',
    });
    expect(first.trailer).toMatchObject({ line_count: '2', total_amount: '70.00', currency: 'GBP' });
    // The payment reference is the employee's deduction on this payroll: the same on every pay date.
    const reference = (m: typeof a) => deductionPaymentReference(m!.employment.deduction_reference_number);
    expect(Object.fromEntries(first.rows.map((r) => [r.payroll_reference, r.payment_reference]))).toEqual({ [ref(a)]: reference(a), [ref(b)]: reference(b) });

    // Pay date 2: A same (continue), B changes (amend), C appears (new).
    await pay(w, a!, 5_000, '2026-11-27');
    await pay(w, b!, 2_500, '2026-11-27');
    await pay(w, c!, 1_000, '2026-11-27');
    const second = await lockAndInstruct(w.payroll.id, '2026-11-27');
    const action2 = Object.fromEntries(second.rows.map((r) => [r.payroll_reference, [r.action, r.amount, r.previous_amount, r.payment_reference]]));
    expect(action2).toEqual({
      [ref(a)]: ['continue', '50.00', '50.00', reference(a)],
      [ref(b)]: ['amend', '25.00', '20.00', reference(b)],
      [ref(c)]: ['new', '10.00', '', reference(c)],
    });
    expect(second.trailer).toMatchObject({ line_count: '3', total_amount: '85.00' });

    // Pay date 3: only C continues; A and B stop.
    await pay(w, c!, 1_000, '2026-12-24');
    const third = await lockAndInstruct(w.payroll.id, '2026-12-24');
    // A stop names the deduction it stops: the reference the clerk keyed with "new".
    const action3 = Object.fromEntries(third.rows.map((r) => [r.payroll_reference, [r.action, r.amount, r.payment_reference]]));
    expect(action3).toEqual({
      [ref(a)]: ['stop', '0.00', reference(a)],
      [ref(b)]: ['stop', '0.00', reference(b)],
      [ref(c)]: ['continue', '10.00', reference(c)],
    });
    expect(third.trailer).toMatchObject({ line_count: '3', total_amount: '10.00' });
    const stopItems = await t.db
      .selectFrom('instruction_items')
      .select('payment_reference')
      .where('instruction_file_id', '=', third.file.instructionFileId)
      .where('action', '=', 'stop')
      .execute();
    expect(stopItems.map((i) => i.payment_reference).sort()).toEqual([reference(a), reference(b)].sort());

    // A repeated job returns the same file and writes no other.
    const again = await lockPayDate(t.db, w.payroll.id, '2026-12-24');
    expect(again.instructionFile).toMatchObject({ created: false, instructionFileId: third.file.instructionFileId });
    expect(await ensureInstructionFile(t.db, third.lock.snapshotId)).toMatchObject({ created: false, instructionFileId: third.file.instructionFileId });
    const files = await t.db.selectFrom('instruction_files').select('id').where('payroll_id', '=', w.payroll.id).execute();
    expect(files).toHaveLength(3);
  });

  it('is downloadable by the payroll provider with its name and digest', async () => {
    const w = await buildWorld(t.db, mandated(1));
    await pay(w, w.mandates[0]!, 1_234, '2026-10-30');
    const { stored } = await lockAndInstruct(w.payroll.id, '2026-10-30');
    const provider = await createProviderClient(t.db, w.provider.id);
    const response = await t.app.inject({
      method: 'GET',
      url: `/deductions/${w.payroll.id}/instruction-file?pay_date=2026-10-30`,
      headers: { 'x-api-key': provider.apiKey },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/csv');
    expect(response.headers['content-disposition']).toContain(stored.file_name);
    expect(response.rawPayload.equals(stored.content)).toBe(true);
    const other = await createProviderClient(t.db);
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/deductions/${w.payroll.id}/instruction-file?pay_date=2026-10-30`,
      headers: { 'x-api-key': other.apiKey },
    });
    expect(foreign.statusCode).toBe(404);
  });
});

describe('re-run', () => {
  it('supersedes the snapshot, serves the new version, and instructs nothing twice', async () => {
    const w = await buildWorld(t.db, mandated(2));
    const [a, b] = w.mandates;
    const early = await pay(w, a!, 4_000, '2026-11-27');
    const settled = await pay(w, a!, 700, '2026-11-27');
    const first = await lockAndInstruct(w.payroll.id, '2026-11-27');
    // A late payment that the re-run should pick up, and a fix operators re-ran for.
    const late = await pay(w, b!, 1_500, '2026-11-27');
    // Settled as failed since the lock (the employee left): the new version must not ask for it again.
    await t.db.updateTable('payment_requests').set({ status: 'failed' }).where('id', '=', settled.id).execute();

    const outcome = await runRerunNow(
      runtimeOf(t),
      {
        payrollId: w.payroll.id,
        payDate: '2026-11-27',
        reason: 'employer corrected a payroll reference',
        actor: cliActor('ops@example.com'),
      },
      { startWorkers: composition.startWorkers },
    );
    expect(outcome).toMatchObject({ previousSnapshotId: first.lock.snapshotId, snapshotVersion: 2, created: true });

    const snapshots = await t.db
      .selectFrom('deduction_snapshots')
      .select(['id', 'status', 'snapshot_version', 'superseded_by', 'total_amount'])
      .where('payroll_id', '=', w.payroll.id)
      .where('pay_date', '=', '2026-11-27')
      .orderBy('snapshot_version')
      .execute();
    expect(snapshots).toMatchObject([
      { id: first.lock.snapshotId, status: 'superseded', snapshot_version: 1, superseded_by: outcome.snapshotId, total_amount: 4_700 },
      { id: outcome.snapshotId, status: 'locked', snapshot_version: 2, total_amount: 5_500 },
    ]);

    const payments = await t.db.selectFrom('payment_requests').select(['id', 'status', 'attempts', 'version']).execute();
    const byId = new Map(payments.map((p) => [p.id, p]));
    expect(byId.get(early.id)).toMatchObject({ status: 'instructed', attempts: 1, version: 2 });
    expect(byId.get(late.id)).toMatchObject({ status: 'instructed', attempts: 1 });
    const carried = await t.db.selectFrom('deduction_line_payments').select('payment_request_id').where('snapshot_id', '=', outcome.snapshotId).execute();
    expect(carried.map((l) => l.payment_request_id).sort()).toEqual([early.id, late.id].sort());
    const instructedEvents = await t.db.selectFrom('events').select('resource_id').where('resource_id', '=', early.id).execute();
    expect(instructedEvents).toHaveLength(1);

    const audit = await t.db.selectFrom('reruns').selectAll().where('id', '=', outcome.rerunId).executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ previous_snapshot_id: first.lock.snapshotId, new_snapshot_id: outcome.snapshotId });
    expect(audit.completed_at).toBeInstanceOf(Date);
    const asked = await t.db.selectFrom('rerun_requests').select(['reason', 'requested_by']).where('rerun_id', '=', outcome.rerunId).execute();
    expect(asked).toEqual([{ reason: 'employer corrected a payroll reference', requested_by: 'ops@example.com' }]);

    const files = await t.db
      .selectFrom('instruction_files')
      .select(['file_version', 'file_name'])
      .where('payroll_id', '=', w.payroll.id)
      .where('pay_date', '=', '2026-11-27')
      .orderBy('file_version')
      .execute();
    expect(files.map((f) => f.file_version)).toEqual([1, 2]);
    expect(files[1]!.file_name).toMatch(/_v2\.csv$/);

    // A re-run keeps every reference: what the clerk keyed and the employer's transfer reference stay valid.
    const references = await t.db
      .selectFrom('deduction_lines')
      .select(['snapshot_id', 'employee_id', 'payment_reference'])
      .where('snapshot_id', 'in', [first.lock.snapshotId, outcome.snapshotId])
      .execute();
    const referenceOf = (snapshotId: string, employeeId: string) => references.find((r) => r.snapshot_id === snapshotId && r.employee_id === employeeId)?.payment_reference;
    expect(referenceOf(first.lock.snapshotId, a!.employee.id)).toBe(deductionPaymentReference(a!.employment.deduction_reference_number));
    expect(referenceOf(outcome.snapshotId, a!.employee.id)).toBe(referenceOf(first.lock.snapshotId, a!.employee.id));
    expect(referenceOf(outcome.snapshotId, b!.employee.id)).toBe(deductionPaymentReference(b!.employment.deduction_reference_number));
    const remittances = await t.db
      .selectFrom('requested_payments')
      .select('payment_reference')
      .where('snapshot_id', 'in', [first.lock.snapshotId, outcome.snapshotId])
      .execute();
    expect(remittances.map((r) => r.payment_reference)).toEqual(Array(2).fill(remittancePaymentReference('2026-11-27', w.payroll.remittance_reference_number)));
    const v2 = readInstructionFile(
      (await t.db.selectFrom('instruction_files').select('content').where('snapshot_id', '=', outcome.snapshotId).executeTakeFirstOrThrow()).content,
    );
    expect(v2.header.file_version).toBe('2');
    expect(v2.trailer).toMatchObject({ line_count: '2', total_amount: '55.00' });

    const provider = await createProviderClient(t.db, w.provider.id);
    const served = await t.app.inject({
      method: 'GET',
      url: `/deductions/${w.payroll.id}?pay_date=2026-11-27`,
      headers: { 'x-api-key': provider.apiKey },
    });
    expect(served.statusCode).toBe(200);
    expect(served.json().deduction_data_response).toMatchObject({ id: outcome.snapshotId, total_amount: 55, employee_count: 2 });

    // The pay date is reconciled again against the new snapshot (a debounced job on the pay-dates queue).
    const queue = new Queue(queueNames.payDates, { connection: producerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX });
    try {
      const jobs = await queue.getJobs(['delayed', 'waiting', 'active', 'completed']);
      const reconcile = jobs.filter((job) => job.name === reconcilePayDateJob);
      expect(reconcile.map((job) => job.data)).toEqual([{ payrollId: w.payroll.id, payDate: '2026-11-27' }]);
    } finally {
      await queue.close();
    }
  });

  it('refuses a pay date that was never locked', async () => {
    const w = await buildWorld(t.db, mandated(1));
    await expect(
      runRerunNow(runtimeOf(t), { payrollId: w.payroll.id, payDate: '2026-12-24', reason: 'x', actor: cliActor('ops') }, { startWorkers: composition.startWorkers }),
    ).rejects.toThrow(/has not been locked/);
  });
});
