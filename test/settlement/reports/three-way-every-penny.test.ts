import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { matchCreditManually, runMatching } from '../../../src/settlement/cash/matching-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { explainThreeWay, threeWayGaps, threeWayGapSizes, threeWayParts, threeWayReport, type ThreeWayRow } from '../../../src/settlement/reports/three-way-report.ts';
import { PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, parsedStatement, reconciledPayDate } from '../../support/cash.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// Issue 34: "Payroll B's employer sent 100.00 and 75.00 was paid out; the three-way sentence explains
// 15.00 short and 40.00 held back but not the 25.00 received and idle." Here over the real cash loop:
// two payment requests, 75.00 then 40.00; the employer sends 100.00 of the 115.00; the payout run
// funds the older request and holds the other back, as the 25.00 left does not fund it whole. The
// report says where every penny is, and what it says the next payout run funds is what it funds.

let t: TestApp;
let account: { sort_code: string; account_number: string };
const actor = cliActor('finance-test');

beforeAll(async () => {
  t = await startTestApp();
  const created = await createCollectionAccount(t.db);
  account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
});
afterAll(async () => t?.close());

/**
 * A credit quoting the pay date's reference: the rules match it when it is what is outstanding, a
 * person matches it to the pay date when it is not.
 */
async function remit(w: Awaited<ReturnType<typeof reconciledPayDate>>, amount: number, statementId: string) {
  const read = parsedStatement(account, statementId, [{ amount, remittanceInformation: `payroll ${w.reference}` }]);
  await t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor, policy: cashPolicy('2026-11-02') }));
  const credit = await t.db.selectFrom('bank_credits').select(['id', 'matched_amount']).where('bank_reference', '=', `${statementId}-0`).executeTakeFirstOrThrow();
  if (credit.matched_amount === amount) return;
  await matchCreditManually(t.db, actor, cashPolicy('2026-11-02'), {
    creditId: credit.id,
    allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount }],
    reason: 'employer says it is for this pay date',
  });
}

async function rowOf(payrollId: string): Promise<ThreeWayRow> {
  const row = (await threeWayReport(t.db, PD1)).find((candidate) => candidate.payroll_id === payrollId);
  if (!row) throw new Error(`no three-way row for payroll ${payrollId}`);
  // Every penny: each gap between consecutive figures, and what is held back, is accounted for.
  const sizes = threeWayGapSizes(row);
  for (const gap of threeWayGaps)
    expect(
      threeWayParts(row).reduce((sum, part) => sum + (part.amounts[gap] ?? 0), 0),
      gap,
    ).toBe(sizes[gap]);
  return row;
}

const payOut = (today: string) => runPayouts(t.db, { today, settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });

describe('the three-way explanation of cash received that does not fund a whole request', () => {
  it('names the 25.00 received and idle, and what it takes to fund the rest', async () => {
    const payrollB = await reconciledPayDate(t.db, { amounts: [7_500, 4_000] });
    await remit(payrollB, 10_000, 'STMT-ISSUE-34-A');

    // Before the payout run: the 100.00 funds the older request whole; 25.00 of it is left over.
    const before = await rowOf(payrollB.payroll.id);
    expect(before).toMatchObject({ expected: 11_500, received: 10_000, remittance_status: 'short', funded: 0, paid_out: 0, held_back: 11_500 });
    expect(before).toMatchObject({ fundable: 7_500, netting: 0, next_request: 4_000 });
    expect(explainThreeWay(before)).toBe(
      'Employer remitted £15.00 less than deducted (short); £75.00 held back, funded from the cash received at the next payout run; ' +
        '£25.00 received, not enough to fund the next whole payment request (£40.00); £40.00 held back until £15.00 more arrives.',
    );

    // The payout run funds what the report said it would, and pays it out.
    await payOut('2026-11-10');
    const after = await rowOf(payrollB.payroll.id);
    expect(after.funded - before.funded).toBe(before.fundable + before.netting);
    expect(after).toMatchObject({ received: 10_000, funded: 7_500, paid_out: 7_500, held_back: 4_000, fundable: 0, next_request: 4_000 });
    expect(explainThreeWay(after)).toBe(
      'Employer remitted £15.00 less than deducted (short); £25.00 received, not enough to fund the next whole payment request (£40.00); ' +
        '£40.00 held back until £15.00 more arrives.',
    );

    // The 15.00 more it named arrives: the next run funds and pays the rest, and everything agrees.
    await remit(payrollB, 1_500, 'STMT-ISSUE-34-B');
    const covered = await rowOf(payrollB.payroll.id);
    expect(covered).toMatchObject({ received: 11_500, remittance_status: 'received', held_back: 4_000, fundable: 4_000, next_request: 0 });
    expect(explainThreeWay(covered)).toBe('£40.00 held back, funded from the cash received at the next payout run.');
    await payOut('2026-11-11');
    const paid = await rowOf(payrollB.payroll.id);
    expect(paid).toMatchObject({ funded: 11_500, paid_out: 11_500, held_back: 0 });
    expect(explainThreeWay(paid)).toBe('All paid out.');
  });

  it('funds the oldest request first: a later, smaller one waits behind it, with the cash that does not cover it', async () => {
    const w = await reconciledPayDate(t.db, { amounts: [4_000, 7_500, 1_000] });
    await remit(w, 10_000, 'STMT-ISSUE-34-C');
    const before = await rowOf(w.payroll.id);
    // 40.00 fits; 75.00 does not fit in the 60.00 left, and the 10.00 behind it does not jump the queue.
    expect(before).toMatchObject({ fundable: 4_000, next_request: 7_500, held_back: 12_500 });
    await payOut('2026-11-10');
    const after = await rowOf(w.payroll.id);
    expect(after).toMatchObject({ funded: 4_000, paid_out: 4_000, held_back: 8_500, fundable: 0, next_request: 7_500 });
    expect(explainThreeWay(after)).toBe(
      'Employer remitted £25.00 less than deducted (short); £60.00 received, not enough to fund the next whole payment request (£75.00); ' +
        '£85.00 held back until £25.00 more arrives.',
    );
  });

  it('nets a correction that lowers what is paid at the next run, whatever the cash, and says the cash it frees is not needed', async () => {
    const w = await reconciledPayDate(t.db, { amounts: [5_000, 3_000] });
    await remit(w, 8_000, 'STMT-ISSUE-34-D');
    await payOut('2026-11-10');
    expect(explainThreeWay(await rowOf(w.payroll.id))).toBe('All paid out.');

    // Payroll corrects the second employee to 20.00: a reversal of 30.00 and a collection of 20.00, netting -10.00.
    await w.push(w.people[1]!.employee.id, PD1, 2_000);
    await w.reconcile(PD1, { today: '2026-11-10' });
    // The remittance now expects what payroll deducted (a matching run brings it up to date).
    await runMatching(t.db, cashPolicy('2026-11-10'));
    const corrected = await rowOf(w.payroll.id);
    expect(corrected).toMatchObject({ deducted: 7_000, expected: 7_000, received: 8_000, funded: 8_000, paid_out: 8_000, held_back: -1_000, netting: -1_000, fundable: 0 });
    expect(explainThreeWay(corrected)).toBe(
      'Payroll deducted £10.00 less than requested; employer remitted £10.00 more than deducted (over); ' +
        '£10.00 reversed, to be netted in the next payout run; £10.00 received that no collection needs.',
    );
    await payOut('2026-11-11');
    const netted = await rowOf(w.payroll.id);
    expect(netted.funded - corrected.funded).toBe(corrected.fundable + corrected.netting);
  });
});
