import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { StatementEntry } from '../../../src/settlement/cash/bank-statement.ts';
import { matchCreditManually, runMatching, unmatch, type MatchingPolicy } from '../../../src/settlement/cash/matching-service.ts';
import { fundLedgerEntries } from '../../../src/settlement/cash/funding-service.ts';
import { refreshRemittances } from '../../../src/settlement/cash/remittance-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, parsedStatement, reconciledPayDate as reconciledPayDateOf } from '../../support/cash.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// The cash loop on the real database: a locked pay date's remittance, credits on a statement matched to
// it, payouts funded only by what was received, manual matching, unmatching and trusted employers.

let t: TestApp;
let account: { sort_code: string; account_number: string };
beforeAll(async () => {
  t = await startTestApp();
  const created = await createCollectionAccount(t.db);
  account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
});
afterAll(async () => t?.close());

const BEFORE_DUE = '2026-11-02';
const policy = (today = BEFORE_DUE): MatchingPolicy => cashPolicy(today);
const actor = cliActor('finance-test');

const reconciledPayDate = (options: { trusted?: boolean } = {}) => reconciledPayDateOf(t.db, options);
let statementNumber = 0;
const statement = (credits: Array<Partial<StatementEntry> & { amount: number }>, id = `STMT-${++statementNumber}`) => parsedStatement(account, id, credits);

const importParsed = (read: ReturnType<typeof statement>, today = BEFORE_DUE) =>
  t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor, policy: policy(today) }));
const remittanceOf = (payrollId: string) => t.db.selectFrom('remittances').selectAll().where('payroll_id', '=', payrollId).executeTakeFirstOrThrow();
const payoutsOf = (billerClientId: string) => t.db.selectFrom('payouts').select(['id', 'amount', 'status']).where('biller_client_id', '=', billerClientId).execute();
const pay = (today = '2026-11-10') => runPayouts(t.db, { today, settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });

