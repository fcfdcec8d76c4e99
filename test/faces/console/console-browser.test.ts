import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { replaceBeneficiaryAccount } from '../../../src/settlement/payouts/beneficiary-account-service.ts';
import { formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { runNightlyNow } from '../../../src/faces/workers/nightly-runner.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { createWorld, PD1, type World } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, statementEntry, statementFile } from '../../support/cash.ts';
import { CONSOLE_PASSWORD, createConsoleUserOf } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { accessibilityViolations } from '../../support/accessibility.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// The console as people use it, in Debian's Chromium (playwright-core, never a downloaded browser):
// an operator sees last night's run, opens a payroll pay date and re-runs it; finance downloads the
// reconciliation CSV and marks a payout paid. Each page's screenshot is kept in test-artifacts/console.

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'console');
const LOCK_DATE = '2026-10-21';

let t: TestApp;
let workers: WorkerHost;
let browser: Browser;
let baseUrl: string;
let w: World;
const amounts = [12_550, 8_000, 4_250];
const deducted = [12_550, 8_000, 2_000];

const accessibilityProblems = new Map<string, string[]>();

/** Keeps the page's screenshot and checks it with axe-core (see accessibilityViolations). */
async function screenshot(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  if (!new URL(page.url()).pathname.startsWith('/console/queues')) {
    const violations = await accessibilityViolations(page);
    if (violations.length > 0) accessibilityProblems.set(name, violations);
  }
}

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

