import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { PLOT } from '../../../src/faces/console/charts.ts';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { matchCreditManually } from '../../../src/settlement/cash/matching-service.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { createWorld, PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, giveBillerAnAccount, parsedStatement } from '../../support/cash.ts';
import { signedInAs } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** The markup of the chart with this id. */
function figureOf(page: string, id: string): string {
  const start = page.indexOf(`<figure class="chart" id="${id}">`);
  expect(start).toBeGreaterThanOrEqual(0);
  return page.slice(start, page.indexOf('</figure>', start));
}

/** The rows of the data table under the chart with this id: [row heading, ...cells]. */
function chartRows(page: string, id: string): string[][] {
  const figure = figureOf(page, id);
  const body = figure.slice(figure.indexOf('<tbody>'), figure.indexOf('</tbody>'));
  return [...body.matchAll(/<tr>(.*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((cell) => cell[1]!));
}

describe('overview charts', () => {
  it('charts requested, deducted, collected, received and paid out of a reconciled, part-remitted pay date as the database holds them', async () => {
    const created = await createCollectionAccount(t.db);
    const account = created ?? (await t.db.selectFrom('collection_accounts').selectAll().where('active', '=', true).executeTakeFirstOrThrow());
    const w = await createWorld(t.db, { employees: 3 });
    const [over, short, stranger] = w.people.map((person) => person.employee.id) as [string, string, string];
    await w.payment(0, 5_000);
    await w.payment(1, 10_000);
    await w.lock(PD1);
    await w.push(over, PD1, 6_500);
    await w.push(short, PD1, 4_000);
    await w.push(stranger, PD1, 1_234);
    await w.reconcile(PD1);

    const totals = await t.db
      .selectFrom('collection_attempts')
      .select([
        sql<number>`sum(requested_amount)::bigint`.as('requested'),
        sql<number>`coalesce(sum(deducted_amount), 0)::bigint`.as('deducted'),
        sql<number>`sum(collected_amount)::bigint`.as('collected'),
      ])
      .where('pay_date', '=', PD1)
      .where('currency', '=', 'GBP')
      .executeTakeFirstOrThrow();
    // Not trivially equal: payroll deducted more from one and less from another than was asked.
    expect(totals.requested).toBe(15_000);
    expect(totals.collected).toBeGreaterThan(0);
    expect(new Set([totals.requested, totals.deducted, totals.collected]).size).toBeGreaterThan(1);

    // The employer sends 60.00 of what it owes; the payout run pays the biller what that funds.
    const actor = cliActor('finance-test');
    await giveBillerAnAccount(t.db, w.biller.clientId, actor);
    const read = parsedStatement(account, 'STMT-OVERVIEW', [{ amount: 6_000, remittanceInformation: 'part payment' }]);
    await t.db.transaction().execute((trx) => recordStatement(trx, { ...read, actor, policy: cashPolicy('2026-11-02') }));
    const credit = await t.db.selectFrom('bank_credits').select('id').where('bank_reference', '=', 'STMT-OVERVIEW-0').executeTakeFirstOrThrow();
    await matchCreditManually(t.db, actor, cashPolicy('2026-11-02'), {
      creditId: credit.id,
      allocations: [{ payrollId: w.payroll.id, payDate: PD1, amount: 6_000 }],
      reason: 'the employer says the rest follows',
    });
    await runPayouts(t.db, { today: '2026-11-10', settlementDelayWorkingDays: 1, holidays: new Set(), funding: 'received' });
    const { received } = await t.db.selectFrom('remittances').select('received').where('pay_date', '=', PD1).where('currency', '=', 'GBP').executeTakeFirstOrThrow();
    const paid = await t.db
      .selectFrom('ledger_entries as le')
      .innerJoin('payouts as po', 'po.id', 'le.payout_id')
      .select(sql<number>`coalesce(sum(le.amount), 0)::bigint`.as('paid_out'))
      .where('le.pay_date', '=', PD1)
      .where('le.currency', '=', 'GBP')
      .where('po.status', '<>', 'failed')
      .executeTakeFirstOrThrow();
    // Cash differs from what was collected: 60.00 arrived, and only whole requests it covers were paid out.
    expect(received).toBe(6_000);
    expect(paid.paid_out).toBeGreaterThan(0);
    expect(paid.paid_out).toBeLessThanOrEqual(received);
    expect(new Set([totals.collected, received, paid.paid_out]).size).toBe(3);

    const exceptions = await t.db
      .selectFrom('reconciliation_exceptions')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('payroll_id', '=', w.payroll.id)
      .where('superseded_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(exceptions.count).toBeGreaterThan(0);

    const started = new Date('2026-11-20T02:00:00Z');
    await t.db
      .insertInto('nightly_runs')
      .values([
        {
          id: crypto.randomUUID(),
          run_date: '2026-11-20',
          trigger: 'schedule',
          triggered_by: null,
          pay_dates_due: 1,
          started_at: started,
          finished_at: new Date(started.getTime() + 42_000),
        },
        {
          id: crypto.randomUUID(),
          run_date: '2026-11-21',
          trigger: 'schedule',
          triggered_by: null,
          pay_dates_due: 1,
          started_at: new Date(started.getTime() + 86_400_000),
          finished_at: new Date(started.getTime() + 86_400_000 + 125_000),
        },
        // A six-hour catch-up: drawn above the scale, not flattening the others.
        {
          id: crypto.randomUUID(),
          run_date: '2026-11-22',
          trigger: 'schedule',
          triggered_by: null,
          pay_dates_due: 1,
          started_at: new Date(started.getTime() + 2 * 86_400_000),
          finished_at: new Date(started.getTime() + 2 * 86_400_000 + 6 * 3_600_000),
        },
      ])
      .execute();

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const page = await browser.get('/console');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Requested, deducted, collected, received and paid out per pay date (GBP)');
    expect(chartRows(page.body, 'chart-collections')).toEqual([
      [
        PD1,
        formatMoney(totals.requested, 'GBP'),
        formatMoney(totals.deducted, 'GBP'),
        formatMoney(totals.collected, 'GBP'),
        formatMoney(received, 'GBP'),
        formatMoney(paid.paid_out, 'GBP'),
      ],
    ]);
    const moneyChart = figureOf(page.body, 'chart-collections');
    for (const series of ['Requested', 'Deducted', 'Collected', 'Received', 'Paid out']) expect(moneyChart).toContain(`<th scope="col">${series}</th>`);
    expect(moneyChart).toContain(`<title>Received, ${PD1}: ${formatMoney(received, 'GBP')}</title>`);
    expect(moneyChart).toContain(`<title>Paid out, ${PD1}: ${formatMoney(paid.paid_out, 'GBP')}</title>`);

    // The table keeps every real duration; the chart draws the six-hour run above its scale, labelled.
    expect(chartRows(page.body, 'chart-nightly-durations')).toEqual([
      ['2026-11-20', '42 s'],
      ['2026-11-21', '2 min 5 s'],
      ['2026-11-22', '360 min 0 s'],
    ]);
    const durations = figureOf(page.body, 'chart-nightly-durations');
    expect(durations).toContain('<title>Duration, 2026-11-22: 360 min 0 s (off the scale)</title>');
    expect(durations).toContain('<p class="chart-note">Off the scale, drawn above the top line: 2026-11-22: 360 min 0 s.</p>');
    // The longest typical run tops the scale.
    expect(durations).toMatch(new RegExp(`<circle cx="[\\d.]+" cy="${PLOT.top}" r="3"[^>]*><title>Duration, 2026-11-21: 2 min 5 s</title>`));
    expect(chartRows(page.body, 'chart-exceptions')).toEqual([[`${w.employer.name}: ${w.payroll.name}`, String(exceptions.count)]]);
    expect(page.body).toMatch(/<svg [^>]*role="img"/);
    expect(page.body).not.toContain('NaN');
  });
});
