import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { matchCreditManually, runMatching, type MatchingPolicy } from '../../../src/settlement/cash/matching-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { exportThreeWay } from '../../../src/faces/cli/export-commands.ts';
import { formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import { markPayoutFailed, runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { threeWayColumns } from '../../../src/settlement/reports/three-way-report.ts';
import { PD1, PD2 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { CASH_AMOUNTS, cashPolicy, parsedStatement, reconciledPayDate } from '../../support/cash.ts';
import { createCollectionAccount, createOperator } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';

// The three-way report over the real cash loop: payrolls locked, reported (one short deduction),
// reconciled, remitted on a bank statement (one short, one in full, one not at all), and paid out only
// from what was received. Every figure of the report is checked against the tables it comes from.

let t: TestApp;
let operatorHeaders: Record<string, string>;
type World = Awaited<ReturnType<typeof reconciledPayDate>>;
let shortWorld: World;
let fullWorld: World;
let lateWorld: World;
let sandboxWorld: World;

const amounts = CASH_AMOUNTS;
const actor = cliActor('finance-test');
const policy = (today: string): MatchingPolicy => cashPolicy(today);

/** A payroll paying PD1 with three payment requests, locked, reported by payroll (`deducted` per employee) and reconciled. */
const reconciledPayroll = (deducted: readonly number[]) => reconciledPayDate(t.db, { deducted });
const referenceOf = async (w: World) => w.reference;

function statement(account: { sort_code: string; account_number: string }, credits: Array<{ amount: number; remittanceInformation: string }>) {
  return parsedStatement(account, `STMT-3W-${credits.map((credit) => credit.remittanceInformation).join('-')}`, credits);
}

beforeAll(async () => {
  t = await startTestApp();
  const created = await createCollectionAccount(t.db);
  const account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
  operatorHeaders = await authHeaders(t.app, await createOperator(t.db));

  // Payroll deducted 20.00 of the third employee's 42.50: the employer owes 225.50.
  shortWorld = await reconciledPayroll([12_550, 8_000, 2_000]);
  fullWorld = await reconciledPayroll(amounts);
  lateWorld = await reconciledPayroll(amounts);
  sandboxWorld = await reconciledPayroll(amounts);
  const [shortReference, fullReference] = [await referenceOf(shortWorld), await referenceOf(fullWorld)];

  // One statement: the full remittance quotes its reference exactly; 200.00 of the short one's 225.50
  // matches no rule and is matched by a person.
  const read = statement(account, [
    { amount: 24_800, remittanceInformation: fullReference },
    { amount: 20_000, remittanceInformation: `payroll ${shortReference}` },
  ]);
  await t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor, policy: policy('2026-11-02') }));
  const credit = await t.db.selectFrom('bank_credits').select('id').where('remittance_information', '=', `payroll ${shortReference}`).executeTakeFirstOrThrow();
  await matchCreditManually(t.db, actor, policy('2026-11-02'), {
    creditId: credit.id,
    allocations: [{ payrollId: shortWorld.payroll.id, payDate: PD1, amount: 20_000 }],
    reason: 'employer says the rest follows',
  });
  // Past the due date: the payroll whose employer sent nothing turns late.
  await runMatching(t.db, policy('2026-11-20'));
  // The sandbox payroll has its remittance too; it is simulated money all the same.
  await t.db.updateTable('payroll_providers').set({ sandbox: true }).where('id', '=', sandboxWorld.provider.id).execute();
  await runPayouts(t.db, { today: '2026-11-10', settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });
});
afterAll(async () => t?.close());

const report = (query: string, headers: Record<string, string> = operatorHeaders) => t.app.inject({ method: 'GET', url: `/reports/three-way?${query}`, headers });

