import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { StatementEntry } from '../../../src/settlement/cash/bank-statement.ts';
import { restoreCredit, setCreditAside } from '../../../src/settlement/cash/credit-decision-service.ts';
import { matchCreditManually, runMatching, unmatch, type MatchingPolicy } from '../../../src/settlement/cash/matching-service.ts';
import { resolveReversal } from '../../../src/settlement/cash/reversal-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { explainThreeWay, threeWayReport } from '../../../src/settlement/reports/three-way-report.ts';
import { PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, parsedStatement, reconciledPayDate as reconciledPayDateOf, statementEntry, statementFile } from '../../support/cash.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// What real banks send, on the real database: reversals and returns that take money back (before and
// after it was paid out), a person's decisions that no rule undoes, and one credit reported by several
// files (a camt.054 notice and its camt.053 booking, a batch and its lump sum, references that move
// between NtryRef and AcctSvcrRef, NtryRef reused from day to day, a conflicting amount).

let t: TestApp;
let account: { sort_code: string; account_number: string };
beforeAll(async () => {
  t = await startTestApp();
  const created = await createCollectionAccount(t.db);
  account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
});
afterAll(async () => t?.close());

const TODAY = '2026-11-02';
const policy = (today = TODAY): MatchingPolicy => cashPolicy(today);
const actor = cliActor('finance-test');
const EXPECTED = 24_800;

let statementNumber = 0;
const nextId = () => `REAL-${++statementNumber}`;
type Entry = Partial<StatementEntry> & { amount: number };
const record = (parsed: ReturnType<typeof parsedStatement>['parsed'], today = TODAY) =>
  t.db.transaction().execute((trx) => recordStatement(trx, { parsed, digest: Buffer.alloc(32, statementNumber), fileName: 'statement.xml', actor, policy: policy(today) }));
const importEntries = (entries: Entry[], options: { format?: 'camt.053' | 'camt.054' | 'csv'; id?: string; today?: string } = {}) =>
  record(parsedStatement(account, options.id ?? nextId(), entries, { format: options.format ?? 'camt.053' }).parsed, options.today);

const remittanceOf = (payrollId: string) => t.db.selectFrom('remittances').selectAll().where('payroll_id', '=', payrollId).executeTakeFirstOrThrow();
const creditsWith = (reference: string) => t.db.selectFrom('bank_credits').selectAll().where('remittance_information', '=', reference).orderBy('created_at').execute();
const paidOutTo = (billerClientId: string) => t.db.selectFrom('payouts').select(['amount', 'status']).where('biller_client_id', '=', billerClientId).execute();
const pay = (today = '2026-11-10') => runPayouts(t.db, { today, settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });
const reversalOf = (amount: number, fields: Partial<StatementEntry> = {}): Entry => ({ amount, direction: 'debit', reversal: true, bookingDate: '2026-10-31', ...fields });

