import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { DEFAULT_REPORTED_LIMITS } from '../../../src/cycle/deduction-records/reported-limits.ts';
import { findBrokenRecordLinks } from '../../../src/cycle/deduction-records/record-links-repository.ts';
import {
  deductionReturnFileOf,
  DeductionReturnRejected,
  importDeductionReturn,
  type DeductionReturnImportRequest,
} from '../../../src/cycle/deduction-returns/return-service.ts';
import { reconcilePayDate } from '../../../src/cycle/reconciliation/reconciliation-service.ts';
import { lockPayDate, relockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { readInstructionFile } from '../../support/instruction-file.ts';
import { createPaymentRequestRow, createProviderClient } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { filledIn, lockedReturnWorld, NEXT_PAY_DATE, PAY_DATE, RECONCILED_ON, type ReturnWorld } from './return-world.ts';

// Importing a deduction return file (src/cycle/deduction-returns/return-service.ts): the pay date's
// confirmation, exactly as the provider's POST makes it, from a file a payroll clerk filled in.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const operator = { kind: 'operator', actor: cliActor('olive') } as const;

async function importFile(world: ReturnWorld, content: Buffer, options: Partial<DeductionReturnImportRequest> = {}) {
  return t.db.transaction().execute((trx) =>
    importDeductionReturn(trx, {
      payrollId: world.payrollId,
      payDate: PAY_DATE,
      content,
      dryRun: false,
      partial: false,
      submitter: operator,
      limits: DEFAULT_REPORTED_LIMITS,
      ...options,
    }),
  );
}

async function refusal(promise: Promise<unknown>): Promise<DeductionReturnRejected> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof DeductionReturnRejected)) throw new Error(`expected DeductionReturnRejected, got ${String(error)}`);
  return error;
}

const prefilled = async (world: ReturnWorld) => (await deductionReturnFileOf(t.db, world.payrollId, PAY_DATE)).content;

async function latestRecords(world: ReturnWorld) {
  const rows = await t.db
    .selectFrom('deduction_records')
    .select(['employee_id', 'version', 'deduction_amount', 'leaver', 'source', 'pay_period', 'received_by_client_id', 'confirmation_id'])
    .where('payroll_id', '=', world.payrollId)
    .orderBy('version', 'desc')
    .execute();
  return world.people.map((person) => rows.find((row) => row.employee_id === person.employeeId) ?? null);
}

async function writtenCounts(world: ReturnWorld) {
  const count = async (table: 'deduction_records' | 'confirmations' | 'deduction_return_imports') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('payroll_id', '=', world.payrollId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const audit = Number(
    (
      await t.db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('resource_id', '=', world.payrollId)
        .executeTakeFirstOrThrow()
    ).n,
  );
  const snapshot = await t.db.selectFrom('deduction_snapshots').select('status').where('id', '=', world.snapshotId).executeTakeFirstOrThrow();
  return {
    records: await count('deduction_records'),
    confirmations: await count('confirmations'),
    imports: await count('deduction_return_imports'),
    audit,
    snapshot: snapshot.status,
  };
}

describe('the pre-filled return file', () => {
  it('is the instruction file turned round: its items with what was asked beside amount_deducted, named after it, the same bytes every time', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001]);
    const instruction = await t.db.selectFrom('instruction_files').selectAll().where('payroll_id', '=', world.payrollId).executeTakeFirstOrThrow();
    const download = await deductionReturnFileOf(t.db, world.payrollId, PAY_DATE);
    expect(download.file_name).toBe(instruction.file_name.replace(/\.csv$/, '_deduction-return.csv'));
    expect((await deductionReturnFileOf(t.db, world.payrollId, PAY_DATE, 1)).content.equals(download.content)).toBe(true);
    const stored = readInstructionFile(instruction.content);
    const returned = readInstructionFile(download.content);
    expect(returned.header).toMatchObject({ pay_date: PAY_DATE, payroll_external_id: world.payrollExternalId, file_version: '1', currency: 'GBP' });
    expect(returned.items.map((row) => [row.payroll_reference, row.payment_reference, row.amount_requested, row.amount_deducted, row.leaver])).toEqual(
      stored.items.map((row) => [row.payroll_reference, row.payment_reference, row.amount, row.amount, 'no']),
    );
    expect(returned.trailer).toMatchObject({ line_count: '2', total_requested: '155.51', total_deducted: '155.51' });
    await expect(deductionReturnFileOf(t.db, world.payrollId, PAY_DATE, 2)).rejects.toThrow(/Instruction file version 2/);
  });
});