async function signIn(page: Page, email: string) {
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(CONSOLE_PASSWORD);
  await screenshot(page, '01-sign-in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}/console`);
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await startTestApp();
  await createCollectionAccount(t.db);
  // Last night: the nightly run locks the pay date; then payroll reports what it deducted (one short),
  // reconciliation settles it and the payout run pays the biller.
  w = await createWorld(t.db, { employees: 3 });
  for (const [index, amount] of amounts.entries()) await w.payment(index, amount);
  workers = await composition.startWorkers(runtimeOf(t), { schedule: false });
  await runNightlyNow(runtimeOf(t), LOCK_DATE, { workers, trigger: { kind: 'schedule' } });
  for (const [index, amount] of deducted.entries()) await w.push(w.people[index]!.employee.id, PD1, amount);
  await w.reconcile(PD1, { today: '2026-11-20' });
  await t.db
    .transaction()
    .execute((trx) =>
      replaceBeneficiaryAccount(
        trx,
        w.biller.clientId,
        { currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' },
        { actor: cliActor('fixture'), reason: 'onboarding' },
      ),
    );
  await runPayouts(t.db, { funding: 'deducted', today: '2026-11-25', settlementDelayWorkingDays: 1, holidays: new Set() });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await workers?.close();
  await t?.close();
});

describe('the console in a browser', () => {
  it("an operator signs in and sees last night's run", async () => {
    const operator = await createConsoleUserOf(t.db, 'operator');
    const page = await browser.newPage();
    await signIn(page, operator.email);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
    const lastRun = page.locator('.last-run');
    expect(await lastRun.textContent()).toContain(`run date ${LOCK_DATE}`);
    expect(await lastRun.textContent()).toContain('completed');
    await screenshot(page, '02-overview');
    await page.close();
  }, 60_000);

  it("finance downloads the reconciliation CSV of the pay date, whose totals are the database's", async () => {
    const finance = await createConsoleUserOf(t.db, 'finance');
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    await signIn(page, finance.email);
    await nav(page, 'Reconciliation').click();
    await page.getByLabel('Pay date').fill(PD1);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/pay_date=2026-10-30/);
    expect(await page.locator('h1').textContent()).toBe(`Reconciliation for ${PD1}`);
    await screenshot(page, '05-reconciliation');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /reconciliation CSV/ }).click()]);
    expect(download.suggestedFilename()).toContain(PD1);
    const rows = parse(readFileSync((await download.path())!), { columns: true }) as Array<Record<string, string>>;
    const collected = await t.db
      .selectFrom('collection_attempts')
      .select((eb) => eb.fn.sum<string>('collected_amount').as('total'))
      .where('payroll_id', '=', w.payroll.id)
      .where('pay_date', '=', PD1)
      .executeTakeFirstOrThrow();
    // Amounts are fixed-point strings ("125.50"): read them back as minor units without float arithmetic.
    const minorUnits = (amount: string) => {
      expect(amount).toMatch(/^\d+\.\d{2}$/);
      return Number(amount.replace('.', ''));
    };
    const csvCollected = rows.reduce((sum, row) => sum + minorUnits(row.collected!), 0);
    expect(rows).toHaveLength(amounts.length);
    expect(csvCollected).toBe(Number(collected.total));
    expect(csvCollected).toBe(deducted.reduce((a, b) => a + b, 0));
    await context.close();
  }, 60_000);

  it('finance marks the payout paid', async () => {
    const finance = await createConsoleUserOf(t.db, 'finance');
    const page = await browser.newPage();
    await signIn(page, finance.email);
    await nav(page, 'Payouts').click();
    await screenshot(page, '06-payouts');
    const payout = await t.db.selectFrom('payouts').select(['id', 'amount', 'payout_date']).where('biller_client_id', '=', w.biller.clientId).executeTakeFirstOrThrow();
    expect(payout.amount).toBe(deducted.reduce((a, b) => a + b, 0));
    // First the payout is instructed: its date's payment file, written from the date's page.
    await page.getByRole('link', { name: `Payment files of the payouts made on ${payout.payout_date}` }).click();
    await screenshot(page, '06a-payment-files');
    await page.getByRole('button', { name: 'Write the payment file' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/Wrote file 1 \(SDPO/);
    await screenshot(page, '06b-payment-file-written');
    expect(await page.getByRole('link', { name: 'CSV' }).count()).toBe(1);
    await nav(page, 'Payouts').click();
    await page.getByRole('link', { name: payout.id }).click();
    await screenshot(page, '07-payout');
    await page.getByLabel(/What shows the transfer was made/).fill('Bank statement line 42');
    await page.getByRole('button', { name: 'Mark paid' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/paid/i);
    await screenshot(page, '08-payout-paid');
    const after = await t.db.selectFrom('payouts').select(['status']).where('id', '=', payout.id).executeTakeFirstOrThrow();
    expect(after.status).toBe('paid');
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor_kind', 'actor', 'reason'])
      .where('resource_id', '=', payout.id)
      .where('action', '=', 'payout.marked_paid')
      .executeTakeFirstOrThrow();
    expect(audit).toEqual({ actor_kind: 'console', actor: finance.email, reason: 'Bank statement line 42' });
    await page.close();
  }, 60_000);

  it("an operator opens the payroll pay date from last night's run, re-runs it with a reason and sees the new snapshot version", async () => {
    const operator = await createConsoleUserOf(t.db, 'operator');
    const page = await browser.newPage();
    await signIn(page, operator.email);
    await page.locator('.last-run a').click();
    await page.waitForURL(/\/console\/runs\/nightly\//);
    await screenshot(page, '03-nightly-run');
    await page.getByRole('link', { name: PD1 }).click();
    await page.waitForURL(new RegExp(`/console/payrolls/${w.payroll.id}/pay-dates/${PD1}$`));
    const versions = page.getByRole('table', { name: /snapshot/i });
    expect(await versions.locator('tbody tr').count()).toBe(1);
    await screenshot(page, '04-pay-date');

    await page.getByLabel('Reason').fill('Payroll asked for a corrected file');
    // Last night's pay date is reconciled and paid out: the re-run is confirmed first.
    await page.getByLabel('I have checked: re-run it anyway').check();
    await page.getByRole('button', { name: 'Re-run this pay date' }).click();
    await page.waitForURL(/\/console\/runs\/rerun\//);
    await screenshot(page, '09-rerun-requested');
    // The page reloads itself every 2 s until the workers have locked the new version.
    await page.locator('.result').waitFor({ timeout: 30_000 });
    expect(await page.locator('.result').textContent()).toContain('snapshot version 2 replaces version 1');
    await screenshot(page, '10-rerun-done');

    await page
      .getByRole('link', { name: /pay date 2026-10-30/ })
      .first()
      .click();
    expect(await versions.locator('tbody tr').count()).toBe(2);
    await screenshot(page, '11-pay-date-after-rerun');
    const request = await t.db.selectFrom('rerun_requests').select(['reason', 'requested_by']).executeTakeFirstOrThrow();
    expect(request).toEqual({ reason: 'Payroll asked for a corrected file', requested_by: operator.email });
    const snapshots = await t.db
      .selectFrom('deduction_snapshots')
      .select('snapshot_version')
      .where('payroll_id', '=', w.payroll.id)
      .where('pay_date', '=', PD1)
      .orderBy('snapshot_version')
      .execute();
    expect(snapshots.map((row) => row.snapshot_version)).toEqual([1, 2]);
    await page.close();
  }, 90_000);

  it('the queues board renders behind the sign-in, full for operators and read-only for viewers, with nothing loaded from elsewhere', async () => {
    for (const [role, boardPath] of [
      ['operator', '/console/queues/'],
      ['viewer', '/console/queues-read-only/'],
    ] as const) {
      const user = await createConsoleUserOf(t.db, role);
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        // bull-board's page links a Google Fonts stylesheet; the board's policy blocks it on purpose.
        if (message.type() === 'error' && !message.text().includes('fonts.googleapis.com')) problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
      });
      await signIn(page, user.email);
      await nav(page, 'Queues').click();
      await page.waitForURL((url) => url.pathname.startsWith(boardPath));
      await page.getByText('pay-dates').first().waitFor({ timeout: 20_000 });
      await page.getByText('Loading...').waitFor({ state: 'detached', timeout: 20_000 });
      await screenshot(page, `12-queues-${role}`);
      expect(problems).toEqual([]);
      await page.close();
    }
  }, 90_000);

  it('finance uploads the bank statement and the remittance is received', async () => {
    const finance = await createConsoleUserOf(t.db, 'finance');
    const page = await browser.newPage();
    await signIn(page, finance.email);
    await nav(page, 'Cash').click();
    await screenshot(page, '13-cash');
    const remittance = await t.db.selectFrom('remittances').selectAll().where('payroll_id', '=', w.payroll.id).where('pay_date', '=', PD1).executeTakeFirst();
    const reference = remittance?.payment_reference ?? (await t.db.selectFrom('requested_payments').select('payment_reference').executeTakeFirstOrThrow()).payment_reference;
    const account = await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow();
    const file = join(ARTIFACTS, 'statement.csv');
    const deductedTotal = deducted.reduce((a, b) => a + b, 0);
    writeFileSync(
      file,
      'statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account\n' +
        `BROWSER-1,${account.sort_code},${account.account_number},GBP,BROWSER-REF-1,${PD1},${PD1},credit,${formatMinorUnits(deductedTotal, 'GBP')},${reference},Employer Ltd,\n`,
    );
    await page.goto(`${baseUrl}/console/cash/statements`);
    await page.getByLabel('Statement file').setInputFiles(file);
    await page.getByRole('button', { name: 'Import statement' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/imported: 1 new credit; 1 match by the rules \(exact 1\)/);
    await screenshot(page, '14-statement-imported');
    const after = await t.db
      .selectFrom('remittances')
      .select(['received', 'status'])
      .where('payroll_id', '=', w.payroll.id)
      .where('pay_date', '=', PD1)
      .executeTakeFirstOrThrow();
    expect(after).toEqual({ received: deductedTotal, status: 'received' });
    await page.goto(`${baseUrl}/console/cash/remittances/${w.payroll.id}/${PD1}`);
    await screenshot(page, '15-remittance');
    await page.close();
  }, 60_000);

  it('finance sets a credit aside, and sees a reversal to place and a statement with a finding', async () => {
    const account = await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow();
    // A camt.053 without balances (a finding), two credits of one amount no rule places, and a reversal of that amount.
    const entries = [
      statementEntry(0, 'BROWSER-2-0', { amount: 5_000, remittanceInformation: 'interest', bookingDate: PD1 }),
      statementEntry(1, 'BROWSER-2-1', { amount: 7_500, remittanceInformation: 'unknown payer', bookingDate: PD1 }),
      statementEntry(2, 'BROWSER-2-2', { amount: 7_500, remittanceInformation: 'another payer', bookingDate: PD1 }),
      statementEntry(3, 'BROWSER-2-3', { amount: 7_500, direction: 'debit', reversal: true, bookingDate: PD1 }),
    ];
    const parsed = statementFile(account, 'BROWSER-2', entries, { format: 'camt.053' });
    const outcome = await t.db
      .transaction()
      .execute((trx) =>
        recordStatement(trx, { parsed, digest: Buffer.alloc(32, 2), fileName: 'browser-2.xml', actor: cliActor('fixture'), policy: cashPolicy('2026-11-25') }),
      );
    expect(outcome.reversals.unresolved).toBe(1);
    const interest = outcome.statements[0]!.entries[0]!.creditId!;

    const finance = await createConsoleUserOf(t.db, 'finance');
    const page = await browser.newPage();
    await signIn(page, finance.email);
    await page.goto(`${baseUrl}/console/cash/credits`);
    await screenshot(page, '16-credits-to-match');
    await page.goto(`${baseUrl}/console/cash/credits/${interest}`);
    await screenshot(page, '17-credit');
    await page.getByLabel('What the money is').selectOption('bank_interest');
    await page.getByLabel('Why it is no remittance (required)').fill('Interest the bank paid');
    await page.getByRole('button', { name: 'Set aside' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/set aside \(Bank interest\)/);
    expect((await t.db.selectFrom('bank_credits').select('state').where('id', '=', interest).executeTakeFirstOrThrow()).state).toBe('set_aside');
    await screenshot(page, '18-credit-set-aside');
    await page.goto(`${baseUrl}/console/cash/reversals`);
    await screenshot(page, '19-reversals-to-place');
    await page.goto(`${baseUrl}/console/cash/statements`);
    await screenshot(page, '20-statements-with-findings');
    await page.goto(`${baseUrl}/console/cash/statements/${outcome.statement.id}`);
    await expect.poll(() => page.locator('.findings').textContent()).toContain('no balances to check');
    await screenshot(page, '21-statement');
    await page.close();
  }, 60_000);

  it("every page screenshotted above passes axe-core's WCAG 2.1 AA rules", () => {
    expect(Object.fromEntries(accessibilityProblems)).toEqual({});
  });
});
