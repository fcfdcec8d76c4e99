import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPayouts, exportReconciliation } from '../../../src/faces/cli/export-commands.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { createCollectionAccount, createOperator } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';

// Issue 12 item 3: text that came from outside (an employer's, a payroll's, a biller's, an employee's and a
// beneficiary's name, a payroll reference; pay periods are checked to be <n>-<n> on the way in) starting with a formula character reaches every CSV the service
// writes as text a spreadsheet shows, never evaluates; amounts stay numbers, minus sign included.

const EMPLOYER = '=HYPERLINK("http://evil.example","click")';
const BILLER = "@SUM(1+1)*cmd|' /C calc'!A0";
const BENEFICIARY = '=1+2';
const PAYROLL_REFERENCE = '+44 20 7946 0000';
const PAYROLL = '-2+3 weekly';
/** The employee's given name as the payroll spells it. */
const GIVEN_NAME = '=cmd|calc';

let t: TestApp;
let dir: string;
let payrollId: string;
let payoutDate: string;

beforeAll(async () => {
  t = await startTestApp();
  dir = mkdtempSync(join(tmpdir(), 'csv-formulas-'));
  await createCollectionAccount(t.db);
  const w = await createWorld(t.db);
  payrollId = w.payroll.id;
  await t.db.updateTable('employers').set({ name: EMPLOYER }).where('id', '=', w.employer.id).execute();
  await t.db.updateTable('clients').set({ name: BILLER }).where('id', '=', w.biller.clientId).execute();
  await t.db
    .updateTable('employments')
    .set({ payroll_reference: PAYROLL_REFERENCE, given_name: GIVEN_NAME, family_name: 'Taylor' })
    .where('payroll_id', '=', w.payroll.id)
    .execute();
  await t.db.updateTable('payrolls').set({ name: PAYROLL }).where('id', '=', w.payroll.id).execute();
  await t.db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: w.biller.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: BENEFICIARY })
    .execute();

  await w.payment(0, 12_550);
  await w.lock(PD1);
  await w.push(w.people[0]!.employee.id, PD1, 12_550);
  await w.reconcile(PD1);
  payoutDate = '2026-11-02';
  await runPayouts(t.db, { funding: 'deducted', today: payoutDate, settlementDelayWorkingDays: 1, holidays: new Set() });
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

const rowsOf = (text: string) => parse(text, { columns: true }) as Array<Record<string, string>>;

describe('formula cells in every CSV', () => {
  it('the reconciliation CSV, over the API and from the CLI', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/reports/reconciliation?pay_date=${PD1}&payroll_id=${payrollId}`,
      headers: await authHeaders(t.app, await createOperator(t.db)),
    });
    expect(response.statusCode).toBe(200);
    const out = join(dir, 'reconciliation.csv');
    await exportReconciliation(t.db, { payDate: PD1, payrollId, out });
    for (const text of [response.body, readFileSync(out, 'utf8')]) {
      expect(rowsOf(text)).toEqual([
        expect.objectContaining({
          employer: `'${EMPLOYER}`,
          biller: `'${BILLER}`,
          pay_period: '7-2026',
          requested: '125.50',
          collected: '125.50',
          payroll: `'${PAYROLL}`,
          employee_name: `'${GIVEN_NAME} Taylor`,
          payroll_reference: `'${PAYROLL_REFERENCE}`,
        }),
      ]);
    }
  });

  it('the reconciliation summary', async () => {
    const out = join(dir, 'summary.csv');
    await exportReconciliation(t.db, { payDate: PD1, payrollId, summary: true, out });
    expect(rowsOf(readFileSync(out, 'utf8'))).toEqual([expect.objectContaining({ employer: `'${EMPLOYER}`, collected: '125.50', payroll: `'${PAYROLL}` })]);
  });

  it('the instruction file', async () => {
    const file = await t.db.selectFrom('instruction_files').select('content').where('payroll_id', '=', payrollId).where('pay_date', '=', PD1).executeTakeFirstOrThrow();
    expect(rowsOf(file.content.toString('utf8'))).toEqual([
      expect.objectContaining({ record_type: 'header', employer_name: `'${EMPLOYER}`, pay_period: '7-2026' }),
      expect.objectContaining({ record_type: 'item', payroll_reference: `'${PAYROLL_REFERENCE}`, pay_period: '7-2026', amount: '125.50' }),
      expect.objectContaining({ record_type: 'trailer', total_amount: '125.50' }),
    ]);
  });

  it('the payout file', async () => {
    const out = join(dir, 'payouts.csv');
    const { download } = await exportPayouts(t.db, { date: payoutDate, out });
    expect(download.file.totals.reduce((sum, total) => sum + total.transfers, 0)).toBeGreaterThanOrEqual(1);
    const rows = rowsOf(readFileSync(out, 'utf8')).filter((row) => row.account_holder_name === `'${BENEFICIARY}`);
    expect(rows).toEqual([expect.objectContaining({ biller: `'${BILLER}`, amount: '125.50' })]);
  });
});
