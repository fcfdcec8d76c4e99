import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../bin/composition.ts';
import { cliActor } from '../../src/audit/audit-service.ts';
import { replaceBeneficiaryAccount } from '../../src/payouts/beneficiary-account-service.ts';
import { runPayouts } from '../../src/payouts/payout-service.ts';
import { runNightlyNow } from '../../src/workers/nightly-runner.ts';
import type { WorkerHost } from '../../src/workers/worker-host.ts';
import { createWorld, PD1, type World } from '../reconciliation/reconciliation-world.ts';
import { CONSOLE_PASSWORD, createConsoleUserOf } from '../support/console.ts';
import { createCollectionAccount } from '../support/factories.ts';
import { runtimeOf } from '../support/runtime.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

// The console as people use it, in Debian's Chromium (playwright-core, never a downloaded browser):
// an operator sees last night's run, opens a payroll pay date and re-runs it; finance downloads the
// reconciliation CSV and marks a payout paid. Each page's screenshot is kept in test-artifacts/console.

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(new URL('../..', import.meta.url).pathname, 'test-artifacts', 'console');
const LOCK_DATE = '2026-10-21';

let t: TestApp;
let workers: WorkerHost;
let browser: Browser;
let baseUrl: string;
let w: World;
const amounts = [12_550, 8_000, 4_250];
const deducted = [12_550, 8_000, 2_000];

async function screenshot(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

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
  await t.db.transaction().execute((trx) =>
    replaceBeneficiaryAccount(
      trx,
      w.biller.clientId,
      { currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' },
      { actor: cliActor('fixture'), reason: 'onboarding' },
    ),
  );
  await runPayouts(t.db, { today: '2026-11-25', settlementDelayWorkingDays: 1, holidays: new Set() });
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
  it('an operator signs in and sees last night\'s run', async () => {
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
});