describe('importDeductionReturn', () => {
  it('confirms the pay date from the file as it came (in full), recorded as the operator who imported it, and audited', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001]);
    const report = await importFile(world, await prefilled(world), { reason: 'Northwind emailed it' });
    expect(report).toMatchObject({
      outcome: 'confirmed',
      applied: true,
      rows: 2,
      confirmed: 2,
      in_full: 2,
      partly: 0,
      not_deducted: 0,
      leavers: 0,
      rejected: 0,
      requested_total: 155.51,
      deducted_total: 155.51,
      currency: 'GBP',
      pay_period: '8-2026',
      file_version: 1,
      errors: [],
      previous_import: null,
    });
    const confirmation = await t.db.selectFrom('confirmations').selectAll().where('id', '=', report.confirmation_id!).executeTakeFirstOrThrow();
    expect(confirmation).toMatchObject({ submitted_by_client_id: null, submitted_by: 'olive', total_amount: 15_551, employee_count: 2, deduction_data_id: world.snapshotId });
    expect((await latestRecords(world)).map((row) => row && [row.version, row.deduction_amount, row.leaver, row.source, row.received_by_client_id])).toEqual([
      [1, 12_550, false, 'confirmation', null],
      [1, 3_001, false, 'confirmation', null],
    ]);
    expect(await writtenCounts(world)).toMatchObject({ confirmations: 1, imports: 1, audit: 1, snapshot: 'confirmed' });
    const imported = await t.db.selectFrom('deduction_return_imports').selectAll().where('id', '=', report.import_id!).executeTakeFirstOrThrow();
    expect(imported).toMatchObject({ confirmation_id: report.confirmation_id, file_sha256: report.file_sha256, rows: 2, confirmed: 2, rejected: 0, imported_by: 'olive' });
    const audit = await t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', world.payrollId).executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ action: 'deduction_return.imported', reason: 'Northwind emailed it' });
    // An operator's confirmation has no client, and its records hold together all the same.
    expect(await findBrokenRecordLinks(t.db, world.payrollId)).toEqual([]);
  });

  it('takes a partial deduction and a leaver as payroll wrote them, and reconciliation carries what was not deducted', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001, 5_000]);
    const [full, partly, leaver] = world.people as [ReturnWorld['people'][number], ReturnWorld['people'][number], ReturnWorld['people'][number]];
    const file = filledIn(await prefilled(world), { [partly.payrollReference]: { deducted: '20.00' }, [leaver.payrollReference]: { deducted: '0.00', leaver: 'Y' } });
    const report = await importFile(world, file);
    expect(report).toMatchObject({ outcome: 'confirmed', confirmed: 3, in_full: 1, partly: 1, not_deducted: 1, leavers: 1, requested_total: 205.51, deducted_total: 145.5 });
    expect((await latestRecords(world)).map((row) => row && [row.deduction_amount, row.leaver])).toEqual([
      [12_550, false],
      [2_000, false],
      [0, true],
    ]);
    await reconcilePayDate(t.db, world.payrollId, PAY_DATE, { today: RECONCILED_ON });
    const attempts = await t.db.selectFrom('collection_attempts').selectAll().where('payroll_id', '=', world.payrollId).execute();
    const attemptOf = (paymentId: string) => attempts.find((attempt) => attempt.payment_request_id === paymentId);
    expect(attemptOf(full.paymentId)).toMatchObject({ requested_amount: 12_550, deducted_amount: 12_550, collected_amount: 12_550, shortfall_amount: 0 });
    expect(attemptOf(partly.paymentId)).toMatchObject({ requested_amount: 3_001, deducted_amount: 2_000, collected_amount: 2_000, shortfall_amount: 1_001 });
    expect(attemptOf(leaver.paymentId)).toMatchObject({ requested_amount: 5_000, deducted_amount: 0, collected_amount: 0, shortfall_amount: 5_000 });
  });

  it('with --dry-run reports what would be confirmed, or why the file would be refused, and writes nothing', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001]);
    const before = await writtenCounts(world);
    const file = filledIn(await prefilled(world), { [world.people[1]!.payrollReference]: { deducted: '10.00' } });
    const report = await importFile(world, file, { dryRun: true });
    expect(report).toMatchObject({
      dry_run: true,
      outcome: 'would_confirm',
      applied: false,
      confirmed: 2,
      in_full: 1,
      partly: 1,
      deducted_total: 135.5,
      confirmation_id: null,
      import_id: null,
    });
    const bad = filledIn(await prefilled(world), { [world.people[1]!.payrollReference]: { deducted: '25,00' } }, { keepTrailer: true });
    const refused = await importFile(world, bad, { dryRun: true });
    expect(refused).toMatchObject({ dry_run: true, outcome: 'refused', applied: false, rejected: 1, error_count: 1 });
    expect(refused.errors).toEqual([
      { line: 4, column: 'amount_deducted', reason: 'has a comma that does not separate thousands (25,00): write the decimal point as a point, 25.50' },
    ]);
    expect(await writtenCounts(world)).toEqual(before);
  });

  it('refuses a file with bad items whole, naming every one with its line and column; with partial it confirms the good ones', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001, 5_000]);
    const [first, second, third] = world.people as [ReturnWorld['people'][number], ReturnWorld['people'][number], ReturnWorld['people'][number]];
    const file = filledIn(
      await prefilled(world),
      { [second.payrollReference]: { deducted: '-1.00' }, [third.payrollReference]: { leaver: 'perhaps' } },
      { keepTrailer: true },
    );
    const before = await writtenCounts(world);
    const rejected = await refusal(importFile(world, file));
    expect(rejected.code).toBe('deduction-return-rejected');
    expect(rejected.detail).toBe('2 of 3 items are bad (2 errors); nothing was confirmed. Fix them, or ask for partial application to confirm the good items');
    const lineOf = (person: ReturnWorld['people'][number]) => 3 + [...world.people].sort((a, b) => (a.payrollReference < b.payrollReference ? -1 : 1)).indexOf(person);
    // In line order: which of the two comes first depends on the generated works numbers.
    const expected = [
      { line: lineOf(second), column: 'amount_deducted', reason: 'must not be negative, got -1.00' },
      { line: lineOf(third), column: 'leaver', reason: 'must be yes or no (or y, n, true, false), got perhaps' },
    ].sort((a, b) => a.line - b.line);
    expect(rejected.report.errors).toEqual(expected);
    expect(rejected.errors).toEqual(expected.map((e) => ({ pointer: `/lines/${e.line}/${e.column}`, detail: e.reason })));
    expect(await writtenCounts(world)).toEqual(before);

    const partial = await importFile(world, file, { partial: true });
    expect(partial).toMatchObject({ outcome: 'confirmed', partial: true, rows: 3, confirmed: 1, rejected: 2, error_count: 2, deducted_total: 125.5 });
    expect((await latestRecords(world)).map((row) => row?.deduction_amount ?? null)).toEqual([12_550, null, null]);
    expect(first.amount).toBe(12_550);

    // A trailer that does not add up refuses the file even partially: it may be cut off or half edited.
    const halfEdited = filledIn(await prefilled(world), { [second.payrollReference]: { deducted: '1.00' } }, { keepTrailer: true });
    const whole = await refusal(importFile(world, halfEdited, { partial: true }));
    expect(whole.detail).toBe('The file is refused whole: 1 error(s) in its columns, header, trailer or record order (1 in all); nothing was confirmed');
    expect(whole.report.errors).toEqual([
      { line: 6, column: 'total_deducted', reason: "is £205.51, but the items' amount_deducted add up to £176.50: correct the total (or the items)" },
    ]);
  });

  it('changes nothing when the same file is imported again (and says it was imported before), nor for the same figures saved differently', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001]);
    const file = filledIn(await prefilled(world), { [world.people[0]!.payrollReference]: { deducted: '100.00', leaver: 'yes' } });
    const first = await importFile(world, file);
    expect(first.outcome).toBe('confirmed');
    const after = await writtenCounts(world);
    const again = await importFile(world, file);
    expect(again).toMatchObject({
      outcome: 'already_reported',
      applied: false,
      confirmation_id: null,
      import_id: null,
      previous_import: { id: first.import_id, imported_by: 'olive', confirmation_id: first.confirmation_id },
    });
    const resaved = Buffer.from(`\ufeff${file.toString('utf8').replaceAll('\r\n', '\n').replace('100.00', '100')}`);
    const same = await importFile(world, resaved);
    expect(same).toMatchObject({ outcome: 'already_reported', previous_import: null });
    expect(await writtenCounts(world)).toEqual(after);
    expect((await latestRecords(world)).map((row) => row?.version)).toEqual([1, 1]);

    // A corrected file is a new confirmation: the next version of each employee's record.
    const corrected = await importFile(world, filledIn(await prefilled(world), { [world.people[0]!.payrollReference]: { deducted: '125.50' } }));
    expect(corrected.outcome).toBe('confirmed');
    expect((await latestRecords(world)).map((row) => row && [row.version, row.deduction_amount, row.leaver])).toEqual([
      [2, 12_550, false],
      [2, 3_001, false],
    ]);
  });

  it('answers the current instruction file only: a re-run replaces version 1, whose return file is then refused', async () => {
    const world = await lockedReturnWorld(t.db, [12_550]);
    const versionOne = await prefilled(world);
    await t.db.transaction().execute((trx) => relockPayDate(trx, world.payrollId, PAY_DATE));
    const refused = await refusal(importFile(world, versionOne, { partial: true }));
    expect(refused.report.errors).toEqual([
      { line: 2, column: 'file_version', reason: 'answers instruction file version 1, which a re-run replaced with version 2: fill in the return file of version 2' },
    ]);
    const versionTwo = await prefilled(world);
    expect(await importFile(world, versionTwo)).toMatchObject({ outcome: 'confirmed', file_version: 2 });
  });

  it('leaves a stopped deduction that reports nothing out of the confirmation, as the deduction data leaves it out', async () => {
    const world = await lockedReturnWorld(t.db, [12_550, 3_001]);
    const [asked, stopped] = world.people as [ReturnWorld['people'][number], ReturnWorld['people'][number]];
    // The next pay date asks the first employee only: the second's deduction stops.
    const earlier = await t.db.selectFrom('payment_requests').selectAll().where('id', '=', asked.paymentId).executeTakeFirstOrThrow();
    await createPaymentRequestRow(t.db, { mandate: { ...earlier, id: earlier.mandate_id }, amount: 4_000, targetPayDate: NEXT_PAY_DATE });
    await lockPayDate(t.db, world.payrollId, NEXT_PAY_DATE);
    const file = (await deductionReturnFileOf(t.db, world.payrollId, NEXT_PAY_DATE)).content;
    expect(readInstructionFile(file).items.map((row) => [row.payroll_reference, row.action, row.amount_requested, row.amount_deducted])).toEqual([
      [asked.payrollReference, 'amend', '40.00', '40.00'],
      [stopped.payrollReference, 'stop', '0.00', '0.00'],
    ]);
    const report = await importFile(world, file, { payDate: NEXT_PAY_DATE });
    expect(report).toMatchObject({ outcome: 'confirmed', rows: 2, confirmed: 1, stops_not_deducted: 1 });
    const confirmation = await t.db.selectFrom('confirmations').selectAll().where('id', '=', report.confirmation_id!).executeTakeFirstOrThrow();
    expect(confirmation.employee_count).toBe(1);
    // Payroll forgot to stop it: then the stopped item reports what was taken, and reconciliation holds it.
    const forgot = filledIn(file, { [stopped.payrollReference]: { deducted: '30.01' } });
    const held = await importFile(world, forgot, { payDate: NEXT_PAY_DATE });
    expect(held).toMatchObject({ outcome: 'confirmed', confirmed: 2, stops_not_deducted: 0, over_deducted: 1 });
    expect(held.warnings).toEqual([
      { line: 4, column: 'amount_deducted', reason: '£30.01 deducted where the instruction asked nothing (stop): reconciliation holds it, to be returned' },
    ]);
  });

  it('refuses a pay date that is not locked yet, an unknown payroll, and another provider’s payroll through its client', async () => {
    const world = await lockedReturnWorld(t.db, [12_550], { lock: false });
    await expect(importFile(world, Buffer.from('x'))).rejects.toMatchObject({ code: 'deduction-data-not-final' });
    await expect(importFile({ ...world, payrollId: '0193a4f1-0e6d-7a42-9c13-5d7e9f1a2b04' }, Buffer.from('x'))).rejects.toMatchObject({ code: 'not-found' });
    const locked = await lockedReturnWorld(t.db, [12_550]);
    const stranger = await createProviderClient(t.db);
    const caller = {
      clientId: stranger.clientId,
      role: 'payroll_provider',
      scopes: [],
      payrollProviderId: (await t.db.selectFrom('clients').select('payroll_provider_id').where('id', '=', stranger.clientId).executeTakeFirstOrThrow()).payroll_provider_id,
    } as const;
    await expect(importFile(locked, await prefilled(locked), { submitter: { kind: 'provider', caller } })).rejects.toMatchObject({ code: 'not-found' });
  });
});

