import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { triggerNightlyRun, lockPayDateOfRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { DEFAULT_AMOUNT_LIMITS } from '../../../src/collections/payments/amount-limits.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { signedInAs } from '../../support/console.ts';
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
    expect(payDateRow).toContain('locked');
    expect(payDateRow).toContain(`<td>2</td>`);
    expect(payDateRow).toContain(formatMoney(recorded[0]!.total_amount!, 'GBP'));
    expect(recorded[0]!.total_amount).toBe(19_550);
    // The later pay date was not due: it is not in this run.
    expect(detail.body).not.toContain(`/pay-dates/${PD2}`);
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