describe('remittances and funded payouts', () => {
  it('expects what payroll deducted, matches an exact credit, and pays out only once the money is in', async () => {
    const w = await reconciledPayDate();
    await runMatching(t.db, policy());
    await pay();
    expect(await payoutsOf(w.biller.clientId)).toEqual([]);
    const before = await remittanceOf(w.payroll.id);
    expect(before).toMatchObject({ requested: 24_800, deducted: 24_800, expected: 24_800, received: 0, status: 'expected', payment_reference: w.reference });

    const outcome = await importParsed(statement([{ amount: 24_800, remittanceInformation: w.reference }]));
    expect(outcome.matching).toMatchObject({ matches: 1, byRule: { exact: 1 } });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 24_800, status: 'received' });
    const events = await t.db
      .selectFrom('events')
      .select(eventSelection)
      .where('biller_client_id', '=', w.biller.clientId)
      .where('type', '=', 'remittance.received')
      .execute();
    expect(events).toHaveLength(1);
    expect((events[0]!.payload as { data: unknown }).data).toEqual({ id: before.id, payroll_id: w.payroll.id, pay_date: PD1, status: 'received', due_date: before.due_date });

    await pay();
    expect((await payoutsOf(w.biller.clientId)).map((p) => p.amount)).toEqual([24_800]);
  });

  it('tells each biller of its own remittances only, when one statement pays several pay dates', async () => {
    const first = await reconciledPayDate();
    const second = await reconciledPayDate();
    const outcome = await importParsed(
      statement([
        { amount: 24_800, remittanceInformation: first.reference },
        { amount: 24_800, remittanceInformation: second.reference },
      ]),
    );
    expect(outcome.matching).toMatchObject({ matches: 2 });
    for (const [w, other] of [
      [first, second],
      [second, first],
    ] as const) {
      const events = await t.db
        .selectFrom('events')
        .select(eventSelection)
        .where('biller_client_id', '=', w.biller.clientId)
        .where('type', '=', 'remittance.received')
        .execute();
      expect(events.map((e) => (e.payload as { data: { payroll_id: string } }).data.payroll_id)).toEqual([w.payroll.id]);
      expect(events.map((e) => (e.payload as { data: { payroll_id: string } }).data.payroll_id)).not.toContain(other.payroll.id);
    }
  });

  it('tells the billers of a pay date locked without its billers named (by a worker older than snapshot_billers)', async () => {
    const w = await reconciledPayDate();
    const deleted = await sql`
      delete from snapshot_billers b using deduction_snapshots s where s.id = b.snapshot_id and s.payroll_id = ${w.payroll.id}::uuid
    `.execute(t.db);
    expect(Number(deleted.numAffectedRows)).toBe(1);
    await importParsed(statement([{ amount: 24_800, remittanceInformation: w.reference }]));
    const events = await t.db
      .selectFrom('events')
      .select('biller_client_id')
      .where('type', '=', 'remittance.received')
      .where('biller_client_id', '=', w.biller.clientId)
      .execute();
    expect(events).toHaveLength(1);
  });

  it('holds back what a short remittance does not cover, oldest collection first, and pays the rest when it arrives', async () => {
    const w = await reconciledPayDate();
    await importParsed(statement([{ amount: 20_000, remittanceInformation: `payroll ${w.reference}` }]));
    // 20 000 of 24 800: no rule matches a short credit; it waits for a person.
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0, status: 'expected' });
    const credit = await t.db.selectFrom('bank_credits').select('id').where('remittance_information', '=', `payroll ${w.reference}`).executeTakeFirstOrThrow();
    await matchCreditManually(t.db, actor, policy(), {
      creditId: credit.id,
      allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: 20_000 }],
      reason: 'employer says the rest follows',
    });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 20_000, status: 'short' });

    await pay();
    // Collections in creation order: 12 550 and then 8 000 would be 20 550 > 20 000, so only the first is funded.
    expect((await payoutsOf(w.biller.clientId)).map((p) => p.amount)).toEqual([12_550]);

    // The rest arrives with the reference and exactly what is outstanding: the exact rule takes it.
    const rest = await importParsed(statement([{ amount: 4_800, remittanceInformation: w.reference }]));
    expect(rest.matching).toMatchObject({ matches: 1, byRule: { exact: 1 } });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 24_800, status: 'received' });
    await pay('2026-11-11');
    expect((await payoutsOf(w.biller.clientId)).map((p) => p.amount).sort()).toEqual([12_250, 12_550]);
  });

  it('funds a remittance received in full at once and orders only a short one, in the same run', async () => {
    const full = await reconciledPayDate();
    const short = await reconciledPayDate();
    await importParsed(statement([{ amount: 24_800, remittanceInformation: full.reference }]));
    await importParsed(statement([{ amount: 20_000, remittanceInformation: `short ${short.reference}` }]));
    const credit = await t.db.selectFrom('bank_credits').select('id').where('remittance_information', '=', `short ${short.reference}`).executeTakeFirstOrThrow();
    await matchCreditManually(t.db, actor, policy(), { creditId: credit.id, allocations: [{ payrollId: short.payroll.id, payDate: PD1, amount: 20_000 }], reason: null });

    const fundedOf = async (payrollId: string) =>
      (
        await t.db
          .selectFrom('ledger_entries as le')
          .innerJoin('collection_attempts as ca', 'ca.id', 'le.collection_attempt_id')
          .select(['le.amount', 'le.funded_at'])
          .where('ca.payroll_id', '=', payrollId)
          .orderBy('le.amount')
          .execute()
      ).map((row) => [row.amount, row.funded_at !== null]);
    const run = await pay();
    // The full one in one statement, all its collections; the short one by the documented order.
    expect(await fundedOf(full.payroll.id)).toEqual([
      [4_250, true],
      [8_000, true],
      [12_550, true],
    ]);
    // 12 550 was asked first; 12 550 and then 8 000 would be 20 550 > 20 000.
    expect(await fundedOf(short.payroll.id)).toEqual([
      [4_250, false],
      [8_000, false],
      [12_550, true],
    ]);
    expect(run.funding?.waiting).toBeGreaterThanOrEqual(1);
    expect((await payoutsOf(full.biller.clientId)).map((p) => p.amount)).toEqual([24_800]);
    expect((await payoutsOf(short.biller.clientId)).map((p) => p.amount)).toEqual([12_550]);
  });

  it('funds the oldest request first even when requests were made within one millisecond', async () => {
    const w = await reconciledPayDate();
    // Microseconds apart, the later-made request with the smaller id: JavaScript dates would tie them
    // and the id would decide; the database ranks them to the microsecond.
    const payments = await t.db.selectFrom('payment_requests').select(['id', 'amount']).where('payroll_id', '=', w.payroll.id).orderBy('id', 'desc').execute();
    // When a request was made never changes (a trigger refuses it): backdated here with triggers off, as a fixture.
    await t.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      for (const [index, payment] of payments.entries()) {
        await sql`update payment_requests set created_at = '2026-10-01T10:00:00.000Z'::timestamptz + make_interval(secs => ${(index + 1) / 1_000_000}) where id = ${payment.id}::uuid`.execute(
          trx,
        );
      }
    });
    const oldest = payments[0]!;
    const credit = await importParsed(statement([{ amount: oldest.amount, remittanceInformation: `part ${w.reference}` }]));
    expect(credit.matching?.matches).toBe(0);
    const waiting = await t.db.selectFrom('bank_credits').select('id').where('remittance_information', '=', `part ${w.reference}`).executeTakeFirstOrThrow();
    await matchCreditManually(t.db, actor, policy(), { creditId: waiting.id, allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: oldest.amount }], reason: null });
    await pay();
    const paid = await t.db
      .selectFrom('payout_items')
      .innerJoin('payouts', 'payouts.id', 'payout_items.payout_id')
      .select('payout_items.payment_request_id')
      .where('payouts.biller_client_id', '=', w.biller.clientId)
      .execute();
    expect(paid.map((item) => item.payment_request_id)).toEqual([oldest.id]);
  });

  it('refuses to unmatch money already paid out, and unfunds what is not yet paid', async () => {
    const w = await reconciledPayDate();
    await importParsed(statement([{ amount: 24_800, remittanceInformation: w.reference }]));
    const match = await t.db.selectFrom('remittance_matches').select('id').where('payroll_id', '=', w.payroll.id).executeTakeFirstOrThrow();

    // Funded but not yet paid: the unmatch takes the funding back, and the next run pays nothing.
    await fundLedgerEntries(t.db, { cutoff: '2026-11-06', defaultFunding: 'received' });
    const funded = () =>
      t.db
        .selectFrom('ledger_entries as le')
        .innerJoin('collection_attempts as ca', 'ca.id', 'le.collection_attempt_id')
        .select('le.funded_at')
        .where('ca.payroll_id', '=', w.payroll.id)
        .execute();
    expect((await funded()).every((row) => row.funded_at !== null)).toBe(true);
    const undone = await unmatch(t.db, actor, policy(), { matchId: match.id, reason: 'credit was for another payroll' });
    expect(undone.entriesUnfunded).toBe(3);
    expect((await funded()).every((row) => row.funded_at === null)).toBe(true);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0 });
    await pay();
    expect(await payoutsOf(w.biller.clientId)).toEqual([]);

    // Matched again and paid out: now the unmatch is refused, and nothing changes.
    const credit = await t.db.selectFrom('remittance_matches').select('bank_credit_id').where('id', '=', match.id).executeTakeFirstOrThrow();
    const [again] = await matchCreditManually(t.db, actor, policy(), {
      creditId: credit.bank_credit_id,
      allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: 24_800 }],
      reason: 'it was ours after all',
    });
    await pay();
    expect((await payoutsOf(w.biller.clientId)).map((p) => p.amount)).toEqual([24_800]);
    await expect(unmatch(t.db, actor, policy(), { matchId: again!.id, reason: 'second thoughts' })).rejects.toMatchObject({ code: 'unmatch-would-unfund-payouts' });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 24_800 });
    const audit = await t.db.selectFrom('audit_log').select(['action', 'reason']).where('resource_id', '=', match.id).execute();
    expect(audit).toEqual([{ action: 'remittance_match.unmatched', reason: 'credit was for another payroll' }]);
  });

  it("pays a trusted employer's collections on payroll's report, without a remittance", async () => {
    const w = await reconciledPayDate({ trusted: true });
    await pay();
    expect((await payoutsOf(w.biller.clientId)).map((p) => p.amount)).toEqual([24_800]);
  });

  it('marks a remittance late after its due date, and tells its billers once', async () => {
    const w = await reconciledPayDate();
    const late = '2026-11-20';
    await runMatching(t.db, policy(late));
    await runMatching(t.db, policy(late));
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ status: 'late', received: 0 });
    const overdue = await t.db.selectFrom('events').select('type').where('biller_client_id', '=', w.biller.clientId).where('type', '=', 'remittance.overdue').execute();
    expect(overdue).toHaveLength(1);
  });

  it('imports the same statement once, refuses another with the same id, and keeps a credit two statements report once', async () => {
    const w = await reconciledPayDate();
    const first = statement([{ amount: 24_800, remittanceInformation: w.reference, bankReference: `SHARED-${w.reference}` }], `DAY-${w.reference}`);
    expect((await importParsed(first)).replayed).toBe(false);
    expect((await importParsed(first)).replayed).toBe(true);
    const other = statement([{ amount: 1, remittanceInformation: 'x' }], `DAY-${w.reference}`);
    await expect(importParsed(other)).rejects.toMatchObject({ code: 'statement-conflict' });
    const endOfDay = statement([{ amount: 24_800, remittanceInformation: w.reference, bankReference: `SHARED-${w.reference}` }], `EOD-${w.reference}`);
    const outcome = await importParsed(endOfDay);
    expect(outcome.newCredits).toBe(0);
    expect(outcome.statement.credits_already_imported).toBe(1);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 24_800 });
  });

  it('stores new credits with what they matched, raises a waiting credit matched with them, and leaves the rest unmatched', async () => {
    const w = await reconciledPayDate();
    const first = await importParsed(statement([{ amount: 10_000, remittanceInformation: w.reference, bankReference: `PART1-${w.reference}` }]));
    expect(first.matching).toMatchObject({ matches: 0, unmatchedCredits: 1 });

    const second = await importParsed(
      statement([
        { amount: 14_800, remittanceInformation: w.reference, bankReference: `PART2-${w.reference}` },
        { amount: 500, remittanceInformation: 'NOT A REFERENCE', bankReference: `STRAY-${w.reference}` },
      ]),
    );
    // The waiting credit is counted among the unmatched it looked at; only the stray one is left.
    expect(second.matching).toMatchObject({ matches: 2, unmatchedCredits: 1, byRule: { one_to_many: 2 } });
    const credits = await t.db
      .selectFrom('bank_credits')
      .select(['bank_reference', 'amount', 'matched_amount'])
      .where('bank_reference', 'in', [`PART1-${w.reference}`, `PART2-${w.reference}`, `STRAY-${w.reference}`])
      .orderBy('bank_reference')
      .execute();
    expect(credits).toEqual([
      { bank_reference: `PART1-${w.reference}`, amount: 10_000, matched_amount: 10_000 },
      { bank_reference: `PART2-${w.reference}`, amount: 14_800, matched_amount: 14_800 },
      { bank_reference: `STRAY-${w.reference}`, amount: 500, matched_amount: 0 },
    ]);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 24_800, status: 'received' });
  });
});

describe('refreshRemittances', () => {
  it('follows a re-run and a new report of the pay date', async () => {
    const w = await reconciledPayDate();
    await w.push(w.people[2]!.employee.id, PD1, 4_000);
    await t.db.transaction().execute((trx) => refreshRemittances(trx, policy()));
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ deducted: 24_550, expected: 24_550, requested: 24_800 });
  });
});
