import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockPayDate, relockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { deductionPaymentReference, isBacsReference, remittancePaymentReference } from '../../../src/cycle/instructions/payment-reference.ts';
import { createCollectionAccount, createEmployee, createEmployer, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { readInstructionFile } from '../../support/instruction-file.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { buildWorld, type World } from '../../support/world.ts';

// The lock builds payment references in SQL; these tests hold it to the pure functions of
// src/cycle/instructions/payment-reference.ts, character for character, on a pay date with many employees
// whose payroll references are as long and odd as payroll software lets them be.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  // Numbers that cross from 8 to 9 digits inside one payroll (this file has a database of its own).
  await sql`alter table employments alter column deduction_reference_number restart with 99999900`.execute(t.db);
  await sql`alter table payrolls alter column remittance_reference_number restart with 99999000`.execute(t.db);
});
afterAll(async () => t.close());

const calendar = [
  { pay_date: '2026-10-30', payroll_cutoff_date: '2026-10-23', pay_period: '7-2026', lock_date: '2026-10-21' },
  { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
];

const ODD_PAYROLL_REFERENCES = [
  'W'.repeat(200),
  `${'0'.repeat(40)}1`,
  'Ñoño-ü/ß',
  '=1+2',
  '+44 20 7946 0000',
  'a, "quoted" one',
  '  padded  ',
  'tab\there',
  'line\nbreak',
  'sd00000001',
  'SD99999901',
  '😀',
  '-',
];

/** A payment request of `amount` for every mandate of the world, due on `payDate`. */
async function payEveryone(w: World, payDate: string, amount: number, mandates = w.mandates) {
  await t.db
    .insertInto('payment_requests')
    .values(
      mandates.map((m) => ({
        biller_client_id: w.biller.clientId,
        mandate_id: m.mandate.id,
        payroll_id: w.payroll.id,
        employee_id: m.employee.id,
        currency: 'GBP',
        amount,
        target_pay_date: payDate,
      })),
    )
    .execute();
}

async function linesOf(snapshotId: string) {
  return t.db
    .selectFrom('deduction_lines as l')
    .innerJoin('deduction_snapshots as s', 's.id', 'l.snapshot_id')
    .innerJoin('employments as e', (join) => join.onRef('e.employee_id', '=', 'l.employee_id').onRef('e.payroll_id', '=', 's.payroll_id'))
    .select(['l.employee_id', 'l.payroll_reference', 'l.payment_reference', 'e.deduction_reference_number'])
    .where('l.snapshot_id', '=', snapshotId)
    .execute();
}

async function remittanceOf(snapshotId: string) {
  return (await t.db.selectFrom('requested_payments').select('payment_reference').where('snapshot_id', '=', snapshotId).executeTakeFirstOrThrow()).payment_reference;
}

describe('payment references built by the lock', () => {
  it("are the pure functions' strings for every employee, whatever their payroll reference", async () => {
    const w = await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 240, mandates: true });
    for (const [index, reference] of ODD_PAYROLL_REFERENCES.entries()) {
      await t.db.updateTable('employments').set({ payroll_reference: reference }).where('id', '=', w.people[index]!.employment.id).execute();
    }
    await payEveryone(w, '2026-10-30', 1_234);
    const outcome = await lockPayDate(t.db, w.payroll.id, '2026-10-30');
    expect(outcome.employeeCount).toBe(240);

    const lines = await linesOf(outcome.snapshotId);
    expect(lines).toHaveLength(240);
    expect(new Set(lines.map((l) => l.payroll_reference))).toEqual(expect.objectContaining({ size: 240 }));
    for (const reference of ODD_PAYROLL_REFERENCES) expect(lines.some((l) => l.payroll_reference === reference)).toBe(true);
    for (const line of lines) {
      expect(line.payment_reference).toBe(deductionPaymentReference(line.deduction_reference_number));
      expect(isBacsReference(line.payment_reference)).toBe(true);
    }
    expect(new Set(lines.map((l) => l.payment_reference)).size).toBe(240);
    // Both sides of the 8-digit boundary were exercised.
    expect(lines.some((l) => l.payment_reference.length === 10)).toBe(true);
    expect(lines.some((l) => l.payment_reference.length === 11)).toBe(true);

    const remittance = await remittanceOf(outcome.snapshotId);
    expect(remittance).toBe(remittancePaymentReference('2026-10-30', w.payroll.remittance_reference_number));
    expect(isBacsReference(remittance)).toBe(true);

    // The file carries the same references, and the odd payroll references as the clerk's text.
    const file = await t.db.selectFrom('instruction_files').select('content').where('snapshot_id', '=', outcome.snapshotId).executeTakeFirstOrThrow();
    const { items, trailer } = readInstructionFile(file.content);
    expect(trailer).toMatchObject({ line_count: '240', total_amount: '2961.60' });
    expect(new Set(items.map((i) => i.payment_reference))).toEqual(new Set(lines.map((l) => l.payment_reference)));
    expect(items.map((i) => i.payroll_reference)).toContain("'=1+2");
    expect(items.map((i) => i.payroll_reference)).toContain('line\nbreak');
  });

  it('stay the same for an employee from one pay date to the next, and a stop carries the stopped one', async () => {
    const w = await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 6, mandates: true });
    await payEveryone(w, '2026-10-30', 1_000);
    const first = await lockPayDate(t.db, w.payroll.id, '2026-10-30');
    const before = new Map((await linesOf(first.snapshotId)).map((l) => [l.employee_id, l.payment_reference]));

    // Half of them carry on; the others' deductions stop, and an employer corrects one works number.
    const [kept, stopped] = [w.mandates.slice(0, 3), w.mandates.slice(3)];
    await t.db.updateTable('employments').set({ payroll_reference: 'CORRECTED-1' }).where('id', '=', kept[0]!.employment.id).execute();
    await payEveryone(w, '2026-11-27', 1_000, kept);
    const second = await lockPayDate(t.db, w.payroll.id, '2026-11-27');
    const after = await linesOf(second.snapshotId);
    for (const line of after) expect(line.payment_reference).toBe(before.get(line.employee_id));

    const items = await t.db
      .selectFrom('instruction_items')
      .select(['employee_id', 'action', 'payment_reference'])
      .where('instruction_file_id', '=', second.instructionFile.instructionFileId)
      .execute();
    expect(items).toHaveLength(6);
    for (const item of items) {
      expect(item.action).toBe(stopped.some((m) => m.employee.id === item.employee_id) ? 'stop' : 'continue');
      expect(item.payment_reference).toBe(before.get(item.employee_id));
    }
    expect(await remittanceOf(second.snapshotId)).toBe(remittancePaymentReference('2026-11-27', w.payroll.remittance_reference_number));
    expect(await remittanceOf(second.snapshotId)).not.toBe(await remittanceOf(first.snapshotId));
  });

  it('are unique across payrolls locked for the same pay date', async () => {
    const worlds = [
      await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 5, mandates: true }),
      await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 5, mandates: true }),
    ];
    const references: string[] = [];
    const remittances: string[] = [];
    for (const w of worlds) {
      // The same works numbers on both payrolls: nothing of the reference comes from them.
      for (const [index, person] of w.people.entries()) {
        await t.db
          .updateTable('employments')
          .set({ payroll_reference: `W${index}` })
          .where('id', '=', person.employment.id)
          .execute();
      }
      await payEveryone(w, '2026-10-30', 500);
      const outcome = await lockPayDate(t.db, w.payroll.id, '2026-10-30');
      references.push(...(await linesOf(outcome.snapshotId)).map((l) => l.payment_reference));
      remittances.push(await remittanceOf(outcome.snapshotId));
    }
    expect(new Set(references).size).toBe(10);
    expect(new Set(remittances).size).toBe(2);
  });

  it('zero-pad the payroll number to 8 digits in SQL as the pure function does, so P15 is no prefix of P150', async () => {
    // Small numbers, where padding shows (the numbering is restarted for this file's database only).
    await sql`alter table payrolls alter column remittance_reference_number restart with 15`.execute(t.db);
    const fifteen = await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 1, mandates: true });
    await sql`alter table payrolls alter column remittance_reference_number restart with 150`.execute(t.db);
    const oneHundredFifty = await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 1, mandates: true });
    expect([fifteen.payroll.remittance_reference_number, oneHundredFifty.payroll.remittance_reference_number]).toEqual([15, 150]);
    const references: string[] = [];
    for (const w of [fifteen, oneHundredFifty]) {
      await payEveryone(w, '2026-10-30', 700);
      const outcome = await lockPayDate(t.db, w.payroll.id, '2026-10-30');
      const reference = await remittanceOf(outcome.snapshotId);
      expect(reference).toBe(remittancePaymentReference('2026-10-30', w.payroll.remittance_reference_number));
      expect(reference).toHaveLength(18);
      expect(isBacsReference(reference)).toBe(true);
      references.push(reference);
    }
    expect(references).toEqual(['SDR261030P00000015', 'SDR261030P00000150']);
    expect(references[1]!.startsWith(references[0]!)).toBe(false);
  });

  it('a re-run keeps the reference the employer was sent, also one issued before references were zero-padded', async () => {
    await sql`alter table payrolls alter column remittance_reference_number restart with 17`.execute(t.db);
    const w = await buildWorld(t.db, { payDates: calendar, billers: 1, employees: 2, mandates: true });
    const rerun = () => t.db.transaction().execute((trx) => relockPayDate(trx, w.payroll.id, '2026-10-30'));
    await payEveryone(w, '2026-10-30', 700);
    const first = await lockPayDate(t.db, w.payroll.id, '2026-10-30');
    expect(await remittanceOf(first.snapshotId)).toBe('SDR261030P00000017');
    // As an installation locked before fixed width holds it: the unpadded reference the employer has.
    await t.db.updateTable('requested_payments').set({ payment_reference: 'SDR261030P17' }).where('snapshot_id', '=', first.snapshotId).execute();

    const second = await rerun();
    expect(second.snapshotVersion).toBe(2);
    expect(await remittanceOf(second.snapshotId)).toBe('SDR261030P17');
    const third = await rerun();
    expect(third.snapshotVersion).toBe(3);
    expect(await remittanceOf(third.snapshotId)).toBe('SDR261030P17');

    // A version that asked for no payment (nothing to remit) sent no reference: the one before it stands.
    await t.db.deleteFrom('requested_payments').where('snapshot_id', '=', third.snapshotId).execute();
    const fourth = await rerun();
    expect(await remittanceOf(fourth.snapshotId)).toBe('SDR261030P17');
    // Versions that sent different references (an older scheme's, then a re-run's under the next): the latest was last sent.
    await t.db
      .updateTable('requested_payments')
      .set({ payment_reference: 'SDR-0193A4F1-20261030' })
      .where('snapshot_id', 'in', [first.snapshotId, second.snapshotId])
      .execute();
    const fifth = await rerun();
    expect(await remittanceOf(fifth.snapshotId)).toBe('SDR261030P17');

    // The payroll's next pay date was never sent a reference: it gets the zero-padded one.
    await payEveryone(w, '2026-11-27', 700);
    const next = await lockPayDate(t.db, w.payroll.id, '2026-11-27');
    expect(await remittanceOf(next.snapshotId)).toBe(remittancePaymentReference('2026-11-27', 17));
    expect(await remittanceOf(next.snapshotId)).toBe('SDR261127P00000017');
    // And a re-run of it keeps that one.
    const nextAgain = await t.db.transaction().execute((trx) => relockPayDate(trx, w.payroll.id, '2026-11-27'));
    expect(await remittanceOf(nextAgain.snapshotId)).toBe('SDR261127P00000017');
  });

  it('cannot outgrow 18 characters: the numbering refuses a number past the largest', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id);
    await sql`alter table payrolls alter column remittance_reference_number restart with 99999999`.execute(t.db);
    const last = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id });
    expect(remittancePaymentReference('2026-10-30', last.remittance_reference_number)).toHaveLength(18);
    await expect(createPayroll(t.db, { providerId: provider.id, employerId: employer.id })).rejects.toThrow(/maximum value/);

    await sql`alter table employments alter column deduction_reference_number restart with 999999999999999`.execute(t.db);
    const person = await createEmployee(t.db, { providerId: provider.id, payrollId: last.id, employerId: employer.id });
    expect(deductionPaymentReference(person.employment.deduction_reference_number)).toBe('SD999999999999999');
    await expect(createEmployee(t.db, { providerId: provider.id, payrollId: last.id, employerId: employer.id })).rejects.toThrow(/maximum value/);
  });
});
