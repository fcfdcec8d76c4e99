import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Queue } from 'bullmq';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { collectStatus } from '../../../src/faces/cli/status-command.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { finishRunIfResolved, insertRunWithDuePayDates, markPayDateFailed } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { matchCreditManually } from '../../../src/settlement/cash/matching-service.ts';
import { bringRemittancesUpToDate } from '../../../src/settlement/cash/remittance-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { createWorld, PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { accessibilityViolations } from '../../support/accessibility.ts';
import { cashPolicy, importCredits, reconciledPayDate } from '../../support/cash.ts';
import { CONSOLE_PASSWORD, createConsoleUserOf } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { failedJob } from '../../support/jobs.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { dispatch, registerEndpoint, until } from '../webhooks/webhook-test-kit.ts';

// An operator's morning, in Debian's Chromium: the overview lists what needs attention (a nightly run
// that could not lock two pay dates, a job that failed for good, a credit no rule matched, a short
// remittance, a payout waiting for the bank's answer, a failing webhook endpoint); each is resolved
// from its link, by the operator or by finance, until the list says nothing needs attention.
// Screenshots go to test-artifacts/console-morning; axe-core checks every page visited.

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'console-morning');
// A payroll whose pay date locked yesterday evening (its lock date) and failed.
const LATE_PAY_DATE = { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-11-27' };

let t: TestApp;
let workers: WorkerHost;
let browser: Browser;
let baseUrl: string;
let receiver: WebhookReceiver;
let payDates: Queue;
let deliveries: Queue;
let failing = true;
let a: Awaited<ReturnType<typeof reconciledPayDate>>;
let b: Awaited<ReturnType<typeof createWorld>>;
let nightlyRun: string;
let balance: string;

const accessibilityProblems = new Map<string, string[]>();

async function look(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const violations = await accessibilityViolations(page);
  if (violations.length > 0) accessibilityProblems.set(name, violations);
}

const signedIn = new Map<string, Page>();

/** One page per role, signed in once: the morning is one person's session (and a sign-in costs a password hash). */
async function signIn(role: 'operator' | 'finance'): Promise<Page> {
  const open = signedIn.get(role);
  if (open) return open;
  const user = await createConsoleUserOf(t.db, role);
  const page = await browser.newPage();
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(CONSOLE_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${baseUrl}/console`);
  signedIn.set(role, page);
  return page;
}

/** The kinds the overview lists now, one per row, in its order. */
async function listedKinds(page: Page): Promise<string[]> {
  await page.goto(`${baseUrl}/console`);
  return page.locator('table.attention-list tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-kind') ?? ''));
}

/** From the overview, the link of the first item of a kind. */
async function openItem(page: Page, kind: string) {
  await page.goto(`${baseUrl}/console`);
  await page.locator(`table.attention-list tr[data-kind="${kind}"] a`).first().click();
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  // A schedule that has not fired for days: no "nightly run not started" today.
  t = await startTestApp({ env: { NIGHTLY_CRON: '0 1 1 1 *' } });
  await createCollectionAccount(t.db);
  payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
  deliveries = createQueue(queueNames.webhookDeliveries, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
  const today = serviceToday(new Date(), t.config.SERVICE_TIME_ZONE);

  // Payroll A (a trusted employer): deducted £225.50 of £248.00; paid out before the money came.
  a = await reconciledPayDate(t.db, { trusted: true, deducted: [12_550, 8_000, 2_000] });
  // Payroll B's pay date was due to lock last night.
  b = await createWorld(t.db, { employees: 1, payDates: [LATE_PAY_DATE] });
  await b.payment(0, 5_000, { due: null });

  // A reconciliation job of A's pay date failed for good while the database restarted.
  await failedJob(payDates, t.config.REDIS_URL, 'reconcile-pay-date', { payrollId: a.payroll.id, payDate: PD1, final: false }, 'Connection terminated unexpectedly');
  workers = await composition.startWorkers(runtimeOf(t), { schedule: false });

  // Last night's run could not lock the pay dates due (B's, and A's next one): what a run whose lock jobs failed leaves.
  nightlyRun = crypto.randomUUID();
  const run = await t.db
    .transaction()
    .execute((trx) => insertRunWithDuePayDates(trx, { id: nightlyRun, runDate: LATE_PAY_DATE.lock_date, trigger: 'schedule', triggeredBy: null }));
  const pending = await t.db.selectFrom('nightly_run_pay_dates').select(['payroll_id', 'pay_date']).where('run_id', '=', run.id).execute();
  expect(pending.map((row) => row.payroll_id).sort()).toEqual([a.payroll.id, b.payroll.id].sort());
  for (const row of pending) await markPayDateFailed(t.db, run.id, { payrollId: row.payroll_id, payDate: row.pay_date }, 'the database went away mid-lock');
  await finishRunIfResolved(t.db, run.id);

  // A's biller listens for payouts at an address that answers 500.
  receiver = await startWebhookReceiver({ respond: () => ({ status: failing ? 500 : 204 }) });
  const endpoint = await registerEndpoint(t, await authHeaders(t.app, a.biller), receiver, { eventTypes: ['payout.created'] });
  await runPayouts(t.db, { funding: 'deducted', today: '2026-11-02', settlementDelayWorkingDays: 1, holidays: new Set() });
  await dispatch(t.db, deliveries);
  await until(
    () => t.db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', endpoint.id).executeTakeFirstOrThrow(),
    (row) => row.failing_since !== null,
    20_000,
  );

  // The employer sent £200.00 with the reference (finance matched it: short) and £25.50 without one.
  await bringRemittancesUpToDate(t.db, cashPolicy(today));
  const [part, rest] = await importCredits(
    t.db,
    'MORNING-1',
    [
      { amount: 20_000, remittanceInformation: a.reference, debtorName: 'Employer Ltd' },
      { amount: 2_550, remittanceInformation: 'balance October', debtorName: 'Employer Ltd' },
    ],
    today,
  );
  await matchCreditManually(t.db, cliActor('finance'), cashPolicy(today), {
    creditId: part!,
    allocations: [{ payrollId: a.payroll.id, payDate: PD1, amount: 20_000 }],
    reason: 'the employer paid part',
  });
  balance = rest!;

  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await workers?.close();
  await receiver?.close();
  await Promise.all([payDates?.close(), deliveries?.close()]);
  await t?.close();
});

describe("the operator's morning", () => {
  it('opens on the attention list: what, how much, how old, and where to resolve it', async () => {
    const page = await signIn('operator');
    // The urgent first (the two pay dates not locked), then the rest oldest first (made seconds apart here).
    const kinds = await listedKinds(page);
    expect(kinds.slice(0, 2)).toEqual(['nightly_run_failed', 'nightly_run_failed']);
    expect(kinds.slice(2).sort()).toEqual(['credit_unmatched', 'job_failed', 'payout_awaiting_bank', 'remittance_short', 'webhook_endpoint_failing']);
    await look(page, '01-attention');
    const text = (await page.locator('section.attention').textContent()) ?? '';
    expect(text).toContain('7 things need attention, 2 urgent.');
    expect(text).toContain('Remittance short from');
    expect(text).toContain('£200.00 of £225.50 received, £25.50 still owed');
    expect(text).toContain('Credit not matched: £25.50 from Employer Ltd with reference “balance October”');
    expect(text).toContain('waiting for the bank’s answer');
    expect(text).toMatch(/Job failed for good: reconciliation of Employer \d+ Ltd: Payroll \d+, pay date 2026-10-30: Connection terminated unexpectedly/);
    // The same list, in the same order, is what `deductions status` prints first.
    const status = await collectStatus(runtimeOf(t));
    expect(status.attention.items.map((item) => item.kind)).toEqual(await listedKinds(page));
  }, 60_000);

  it('the operator retries the nightly run from its page, and both pay dates lock', async () => {
    const page = await signIn('operator');
    await openItem(page, 'nightly_run_failed');
    await page.waitForURL(new RegExp(`/console/runs/nightly/${nightlyRun}$`));
    await look(page, '02-failed-run');
    await page.getByRole('button', { name: 'Retry the failed and skipped pay dates now' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toContain('Retrying 2 pay dates');
    await until(
      () => t.db.selectFrom('nightly_run_pay_dates').select('outcome').where('run_id', '=', nightlyRun).execute(),
      (rows) => rows.every((row) => row.outcome === 'locked'),
      30_000,
    );
    await page.reload();
    await look(page, '03-run-retried');
    expect(await listedKinds(page)).not.toContain('nightly_run_failed');
    const audit = await t.db.selectFrom('audit_log').select(['action', 'resource_id']).where('action', '=', 'nightly_run.retried').execute();
    expect(audit).toEqual([{ action: 'nightly_run.retried', resource_id: nightlyRun }]);
  }, 90_000);

  it('the operator retries the failed job, named by payroll, and it completes', async () => {
    const page = await signIn('operator');
    await openItem(page, 'job_failed');
    await page.waitForURL(/\/console\/jobs$/);
    await look(page, '04-failed-jobs');
    await page.getByRole('button', { name: /^Retry the reconciliation of Employer \d+ Ltd: Payroll \d+, pay date 2026-10-30$/ }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/reconciliation of .* is queued again/);
    await until(
      async () => (await payDates.getJobCounts('failed', 'waiting', 'active')) as Record<string, number>,
      (counts) => counts['failed'] === 0 && counts['waiting'] === 0 && counts['active'] === 0,
      30_000,
    );
    expect(await listedKinds(page)).not.toContain('job_failed');
  }, 90_000);

  it('the operator matches the credit to the short remittance, which settles both', async () => {
    const page = await signIn('operator');
    await openItem(page, 'credit_unmatched');
    await page.waitForURL(new RegExp(`/console/cash/credits/${balance}$`));
    await look(page, '05-credit');
    await page.locator('#remittance_1').selectOption(`${a.payroll.id}/${PD1}`);
    await page.locator('#amount_1').fill('25.50');
    await page.getByLabel(/^Why \(optional/).fill('the balance of October');
    await page.getByRole('button', { name: 'Match', exact: true }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/[Mm]atched/);
    const remittance = await t.db
      .selectFrom('remittances')
      .select(['received', 'status'])
      .where('payroll_id', '=', a.payroll.id)
      .where('pay_date', '=', PD1)
      .executeTakeFirstOrThrow();
    expect(remittance).toEqual({ received: 22_550, status: 'received' });
    const kinds = await listedKinds(page);
    expect(kinds).not.toContain('credit_unmatched');
    expect(kinds).not.toContain('remittance_short');
  }, 60_000);

  it('the operator redelivers to the endpoint once it answers again', async () => {
    failing = false;
    const page = await signIn('operator');
    await openItem(page, 'webhook_endpoint_failing');
    await page.waitForURL(/\/console\/webhooks\/endpoints\//);
    await look(page, '06-endpoint');
    await page.getByRole('button', { name: 'Redeliver' }).first().click();
    await expect.poll(() => page.locator('.notice').textContent()).toContain('queued again');
    await until(
      () => t.db.selectFrom('webhook_endpoints').select('failing_since').where('biller_client_id', '=', a.biller.clientId).executeTakeFirstOrThrow(),
      (row) => row.failing_since === null,
      30_000,
    );
    expect(await listedKinds(page)).toEqual(['payout_awaiting_bank']);
  }, 90_000);

  it('finance marks the payout paid, and nothing needs attention', async () => {
    const page = await signIn('finance');
    expect(await listedKinds(page)).toEqual(['payout_awaiting_bank']);
    await openItem(page, 'payout_awaiting_bank');
    await page.waitForURL(/\/console\/payouts\/[0-9a-f-]+$/);
    await look(page, '07-payout');
    await page.getByLabel(/What shows the transfer was made/).fill('Bank statement line 7');
    await page.getByRole('button', { name: 'Mark paid' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/paid/i);
    expect(await listedKinds(page)).toEqual([]);
    expect(await page.locator('.attention-summary').textContent()).toBe('Nothing needs attention.');
    await look(page, '08-nothing-needs-attention');
    const status = await collectStatus(runtimeOf(t));
    expect(status.attention).toMatchObject({ summary: 'Nothing needs attention.', items: [] });
  }, 60_000);

  it("every page of the morning passes axe-core's WCAG 2.1 AA rules", () => {
    expect(Object.fromEntries(accessibilityProblems)).toEqual({});
  });
});