describe('reversals and returns take money back', () => {
  it('a reversal before the payout un-funds the remittance: the biller is never paid money the bank took back', async () => {
    const w = await reconciledPayDate();
    await importEntries([{ amount: EXPECTED, remittanceInformation: w.reference, accountServicerReference: 'CR-0001-REAL' }]);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED, status: 'received' });

    const outcome = await importEntries([reversalOf(EXPECTED, { accountServicerReference: 'CR-0001-REAL', bankReference: 'RV-1' })]);
    expect(outcome.reversals).toEqual({ results: [expect.objectContaining({ creditId: expect.any(String) })], applied: 1, unresolved: 0, shortfall: 0 });
    expect(outcome.statements[0]!.entries).toEqual([expect.objectContaining({ outcome: 'reversal', direction: 'debit', amount: EXPECTED })]);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0, shortfall: 0, status: 'expected' });
    const [credit] = await creditsWith(w.reference);
    expect(credit).toMatchObject({ state: 'reversed', matched_amount: 0 });

    await pay();
    expect(await paidOutTo(w.biller.clientId)).toEqual([]);
    const events = await t.db.selectFrom('events').select('type').where('biller_client_id', '=', w.biller.clientId).where('type', '=', 'remittance.reversed').execute();
    expect(events).toHaveLength(1);
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['action', 'resource_id'])
      .where('action', '=', 'bank_credit.reversed')
      .where('resource_id', '=', credit!.id)
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('a reversal after the payout records a shortfall, shown in the status and the three-way report; money that arrives again pays it back', async () => {
    const w = await reconciledPayDate();
    await importEntries([{ amount: EXPECTED, remittanceInformation: w.reference, accountServicerReference: 'CR-0002-REAL' }]);
    await pay();
    expect((await paidOutTo(w.biller.clientId)).map((payout) => payout.amount)).toEqual([EXPECTED]);

    const outcome = await importEntries([reversalOf(EXPECTED, { accountServicerReference: 'CR-0002-REAL', bankReference: 'RV-2', returnReason: 'AC04' })]);
    expect(outcome.reversals).toMatchObject({ applied: 1, shortfall: EXPECTED });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0, shortfall: EXPECTED, status: 'shortfall' });
    const [row] = (await threeWayReport(t.db, PD1)).filter((r) => r.payroll_id === w.payroll.id);
    expect(row).toMatchObject({ received: 0, paid_out: EXPECTED, shortfall: EXPECTED, remittance_status: 'shortfall' });
    expect(explainThreeWay(row!)).toBe('Nothing received any more; the bank took back money already paid out: £248.00 owed back (shortfall).');

    // Nothing more is paid out of it, and no payout turns negative.
    await pay('2026-11-11');
    expect((await paidOutTo(w.biller.clientId)).map((payout) => payout.amount)).toEqual([EXPECTED]);

    // The employer sends the money again: it pays the shortfall back first.
    await importEntries([{ amount: EXPECTED, remittanceInformation: w.reference, accountServicerReference: 'CR-0003-REAL', bookingDate: '2026-11-01' }]);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED, shortfall: 0, status: 'received' });
  });

  it('a reversal a camt.054 notified and the camt.053 books again takes its credit back once, never a second credit of that amount', async () => {
    const w = await reconciledPayDate();
    const twin = await reconciledPayDate();
    await importEntries([
      { amount: EXPECTED, remittanceInformation: w.reference, accountServicerReference: 'CR-0004-REAL' },
      { amount: EXPECTED, remittanceInformation: twin.reference, accountServicerReference: 'CR-0005-REAL' },
    ]);
    const reversal = reversalOf(EXPECTED, { transactionReferences: ['CR-0004-REAL'], accountServicerReference: 'RVSL-7781-REAL', bankReference: 'RVSL-7781-REAL' });
    const notice = await importEntries([reversal], { format: 'camt.054' });
    expect(notice.reversals).toMatchObject({ applied: 1 });
    const booked = await importEntries([{ ...reversal, transactionReferences: [] }], { format: 'camt.053' });
    expect(booked.statements[0]!.entries).toEqual([expect.objectContaining({ outcome: 'already_known' })]);
    expect(booked.reversals).toMatchObject({ applied: 0, unresolved: 0 });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0 });
    expect(await remittanceOf(twin.payroll.id)).toMatchObject({ received: EXPECTED });
  });

  it('a returned payment of ours (a credit with RvslInd) is held for a person, never matched as a remittance', async () => {
    const w = await reconciledPayDate();
    const outcome = await importEntries([{ amount: EXPECTED, remittanceInformation: w.reference, reversal: true }]);
    expect(outcome.statements[0]!.entries).toEqual([expect.objectContaining({ outcome: 'held' })]);
    expect(outcome.matching).toMatchObject({ matches: 0 });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0 });
    expect((await creditsWith(w.reference))[0]).toMatchObject({ state: 'held' });
  });

  it('a reversal no rule can place waits for a person, who names the credit', async () => {
    const w = await reconciledPayDate();
    const twin = await reconciledPayDate();
    await importEntries([
      { amount: EXPECTED, remittanceInformation: w.reference },
      { amount: EXPECTED, remittanceInformation: twin.reference },
    ]);
    const outcome = await importEntries([reversalOf(EXPECTED, { bankReference: 'RV-3' })]);
    expect(outcome.reversals).toMatchObject({ applied: 0, unresolved: 1 });
    const entry = await t.db.selectFrom('bank_statement_entries').selectAll().where('bank_statement_id', '=', outcome.statement.id).executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ outcome: 'unresolved_reversal', bank_credit_id: null });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED });

    const [credit] = await creditsWith(w.reference);
    await expect(resolveReversal(t.db, actor, policy(), { entryId: entry.id, creditId: credit!.id, reason: '  ' })).rejects.toMatchObject({ code: 'reversal-invalid' });
    const placed = await resolveReversal(t.db, actor, policy(), { entryId: entry.id, creditId: credit!.id, reason: 'bank confirmed the recall' });
    expect(placed).toMatchObject({ creditId: credit!.id, shortfall: 0 });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0 });
    expect(await remittanceOf(twin.payroll.id)).toMatchObject({ received: EXPECTED });
    const after = await t.db.selectFrom('bank_statement_entries').select(['outcome', 'bank_credit_id', 'resolved_by']).where('id', '=', entry.id).executeTakeFirstOrThrow();
    expect(after).toEqual({ outcome: 'reversal', bank_credit_id: credit!.id, resolved_by: 'finance-test' });
    const statement = await t.db.selectFrom('bank_statements').select('entry_outcomes').where('id', '=', outcome.statement.id).executeTakeFirstOrThrow();
    expect(statement.entry_outcomes).toEqual({ reversal: 1 });
    // Placed once: the entry is resolved and cannot be placed again.
    await expect(resolveReversal(t.db, actor, policy(), { entryId: entry.id, creditId: credit!.id, reason: 'again' })).rejects.toMatchObject({ kind: 'not-found' });
  });
});