/** The figures of a payroll pay date, read from the remittance and the ledger one entry at a time. */
async function figuresOf(payrollId: string) {
  const remittance = await t.db.selectFrom('remittances').selectAll().where('payroll_id', '=', payrollId).where('pay_date', '=', PD1).executeTakeFirstOrThrow();
  const entries = await t.db
    .selectFrom('ledger_entries as le')
    .innerJoin('collection_attempts as ca', 'ca.id', 'le.collection_attempt_id')
    .leftJoin('payouts as po', 'po.id', 'le.payout_id')
    .select(['le.amount', 'le.funded_at', 'le.payout_id', 'po.status'])
    .where('ca.payroll_id', '=', payrollId)
    .where('ca.pay_date', '=', PD1)
    .execute();
  const sum = (pick: (entry: (typeof entries)[number]) => boolean) => entries.filter(pick).reduce((total, entry) => total + entry.amount, 0);
  return {
    remittance,
    funded: sum((entry) => entry.funded_at !== null),
    paidOut: sum((entry) => entry.payout_id !== null && entry.status !== 'failed'),
    heldBack: sum((entry) => entry.funded_at === null && entry.payout_id === null),
  };
}

const gbp = (minor: number) => formatMinorUnits(minor, 'GBP');

describe('GET /reports/three-way', () => {
  it("streams one CSV row per live payroll of the pay date, each figure the database's", async () => {
    const response = await report(`pay_date=${PD1}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="three-way-${PD1}.csv"`);
    const records = parse(response.body, { columns: true }) as Record<string, string>[];
    expect(response.body.split('\n')[0]).toBe(threeWayColumns.join(','));
    expect(records.map((record) => record.payroll_id).sort()).toEqual([shortWorld, fullWorld, lateWorld].map((w) => w.payroll.id).sort());

    for (const w of [shortWorld, fullWorld, lateWorld]) {
      const record = records.find((candidate) => candidate.payroll_id === w.payroll.id)!;
      const { remittance, funded, paidOut, heldBack } = await figuresOf(w.payroll.id);
      const payroll = await t.db.selectFrom('payrolls').select('name').where('id', '=', w.payroll.id).executeTakeFirstOrThrow();
      expect(record).toEqual({
        payroll_id: w.payroll.id,
        employer: w.employer.name,
        payroll: payroll.name,
        pay_date: PD1,
        currency: 'GBP',
        payment_reference: await referenceOf(w),
        requested: gbp(remittance.requested),
        deducted: remittance.deducted === null ? '' : gbp(remittance.deducted),
        expected: gbp(remittance.expected),
        received: gbp(remittance.received),
        remittance_status: remittance.status,
        due_date: remittance.due_date,
        funded: gbp(funded),
        paid_out: gbp(paidOut),
        held_back: gbp(heldBack),
        explanation: record.explanation,
        shortfall: gbp(0),
      });
    }

    // What the loop left behind, spelled out: the short payroll funded its oldest collection from the
    // 200.00 received and holds the other two back (the 74.50 left does not fund the 80.00 next in
    // line); the full one is paid out; the late one holds all.
    const byPayroll = (w: World) => records.find((record) => record.payroll_id === w.payroll.id)!;
    expect(byPayroll(shortWorld)).toMatchObject({
      requested: '248.00',
      deducted: '225.50',
      received: '200.00',
      remittance_status: 'short',
      funded: '125.50',
      paid_out: '125.50',
      held_back: '100.00',
    });
    expect(byPayroll(shortWorld).explanation).toBe(
      'Payroll deducted £22.50 less than requested; employer remitted £25.50 less than deducted (short); ' +
        '£74.50 received, not enough to fund the next whole payment request (£80.00); £100.00 held back until £25.50 more arrives.',
    );
    expect(byPayroll(fullWorld)).toMatchObject({
      requested: '248.00',
      deducted: '248.00',
      received: '248.00',
      remittance_status: 'received',
      paid_out: '248.00',
      held_back: '0.00',
    });
    expect(byPayroll(fullWorld).explanation).toBe('All paid out.');
    expect(byPayroll(lateWorld)).toMatchObject({ received: '0.00', remittance_status: 'late', due_date: '2026-11-04', paid_out: '0.00', held_back: '248.00' });
    expect(byPayroll(lateWorld).explanation).toBe('Nothing received, late since 2026-11-05; £248.00 held back until the remittance arrives.');
  });

  it('leaves sandbox payrolls out, though they have a remittance', async () => {
    expect(await t.db.selectFrom('remittances').select('id').where('payroll_id', '=', sandboxWorld.payroll.id).executeTakeFirst()).toBeDefined();
    const response = await report(`pay_date=${PD1}`);
    expect(response.body).not.toContain(sandboxWorld.payroll.id);
    expect((await report(`pay_date=${PD1}&format=json`)).json().rows.map((row: { payroll_id: string }) => row.payroll_id)).not.toContain(sandboxWorld.payroll.id);
  });

  it('answers the same rows as JSON, asked by format or by Accept', async () => {
    const csv = parse((await report(`pay_date=${PD1}`)).body, { columns: true }) as Record<string, string>[];
    const byFormat = await report(`pay_date=${PD1}&format=json`);
    expect(byFormat.statusCode).toBe(200);
    expect(byFormat.headers['content-type']).toMatch(/^application\/json/);
    expect(byFormat.json()).toEqual({ pay_date: PD1, rows: csv });
    const byAccept = await report(`pay_date=${PD1}`, { ...operatorHeaders, accept: 'application/json' });
    expect(byAccept.json()).toEqual({ pay_date: PD1, rows: csv });
    // An explicit format wins over the Accept header.
    const csvAnyway = await report(`pay_date=${PD1}&format=csv`, { ...operatorHeaders, accept: 'application/json' });
    expect(csvAnyway.headers['content-type']).toBe('text/csv; charset=utf-8');
  });

  it('gives a header only for a pay date without remittances', async () => {
    const response = await report(`pay_date=${PD2}`);
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(`${threeWayColumns.join(',')}\n`);
    expect((await report(`pay_date=${PD2}&format=json`)).json()).toEqual({ pay_date: PD2, rows: [] });
  });

  it('is for operators only, and refuses a date that is not one', async () => {
    const biller = await report(`pay_date=${PD1}`, await authHeaders(t.app, fullWorld.biller));
    expect(biller.statusCode).toBe(403);
    for (const query of ['pay_date=2026-02-30', 'pay_date=30-10-2026', '', `pay_date=${PD1}&format=xml`]) {
      const refused = await report(query);
      expect(refused.statusCode, query).toBe(400);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});

describe('a payout the bank rejected', () => {
  it('no longer counts as paid out: its collections are funded and wait for the next payout run', async () => {
    const payout = await t.db.selectFrom('payouts').select('id').where('biller_client_id', '=', fullWorld.biller.clientId).executeTakeFirstOrThrow();
    await t.db.transaction().execute((trx) => markPayoutFailed(trx, payout.id, { actor, reason: 'the bank returned it' }));
    const rows = (await report(`pay_date=${PD1}&format=json`)).json().rows as Record<string, string>[];
    const row = rows.find((candidate) => candidate.payroll_id === fullWorld.payroll.id)!;
    const { funded, paidOut } = await figuresOf(fullWorld.payroll.id);
    expect({ funded: gbp(funded), paidOut: gbp(paidOut) }).toEqual({ funded: '248.00', paidOut: '0.00' });
    expect(row).toMatchObject({ received: '248.00', funded: '248.00', paid_out: '0.00', held_back: '0.00' });
    expect(row.explanation).toBe('£248.00 funded, not yet paid out (next payout run).');
  });
});

describe('deductions export three-way', () => {
  it('writes the same bytes as the API', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'three-way-')), 'three-way.csv');
    await exportThreeWay(t.db, { payDate: PD1, out });
    expect(readFileSync(out, 'utf8')).toBe((await report(`pay_date=${PD1}`)).body);
  });
});
