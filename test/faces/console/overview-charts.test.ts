import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { createWorld, PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { signedInAs } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

/** The rows of the data table under the chart with this id: [row heading, ...cells]. */
function chartRows(page: string, id: string): string[][] {
  const start = page.indexOf(`<figure class="chart" id="${id}">`);
  expect(start).toBeGreaterThanOrEqual(0);
  const figure = page.slice(start, page.indexOf('</figure>', start));
  const body = figure.slice(figure.indexOf('<tbody>'), figure.indexOf('</tbody>'));
  return [...body.matchAll(/<tr>(.*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((cell) => cell[1]!));
}

describe('overview charts', () => {
  it('charts requested, deducted and collected of a locked and reconciled pay date as the database holds them', async () => {
    await createCollectionAccount(t.db);
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
      ])
      .execute();

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const page = await browser.get('/console');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Requested, deducted and collected per pay date (GBP)');
    expect(chartRows(page.body, 'chart-collections')).toEqual([
      [PD1, formatMoney(totals.requested, 'GBP'), formatMoney(totals.deducted, 'GBP'), formatMoney(totals.collected, 'GBP')],
    ]);
    expect(chartRows(page.body, 'chart-nightly-durations')).toEqual([
      ['2026-11-20', '42 s'],
      ['2026-11-21', '2 min 5 s'],
    ]);
    expect(chartRows(page.body, 'chart-exceptions')).toEqual([[`${w.employer.name}: ${w.payroll.name}`, String(exceptions.count)]]);
    expect(page.body).toMatch(/<svg [^>]*role="img"/);
    expect(page.body).not.toContain('NaN');
  });
});