describe("a person's decisions stick", () => {
  it('an unmatched pairing is never made again by a rule, at any later matching run; a person may still match it', async () => {
    const w = await reconciledPayDate();
    await importEntries([{ amount: EXPECTED, remittanceInformation: w.reference }]);
    const match = await t.db.selectFrom('remittance_matches').selectAll().where('payroll_id', '=', w.payroll.id).executeTakeFirstOrThrow();
    await unmatch(t.db, actor, policy(), { matchId: match.id, reason: 'the employer says this was another payroll' });

    await runMatching(t.db, policy());
    await importEntries([{ amount: 1, remittanceInformation: 'unrelated' }]);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: 0 });
    const live = await t.db.selectFrom('remittance_matches').select('id').where('payroll_id', '=', w.payroll.id).where('unmatched_at', 'is', null).execute();
    expect(live).toEqual([]);

    await matchCreditManually(t.db, actor, policy(), {
      creditId: match.bank_credit_id,
      allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: EXPECTED }],
      reason: 'confirmed after all',
    });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED });
  });

  it('a credit set aside leaves the queue with its reason, audited; restored, the rules take it again', async () => {
    const w = await reconciledPayDate();
    const outcome = await importEntries([{ amount: 1_234, remittanceInformation: 'INTEREST NOV' }]);
    const creditId = outcome.statements[0]!.entries[0]!.creditId!;
    const aside = await setCreditAside(t.db, actor, { creditId, category: 'bank_interest', reason: 'monthly interest' });
    expect(aside).toMatchObject({ state: 'set_aside', set_aside_category: 'bank_interest', state_reason: 'monthly interest', state_changed_by: 'finance-test' });
    const queue = await t.db.selectFrom('bank_credits').select('id').where('state', 'in', ['open', 'held']).whereRef('matched_amount', '<', 'amount').execute();
    expect(queue.map((c) => c.id)).not.toContain(creditId);
    await expect(setCreditAside(t.db, actor, { creditId, category: 'other', reason: 'again' })).rejects.toMatchObject({ kind: 'conflict' });
    await expect(
      matchCreditManually(t.db, actor, policy(), { creditId, allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: 1_234 }], reason: null }),
    ).rejects.toMatchObject({ kind: 'conflict' });

    const restored = await restoreCredit(t.db, actor, { creditId, reason: 'it was a remittance after all' });
    expect(restored).toMatchObject({ state: 'open', set_aside_category: null });
    const audit = await t.db.selectFrom('audit_log').select(['action', 'reason']).where('resource_id', '=', creditId).orderBy('at').execute();
    expect(audit).toEqual([
      { action: 'bank_credit.set_aside', reason: 'monthly interest' },
      { action: 'bank_credit.restored', reason: 'it was a remittance after all' },
    ]);
  });
});

