import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { triggerNightlyRun, lockPayDateOfRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { DEFAULT_AMOUNT_LIMITS } from '../../../src/collections/payments/amount-limits.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { signedInAs } from '../../support/console.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { escapeHtml } from '../../../src/faces/console/html.ts';
import { performRerun, requestRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { giveBillerAnAccount } from '../../support/cash.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1, PD2 } from '../../cycle/reconciliation/reconciliation-world.ts';

let t: TestApp;
let payDates: Queue;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  payDates = createQueue(queueNames.payDates, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
});
afterAll(async () => {
  await payDates?.close();
  await t?.close();
});

/** The table row of a page that contains `text`. */
function rowWith(page: string, text: string): string | undefined {
  return page.match(/<tr>[\s\S]*?<\/tr>/g)?.find((row) => row.includes(text));
}

describe('console run pages', () => {
  it('list a nightly run and show its pay dates, each linking to the pay date page', async () => {
    const w = await createWorld(t.db, { employees: 2 });
    await w.payment(0, 12_550);
    await w.payment(1, 7_000);
    // PD1 locks on 2026-10-21: the only pay date due on that run date.
    const { run } = await triggerNightlyRun(t.db, payDates, '2026-10-21', { kind: 'manual', by: 'ops@example.com' });
    await lockPayDateOfRun(t.db, run.id, { payrollId: w.payroll.id, payDate: PD1 }, DEFAULT_AMOUNT_LIMITS);
    const recorded = await t.db.selectFrom('nightly_run_pay_dates').selectAll().where('run_id', '=', run.id).execute();
    expect(recorded.map((row) => [row.payroll_id, row.pay_date, row.outcome])).toEqual([[w.payroll.id, PD1, 'locked']]);

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const list = await browser.get('/console/runs');
    expect(list.statusCode).toBe(200);
    const listed = rowWith(list.body, run.id);
    expect(listed).toContain(`href="/console/runs/nightly/${run.id}"`);
    expect(listed).toContain('manual by ops@example.com');
    expect(listed).toContain('completed');
    expect(list.body).toMatch(/<label for="runs-kind">Kind<\/label>\s*<select id="runs-kind" name="kind">/);

    const reruns = await browser.get('/console/runs?kind=rerun&limit=25');
    expect(reruns.statusCode).toBe(200);
    expect(reruns.body).not.toContain(run.id);
    expect(reruns.body).toContain('<option value="rerun" selected>');

    const detail = await browser.get(`/console/runs/nightly/${run.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('<dt>Run date</dt><dd>2026-10-21</dd>');
    expect(detail.body).toContain('<dt>Trigger</dt><dd>manual, by ops@example.com</dd>');
    expect(detail.body).toContain('<dt>Pay dates due</dt><dd>1</dd>');
    expect(detail.body).toContain('<dt>Locked</dt><dd>1</dd>');
    expect(detail.body).toContain('<dt>Failed</dt><dd>0</dd>');
    const payDateRow = rowWith(detail.body, `/console/payrolls/${w.payroll.id}/pay-dates/${PD1}`);
    expect(payDateRow).toContain(`<td>${escapeHtml(`${w.employer.name}: ${w.payroll.name}`)}</td>`);
    expect(payDateRow).not.toContain(`<td>${w.payroll.id}</td>`);
    expect(payDateRow).toContain('locked');
    expect(payDateRow).toContain(`<td>2</td>`);
    expect(payDateRow).toContain(formatMoney(recorded[0]!.total_amount!, 'GBP'));
    expect(recorded[0]!.total_amount).toBe(19_550);
    // The later pay date was not due: it is not in this run.
    expect(detail.body).not.toContain(`/pay-dates/${PD2}`);
  });

  it('say what started a reconciliation and what it changed: a repeat over the same records changed nothing', async () => {
    const w = await createWorld(t.db);
    await w.payment(0, 2_550);
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 2_550);
    await w.reconcile(PD1, { trigger: 'request', triggeredBy: '12' });
    await w.reconcile(PD1, { trigger: 'sweep', triggeredBy: `reconcile-sweep.2026-11-30.${w.payroll.id}.${PD1}` });
    const [first, again] = await t.db.selectFrom('reconciliation_runs').selectAll().where('payroll_id', '=', w.payroll.id).orderBy('started_at').orderBy('id').execute();
    expect(first).toMatchObject({ collected: 2_550, payments_updated: 1 });
    expect(again).toMatchObject({ collected: 2_550, ledger_entries: 0, payments_updated: 0, exceptions: 0 });

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const firstPage = (await browser.get(`/console/runs/reconciliation/${first!.id}`)).body;
    expect(firstPage).toContain(
      '<dt>What started it</dt><dd>Requested after the pay date&#39;s data changed (deduction records, a confirmation or a return file came in, a report was voided, the pay date was re-run, or another pay date&#39;s reconciliation moved money it builds on), queue job 12</dd>',
    );
    expect(firstPage).toContain(`<dt>Collected</dt><dd>${formatMoney(2_550, 'GBP')} in all on this pay date</dd>`);
    expect(firstPage).toMatch(/<dt>This run changed<\/dt><dd>Wrote \d+ ledger entr(y|ies), updated 1 payment<\/dd>/);
    expect(firstPage).not.toContain('request by');

    const againPage = (await browser.get(`/console/runs/reconciliation/${again!.id}`)).body;
    expect(againPage).toContain('<dt>What started it</dt><dd>Nightly reconciliation sweep of 2026-11-30</dd>');
    expect(againPage).toContain(`<dt>Collected</dt><dd>${formatMoney(2_550, 'GBP')} in all on this pay date</dd>`);
    expect(againPage).toContain(
      '<dt>This run changed</dt><dd>Nothing: no new ledger entries, no payment updated, no new exception (the records had already been taken in)</dd>',
    );
    expect(againPage).not.toContain('Ledger entries');
    expect(againPage).not.toContain('Payments updated');

    // The pay date page says the same of its latest reconciliation.
    const payDatePage = (await browser.get(`/console/payrolls/${w.payroll.id}/pay-dates/${PD1}`)).body;
    expect(payDatePage).toContain(
      'Nothing: no new ledger entries, no payment updated, no new exception (the records had already been taken in). Nightly reconciliation sweep of 2026-11-30.',
    );
  });

  it('name payrolls and billers, not their ids: summaries, run pages and the overview', async () => {
    const w = await createWorld(t.db);
    await w.payment(0, 12_550);
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, 12_550);
    await w.reconcile(PD1, { trigger: 'sweep', final: true });
    const rerun = await requestRerun(t.db, {
      payrollId: w.payroll.id,
      payDate: PD1,
      reason: 'employer fixed a works number',
      actor: cliActor('ops@example.com'),
      force: true,
    });
    await performRerun(t.db, rerun.id);
    await giveBillerAnAccount(t.db, w.biller.clientId);
    const payout = await runPayouts(t.db, { funding: 'deducted', today: '2099-12-30', settlementDelayWorkingDays: 1, holidays: new Set() });
    const reconciliation = await t.db.selectFrom('reconciliation_runs').select('id').where('payroll_id', '=', w.payroll.id).executeTakeFirstOrThrow();
    const biller = await t.db.selectFrom('clients').select('name').where('id', '=', w.biller.clientId).executeTakeFirstOrThrow();
    const payrollName = escapeHtml(`${w.employer.name}: ${w.payroll.name}`);

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const list = await browser.get('/console/runs?limit=200');
    expect(rowWith(list.body, `/console/runs/reconciliation/${reconciliation.id}"`)).toContain(`${payrollName}, pay date ${PD1} (sweep, final): 1 employees`);
    expect(rowWith(list.body, `/console/runs/rerun/${rerun.id}"`)).toContain(`${payrollName}, pay date ${PD1}: 1 request(s), snapshot version 1 -&gt; 2`);
    expect(list.body).not.toContain(`payroll ${w.payroll.id}`);
    const overview = await browser.get('/console');
    expect(overview.statusCode).toBe(200);
    expect(overview.body.slice(overview.body.indexOf('id="recent-runs"'))).toContain(`${payrollName}, pay date ${PD1}`);
    expect(overview.body).not.toContain(`payroll ${w.payroll.id}`);

    const reconciled = await browser.get(`/console/runs/reconciliation/${reconciliation.id}`);
    expect(reconciled.body).toContain(`<a href="/console/payrolls/${w.payroll.id}/pay-dates/${PD1}">${payrollName}, pay date ${PD1}</a>`);
    // Support still finds the id, in a row of its own.
    expect(reconciled.body).toContain(`<dt>Payroll id</dt><dd>${w.payroll.id}</dd>`);
    expect(reconciled.body).not.toContain(`payroll ${w.payroll.id}`);

    const rerunPage = await browser.get(`/console/runs/rerun/${rerun.id}?reload=off`);
    expect(rerunPage.body).toContain(`<a href="/console/payrolls/${w.payroll.id}/pay-dates/${PD1}">${payrollName}, pay date ${PD1}</a>`);
    expect(rerunPage.body).toContain(`<dt>Payroll id</dt><dd>${w.payroll.id}</dd>`);
    expect(rerunPage.body).not.toContain(`payroll ${w.payroll.id}`);

    const payoutPage = await browser.get(`/console/runs/payout/${payout.runId!}`);
    const paid = payout.groups.find((group) => group.billerClientId === w.biller.clientId);
    expect(paid).toMatchObject({ outcome: 'paid_out' });
    const payoutRow = await t.db.selectFrom('payouts').select('reference').where('biller_client_id', '=', w.biller.clientId).executeTakeFirstOrThrow();
    const billerRow = rowWith(payoutPage.body, payoutRow.reference);
    expect(billerRow).toContain(`<td>${escapeHtml(biller.name)}</td>`);
    expect(billerRow).not.toContain(w.biller.clientId);
  });

  it('answer 404 for an unknown kind or run, and a malformed id', async () => {
    const { browser } = await signedInAs(t.app, t.db, 'finance');
    for (const url of ['/console/runs/weekly/' + crypto.randomUUID(), '/console/runs/nightly/' + crypto.randomUUID(), '/console/runs/payout/not-a-uuid']) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toContain('Not found');
    }
  });
});
