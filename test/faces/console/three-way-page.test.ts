import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { MatchingPolicy } from '../../../src/settlement/cash/matching-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { escapeHtml } from '../../../src/faces/console/html.ts';
import { replaceBeneficiaryAccount } from '../../../src/settlement/payouts/beneficiary-account-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { statementEntry, statementFile } from '../../support/cash.ts';
import { threeWayColumns } from '../../../src/settlement/reports/three-way-report.ts';
import { signedInAs, type ConsoleBrowser } from '../../support/console.ts';
import { createCollectionAccount, createOperator } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1, PD2, type World } from '../../cycle/reconciliation/reconciliation-world.ts';

let t: TestApp;
let viewer: ConsoleBrowser;
let paidWorld: World;
let waitingWorld: World;
let sandboxWorld: World;

const actor = cliActor('finance-test');
const policy: MatchingPolicy = { today: '2026-11-02', lateWorkingDays: 3, toleranceMinor: 100, holidays: new Set() };

async function reconciledPayroll(requested: number, deducted: number) {
  const w = await createWorld(t.db, { employees: 1 });
  await w.payment(0, requested);
  await w.lock(PD1);
  await w.push(w.people[0]!.employee.id, PD1, deducted);
  await w.reconcile(PD1, { today: '2026-10-31' });
  await t.db
    .transaction()
    .execute((trx) =>
      replaceBeneficiaryAccount(
        trx,
        w.biller.clientId,
        { currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' },
        { actor, reason: 'onboarding' },
      ),
    );
  return w;
}

/** The table row of the page that links the payroll. */
function rowOf(page: string, payrollId: string): string {
  const row = page.match(new RegExp(`<tr>(?:(?!</tr>).)*/console/payrolls/${payrollId}/pay-dates/${PD1}(?:(?!</tr>).)*</tr>`, 's'))?.[0];
  if (!row) throw new Error(`no row for payroll ${payrollId}`);
  return row;
}

beforeAll(async () => {
  t = await startTestApp();
  const created = await createCollectionAccount(t.db);
  const account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
  // One payroll deducts and remits in full and is paid out; the other deducts 60.00 of 80.00 and its employer has sent nothing yet.
  paidWorld = await reconciledPayroll(12_550, 12_550);
  waitingWorld = await reconciledPayroll(8_000, 6_000);
  sandboxWorld = await reconciledPayroll(1_000, 1_000);
  const reference = await t.db
    .selectFrom('requested_payments as rp')
    .innerJoin('deduction_snapshots as s', 's.id', 'rp.snapshot_id')
    .select('rp.payment_reference')
    .where('s.payroll_id', '=', paidWorld.payroll.id)
    .executeTakeFirstOrThrow();
  const parsed = statementFile(account, 'STMT-3W-PAGE', [statementEntry(0, 'STMT-3W-PAGE-0', { amount: 12_550, remittanceInformation: reference.payment_reference })]);
  const digest = createHash('sha256').update(JSON.stringify(parsed)).digest();
  await t.db.transaction().execute((trx) => recordStatement(trx, { parsed, digest, fileName: 'stmt.csv', actor, policy }));
  await t.db.updateTable('payroll_providers').set({ sandbox: true }).where('id', '=', sandboxWorld.provider.id).execute();
  await runPayouts(t.db, { today: '2026-11-10', settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });
  ({ browser: viewer } = await signedInAs(t.app, t.db, 'viewer'));
});
afterAll(async () => t?.close());

describe('the three-way reconciliation page', () => {
  it('shows each live payroll with its four figures and the explanation, and the totals', async () => {
    const page = await viewer.get(`/console/reconciliation/three-way?pay_date=${PD1}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label for="pay_date">Pay date</label>');

    const paid = rowOf(page.body, paidWorld.payroll.id);
    expect(paid).toContain(paidWorld.employer.name);
    expect(paid.match(new RegExp(`>${formatMoney(12_550, 'GBP')}<`, 'g'))).toHaveLength(4);
    expect(paid).toContain('All paid out.');

    const waiting = rowOf(page.body, waitingWorld.payroll.id);
    for (const amount of [8_000, 6_000, 0]) expect(waiting).toContain(`>${formatMoney(amount, 'GBP')}<`);
    expect(waiting).toContain(
      escapeHtml('Payroll deducted £20.00 less than requested; nothing received, not yet due (due 2026-11-04); £60.00 held back until the remittance arrives.'),
    );

    const totals = page.body.match(/<tr><td><strong>Total GBP<\/strong>.*?<\/tr>/s)?.[0] ?? '';
    // Requested, deducted, received, paid out, held back and owed back, in the table's order.
    const cells = [...totals.matchAll(/<td>([^<]*)<\/td>/g)].map((match) => match[1]).filter((cell) => cell !== '');
    expect(cells).toEqual([
      formatMoney(20_550, 'GBP'),
      formatMoney(18_550, 'GBP'),
      formatMoney(12_550, 'GBP'),
      formatMoney(12_550, 'GBP'),
      formatMoney(6_000, 'GBP'),
      formatMoney(0, 'GBP'),
    ]);

    expect(page.body).not.toContain(sandboxWorld.payroll.id);
    expect(page.body).toContain(`href="/console/reconciliation/${PD1}/three-way.csv"`);
  });

  it('is linked from the reconciliation page, says when a pay date has nothing, and refuses a date that is not one', async () => {
    const reconciliation = await viewer.get(`/console/reconciliation?pay_date=${PD1}`);
    expect(reconciliation.body).toContain(`href="/console/reconciliation/three-way?pay_date=${PD1}"`);
    const empty = await viewer.get(`/console/reconciliation/three-way?pay_date=${PD2}`);
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('no payroll has a remittance for this pay date');
    expect((await viewer.get('/console/reconciliation/three-way?pay_date=2026-02-30')).statusCode).toBe(400);
    expect((await viewer.get('/console/reconciliation/not-a-date/three-way.csv')).statusCode).toBe(400);
  });

  it("downloads the operators' CSV, byte for byte the API's", async () => {
    const download = await viewer.get(`/console/reconciliation/${PD1}/three-way.csv`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(download.headers['content-disposition']).toBe(`attachment; filename="three-way-${PD1}.csv"`);
    const api = await t.app.inject({ method: 'GET', url: `/reports/three-way?pay_date=${PD1}`, headers: await authHeaders(t.app, await createOperator(t.db)) });
    expect(download.body).toBe(api.body);
    const records = parse(download.body, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([...threeWayColumns]);
    expect(records.map((record) => record.payroll_id).sort()).toEqual([paidWorld.payroll.id, waitingWorld.payroll.id].sort());
  });
});