describe('each credit counted once, none dropped', () => {
  it('a camt.054 notice and the camt.053 booking the same credit are one credit: the statement supersedes the notice', async () => {
    const w = await reconciledPayDate();
    const notice = await importEntries([{ amount: EXPECTED, remittanceInformation: w.reference, accountServicerReference: 'NOTICE-REF-0042' }], { format: 'camt.054' });
    expect(notice.statements[0]!.entries[0]).toMatchObject({ outcome: 'new' });
    expect((await creditsWith(w.reference))[0]).toMatchObject({ booked_statement_id: null });

    const booked = await importEntries([{ amount: EXPECTED, remittanceInformation: w.reference, accountServicerReference: 'NOTICE-REF-0042' }], { format: 'camt.053' });
    expect(booked.statements[0]!.entries[0]).toMatchObject({ outcome: 'superseded', creditId: notice.statements[0]!.entries[0]!.creditId });
    expect(booked.newCredits).toBe(0);
    const credits = await creditsWith(w.reference);
    expect(credits).toHaveLength(1);
    expect(credits[0]!.booked_statement_id).toBe(booked.statement.id);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED });
  });

  it('a camt.054 batch detailed entry by entry and the camt.053 lump sum are counted once', async () => {
    const first = await reconciledPayDate();
    const second = await reconciledPayDate();
    const lump = EXPECTED * 2;
    const batch = { amount: lump, parts: 2 };
    const notice = statementFile(
      account,
      nextId(),
      [
        statementEntry(0, 'BATCH-77001/1', {
          amount: EXPECTED,
          accountServicerReference: 'BATCH-77001',
          batch: { ...batch, part: 1 },
          remittanceInformation: first.reference,
        }),
        statementEntry(1, 'BATCH-77001/2', {
          amount: EXPECTED,
          accountServicerReference: 'BATCH-77001',
          batch: { ...batch, part: 2 },
          remittanceInformation: second.reference,
        }),
      ],
      { format: 'camt.054' },
    );
    await record(notice);
    const booked = await importEntries([{ amount: lump, accountServicerReference: 'BATCH-77001', remittanceInformation: 'BULK CREDIT' }]);
    expect(booked.statements[0]!.entries).toEqual([expect.objectContaining({ outcome: 'superseded', detail: 'known as the 2 entries of a batch booked as one' })]);
    const total = await t.db
      .selectFrom('bank_credits')
      .select((eb) => eb.fn.sum<string>('amount').as('sum'))
      .where('account_servicer_reference', '=', 'BATCH-77001')
      .executeTakeFirstOrThrow();
    expect(Number(total.sum)).toBe(lump);
    expect(await remittanceOf(first.payroll.id)).toMatchObject({ received: EXPECTED });
    expect(await remittanceOf(second.payroll.id)).toMatchObject({ received: EXPECTED });
  });

  it('a NtryRef reused on the next day is a new credit, and the remittance is paid', async () => {
    const w = await reconciledPayDate();
    await importEntries([{ amount: 500, entryReference: '1', accountServicerReference: null, bankReference: '1', bookingDate: '2026-10-29' }]);
    const next = await importEntries([{ amount: EXPECTED, entryReference: '1', accountServicerReference: null, bankReference: '1', remittanceInformation: w.reference }]);
    expect(next.statements[0]!.entries[0]).toMatchObject({ outcome: 'new' });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED, status: 'received' });
  });

  it('one file naming the credit by NtryRef, the other by AcctSvcrRef: one credit', async () => {
    const w = await reconciledPayDate();
    await importEntries([{ amount: EXPECTED, entryReference: '20261030-REF-88', accountServicerReference: null, remittanceInformation: w.reference }], { format: 'camt.054' });
    const booked = await importEntries([{ amount: EXPECTED, accountServicerReference: '20261030-REF-88', remittanceInformation: w.reference }]);
    expect(booked.statements[0]!.entries[0]).toMatchObject({ outcome: 'superseded' });
    expect(await creditsWith(w.reference)).toHaveLength(1);
  });

  it('a known reference booked at another amount is a conflict held for a person, never silently kept or ignored', async () => {
    const w = await reconciledPayDate();
    await importEntries([{ amount: EXPECTED, accountServicerReference: 'CONFLICT-REF-1', remittanceInformation: w.reference }], { format: 'camt.054' });
    const booked = await importEntries([{ amount: EXPECTED - 10_000, accountServicerReference: 'CONFLICT-REF-1', remittanceInformation: w.reference }]);
    expect(booked.statements[0]!.entries[0]).toMatchObject({
      outcome: 'conflicting',
      detail: expect.stringContaining('already on the account with amount £248.00, not £148.00'),
    });
    const credits = await creditsWith(w.reference);
    expect(credits.map((c) => [c.amount, c.state])).toEqual([
      [EXPECTED, 'open'],
      [EXPECTED - 10_000, 'held'],
    ]);
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED });
  });

  it('an unusable entry is kept with its reason and the rest of the file is imported', async () => {
    const w = await reconciledPayDate();
    const outcome = await importEntries([
      { amount: 0, problem: "the entry's amount is zero" },
      { amount: EXPECTED, remittanceInformation: w.reference },
      { amount: 10, currency: 'EUR' },
    ]);
    expect(outcome.statements[0]!.entries.map((e) => e.outcome)).toEqual(['unusable', 'new', 'unusable']);
    expect(outcome.statements[0]!.entries[2]!.detail).toBe('the entry is in EUR; the account holds GBP');
    expect(outcome.statement.entry_outcomes).toEqual({ unusable: 2, new: 1 });
    expect(await remittanceOf(w.payroll.id)).toMatchObject({ received: EXPECTED });
  });

  it('pages of one statement are recorded each once; the same statement in another file is a replay', async () => {
    const id = nextId();
    const page = (number: number, last: boolean, amount: number) =>
      statementFile(account, id, [statementEntry(0, `${id}-p${number}`, { amount, remittanceInformation: `page ${number}` })], { format: 'camt.053', page: { number, last } });
    await record(page(1, false, 101));
    const second = await record(page(2, true, 102));
    expect(second.statements[0]).toMatchObject({ replayed: false, newCredits: 1 });
    expect(second.statement).toMatchObject({ page_number: 2, last_page: true });
    const again = await record(page(2, true, 102));
    expect(again.replayed).toBe(true);
    await expect(record(page(2, true, 103))).rejects.toMatchObject({ kind: 'conflict' });
  });

  it('a gap in the electronic or legal sequence numbers is a finding on the statement', async () => {
    const fresh = await t.db.transaction().execute(async (trx) => {
      const sequence = (number: string) =>
        statementFile(account, `SEQ-${number}`, [statementEntry(0, `SEQ-${number}-0`, { amount: 7 })], {
          format: 'camt.053',
          electronicSequenceNumber: number,
          legalSequenceNumber: `7${number}`,
        });
      await recordStatement(trx, { parsed: sequence('900001'), digest: Buffer.alloc(32, 1), fileName: null, actor, policy: policy() });
      return recordStatement(trx, { parsed: sequence('900003'), digest: Buffer.alloc(32, 2), fileName: null, actor, policy: policy() });
    });
    expect(fresh.statement.integrity_findings.filter((finding) => finding.code.startsWith('sequence'))).toEqual([
      { code: 'sequence_gap', detail: expect.stringMatching(/^electronic sequence .*900002/) },
      { code: 'sequence_gap', detail: expect.stringMatching(/^legal sequence .*7900002/) },
    ]);
  });
});