describe('a return file and the API confirmation it stands for', () => {
  it('make the same records, confirmation, snapshot status, collection attempts, payment statuses, ledger entries, exceptions and events', async () => {
    const amounts = [12_550, 3_001, 5_000, 2_000];
    const provider = await createProviderClient(t.db);
    const providerId = (await t.db.selectFrom('clients').select('payroll_provider_id').where('id', '=', provider.clientId).executeTakeFirstOrThrow()).payroll_provider_id!;
    const byApi = await lockedReturnWorld(t.db, amounts, { providerId });
    const byFile = await lockedReturnWorld(t.db, amounts, { providerId });
    // In full, partly, a leaver with nothing deducted, more than asked.
    const deducted = [125.5, 20, 0, 30];
    const leavers = [false, false, true, false];

    const headers = await authHeaders(t.app, provider);
    const response = await injectJson(t.app, {
      method: 'POST',
      url: `/deductions/${byApi.payrollId}/confirmation`,
      headers,
      body: {
        confirmation: {
          deduction_data_id: byApi.snapshotId,
          pay_period: '8-2026',
          currency: 'GBP',
          total_amount: 175.5,
          deductions: byApi.people.map((person, index) => ({ employee_id: person.employeeId, deducted_amount: deducted[index], leaver: leavers[index] })),
        },
      },
    });
    expect(response.statusCode, response.body).toBe(201);

    const file = filledIn(
      await prefilled(byFile),
      Object.fromEntries(byFile.people.map((person, index) => [person.payrollReference, { deducted: deducted[index]!.toFixed(2), leaver: leavers[index] ? 'yes' : 'no' }])),
    );
    const report = await importFile(byFile, file);
    expect(report).toMatchObject({ outcome: 'confirmed', confirmed: 4, in_full: 1, partly: 1, not_deducted: 1, over_deducted: 1, leavers: 1, deducted_total: 175.5 });
    expect(report.warnings).toHaveLength(1);

    for (const world of [byApi, byFile]) await reconcilePayDate(t.db, world.payrollId, PAY_DATE, { today: RECONCILED_ON });

    /** Everything the confirmation led to, with each row named by its person's position rather than its ids. */
    async function outcomes(world: ReturnWorld) {
      const who = (employeeId: string | null) => world.people.findIndex((person) => person.employeeId === employeeId);
      const payment = (paymentId: string) => world.people.findIndex((person) => person.paymentId === paymentId);
      const paymentIds = world.people.map((person) => person.paymentId);
      const records = await t.db
        .selectFrom('deduction_records')
        .select(['employee_id', 'version', 'deduction_amount', 'leaver', 'source', 'pay_period', 'pay_date', 'content_hash', 'currency', 'requested_payments'])
        .where('payroll_id', '=', world.payrollId)
        .execute();
      const confirmations = await t.db
        .selectFrom('confirmations')
        .select(['pay_date', 'total_amount', 'employee_count', 'currency'])
        .where('payroll_id', '=', world.payrollId)
        .execute();
      const snapshot = await t.db.selectFrom('deduction_snapshots').select('status').where('id', '=', world.snapshotId).executeTakeFirstOrThrow();
      const attempts = await t.db
        .selectFrom('collection_attempts')
        .select([
          'payment_request_id',
          'attempt_number',
          'requested_amount',
          'deducted_amount',
          'collected_amount',
          'shortfall_amount',
          'carried_to_pay_date',
          'outcome',
          'revision',
        ])
        .where('payroll_id', '=', world.payrollId)
        .execute();
      const payments = await t.db
        .selectFrom('payment_requests')
        .select(['id', 'status', 'collected_amount', 'target_pay_date', 'version'])
        .where('id', 'in', paymentIds)
        .execute();
      const ledger = await t.db
        .selectFrom('ledger_entries')
        .select(['payment_request_id', 'kind', 'amount', 'revision', 'pay_date'])
        .where('payment_request_id', 'in', paymentIds)
        .execute();
      const exceptions = await t.db
        .selectFrom('reconciliation_exceptions')
        .select(['employee_id', 'kind', 'amount', 'record_version', 'superseded_at'])
        .where('payroll_id', '=', world.payrollId)
        .execute();
      const events = await t.db
        .selectFrom('events')
        .select(['type', 'resource_id', 'payment_status', 'payment_collected_amount', 'payment_attempts', 'payment_target_pay_date', 'payment_version'])
        .where('resource_id', 'in', paymentIds)
        .orderBy('sequence')
        .execute();
      const byPerson = <T>(rows: T[], key: (row: T) => number) => rows.map((row) => ({ ...row, person: key(row) })).sort((a, b) => a.person - b.person);
      return {
        records: byPerson(records, (row) => who(row.employee_id)).map(({ employee_id: _e, content_hash: _h, ...row }) => row),
        confirmations,
        snapshot,
        attempts: byPerson(attempts, (row) => payment(row.payment_request_id)).map(({ payment_request_id: _p, ...row }) => row),
        payments: byPerson(payments, (row) => payment(row.id)).map(({ id: _i, ...row }) => row),
        ledger: byPerson(ledger, (row) => payment(row.payment_request_id)).map(({ payment_request_id: _p, ...row }) => row),
        exceptions: byPerson(exceptions, (row) => who(row.employee_id)).map(({ employee_id: _e, ...row }) => row),
        events: events.map(({ resource_id: id, ...row }) => ({ ...row, person: payment(id) })),
      };
    }
    const api = await outcomes(byApi);
    const returned = await outcomes(byFile);
    expect(returned).toEqual(api);
    // And it is not a comparison of nothing: the confirmation did what it should.
    expect(api.records.map((row) => [row.deduction_amount, row.leaver, row.source])).toEqual([
      [12_550, false, 'confirmation'],
      [2_000, false, 'confirmation'],
      [0, true, 'confirmation'],
      [3_000, false, 'confirmation'],
    ]);
    expect(api.snapshot.status).toBe('reconciled');
    expect(api.exceptions).toEqual([expect.objectContaining({ kind: 'over_deduction', amount: 1_000, person: 3 })]);
    expect(api.ledger.length).toBeGreaterThanOrEqual(3);
    expect(api.events.length).toBeGreaterThanOrEqual(4);
  });
});