const reconciledPayDate = () => reconciledPayDateOf(t.db);

describe("a paginated statement's balances, once its pages are all in", () => {
  const balance = (type: string, amount: number) => ({ type, amount, currency: 'GBP', date: '2026-10-30', position: { line: 1 } });
  const page = (id: string, number: number, last: boolean, amount: number, balances: ReturnType<typeof balance>[]) => {
    const file = statementFile(account, id, [statementEntry(0, `${id}-p${number}`, { amount, remittanceInformation: `page ${number}` })], {
      format: 'camt.053',
      page: { number, last },
    });
    file.statements[0]!.balances = balances;
    return file;
  };

  it('adds page 1 opening, every page entries and the last closing; the last page first notes the pages missing', async () => {
    const id = nextId();
    const last = await record(page(id, 2, true, 200, [balance('CLBD', 10_300)]));
    expect(last.statement.integrity_findings).toEqual([
      { code: 'pages_missing', detail: `page 1 of the 2 of statement ${id} is missing: its balances cannot be checked yet` },
    ]);
    const first = await record(page(id, 1, false, 100, [balance('OPBD', 10_000)]));
    expect(first.statement.integrity_findings).toEqual([]);

    const broken = nextId();
    await record(page(broken, 1, false, 100, [balance('OPBD', 10_000)]));
    const closing = await record(page(broken, 2, true, 200, [balance('CLBD', 10_250)]));
    expect(closing.statement.integrity_findings).toEqual([{ code: 'balance_mismatch', detail: expect.stringMatching(/^across its 2 pages: .*-£0\.50 unaccounted for/) }]);
  });
});
