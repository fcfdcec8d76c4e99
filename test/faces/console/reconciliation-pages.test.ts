import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { escapeHtml } from '../../../src/faces/console/html.ts';
import { reconciliationColumns, reconciliationSummaryColumns } from '../../../src/settlement/reports/reconciliation-report.ts';
import { signedInAs, type ConsoleBrowser } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1, PD2, type World } from '../../cycle/reconciliation/reconciliation-world.ts';

let t: TestApp;
let viewer: ConsoleBrowser;
let worlds: World[];
let sandboxWorld: World;

/** A decimal amount as the CSV writes it ("125.50") in minor units, without floats. */
function minorOf(decimal: string): number {
  const [whole, fraction = ''] = decimal.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

/** The table row of the page that names the payroll. */
function rowOf(page: string, payrollId: string): string {
  const row = page.match(new RegExp(`<tr>(?:(?!</tr>).)*/console/payrolls/${payrollId}/pay-dates/${PD1}(?:(?!</tr>).)*</tr>`, 's'))?.[0];
  if (!row) throw new Error(`no row for payroll ${payrollId}`);
  return row;
}

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  worlds = [];
  // Two live payrolls paying on PD1: one collects in full and over-deducts, the other falls short.
  for (const [first, second] of [
    [
      { requested: 12_550, deducted: 13_050 },
      { requested: 10_000, deducted: 10_000 },
    ],
    [
      { requested: 8_000, deducted: 3_000 },
      { requested: 2_500, deducted: 2_500 },
    ],
  ] as const) {
    const w = await createWorld(t.db, { employees: 2 });
    await w.payment(0, first.requested);
    await w.payment(1, second.requested);
    await w.lock(PD1);
    await w.push(w.people[0]!.employee.id, PD1, first.deducted);
    await w.push(w.people[1]!.employee.id, PD1, second.deducted);
    await w.reconcile(PD1);
    worlds.push(w);
  }
  // A sandbox payroll on the same pay date, over-deducting too: simulated data, never in operators' views.
  sandboxWorld = await createWorld(t.db, { employees: 1 });
  await sandboxWorld.payment(0, 1_000);
  await sandboxWorld.lock(PD1);
  await sandboxWorld.push(sandboxWorld.people[0]!.employee.id, PD1, 1_700);
  await sandboxWorld.reconcile(PD1);
  await t.db.updateTable('payroll_providers').set({ sandbox: true }).where('id', '=', sandboxWorld.provider.id).execute();
  ({ browser: viewer } = await signedInAs(t.app, t.db, 'viewer'));
});
afterAll(async () => t?.close());

async function attemptTotals(payrollId: string) {
  const row = await t.db
    .selectFrom('collection_attempts')
    .select([sql<string>`sum(requested_amount)`.as('requested'), sql<string>`sum(collected_amount)`.as('collected'), sql<string>`sum(shortfall_amount)`.as('shortfall')])
    .where('payroll_id', '=', payrollId)
    .where('pay_date', '=', PD1)
    .executeTakeFirstOrThrow();
  return { requested: Number(row.requested), collected: Number(row.collected), shortfall: Number(row.shortfall) };
}

/** What live payrolls collected on PD1 (the sandbox payroll's simulated money left out). */
async function collectedOnPd1() {
  const row = await t.db
    .selectFrom('collection_attempts')
    .select(sql<string>`sum(collected_amount)`.as('collected'))
    .where('pay_date', '=', PD1)
    .where('payroll_id', '!=', sandboxWorld.payroll.id)
    .executeTakeFirstOrThrow();
  return Number(row.collected);
}

describe('the reconciliation page', () => {
  it("lists each payroll of the pay date with the database's totals, linked to its pay date page", async () => {
    const page = await viewer.get(`/console/reconciliation?pay_date=${PD1}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label for="pay_date">Pay date</label>');
    for (const w of worlds) {
      const totals = await attemptTotals(w.payroll.id);
      expect(totals.collected).toBeGreaterThan(0);
      const row = rowOf(page.body, w.payroll.id);
      expect(row).toContain(`>${formatMoney(totals.requested, 'GBP')}<`);
      expect(row).toContain(`>${formatMoney(totals.collected, 'GBP')}<`);
      expect(row).toContain(`>${formatMoney(totals.shortfall, 'GBP')}<`);
      expect(row).toContain(w.employer.name);
      // Named, not numbered: the payroll's name is the link, its id only in the address.
      expect(row).toContain(`/pay-dates/${PD1}">${escapeHtml(w.payroll.name)}</a>`);
      expect(row).not.toContain(`>${w.payroll.id}<`);
    }
    // The second payroll fell 50.00 short; the first collected everything it asked for.
    expect(await attemptTotals(worlds[1]!.payroll.id)).toMatchObject({ shortfall: 5_000 });
    expect(rowOf(page.body, worlds[0]!.payroll.id)).toContain(`>${formatMoney(0, 'GBP')}<`);
    expect(page.body).not.toContain(sandboxWorld.payroll.id);
  });

  it('lists the exceptions held for the date with the employee reference, kind and amount', async () => {
    const held = await t.db
      .selectFrom('reconciliation_exceptions as x')
      .innerJoin('employments as em', (join) => join.onRef('em.employee_id', '=', 'x.employee_id').onRef('em.payroll_id', '=', 'x.payroll_id'))
      .innerJoin('employees as ee', 'ee.id', 'em.employee_id')
      .select(['x.payroll_id', 'x.employee_id', 'x.kind', 'x.amount', 'x.detail', 'em.payroll_reference', 'ee.given_name', 'ee.family_name'])
      .where('x.pay_date', '=', PD1)
      .where('x.superseded_at', 'is', null)
      .where('x.payroll_id', '!=', sandboxWorld.payroll.id)
      .execute();
    expect(held).toEqual([expect.objectContaining({ payroll_id: worlds[0]!.payroll.id, kind: 'over_deduction', amount: 500 })]);
    const page = await viewer.get(`/console/reconciliation?pay_date=${PD1}`);
    const exceptions = page.body.slice(page.body.indexOf('id="exceptions-heading"'));
    const row = exceptions.match(/<tbody>.*?<\/tbody>/s)?.[0] ?? '';
    expect(row).toContain(held[0]!.payroll_reference);
    // The employee by name and works number, the payroll by name: no id a person would have to look up.
    expect(row).toContain(`<td>${held[0]!.given_name} ${held[0]!.family_name} (${held[0]!.payroll_reference})</td>`);
    expect(row).toContain(`>${escapeHtml(worlds[0]!.payroll.name)}</a>`);
    expect(row).not.toContain(`>${held[0]!.employee_id}<`);
    expect(row).not.toContain(`>${worlds[0]!.payroll.id}<`);
    expect(exceptions).toContain('<th scope="col">Employee (works number)</th>');
    expect(row).toContain('Over-deduction');
    expect(row).toContain(formatMoney(500, 'GBP'));
    expect(row).toContain(escapeHtml(held[0]!.detail));
  });

  it('opens on the latest pay date with reconciliation data, and refuses a date that is not one', async () => {
    const page = await viewer.get('/console/reconciliation');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`value="${PD1}"`);
    expect(page.body).toContain(worlds[1]!.payroll.id);
    const empty = await viewer.get(`/console/reconciliation?pay_date=${PD2}`);
    expect(empty.body).not.toContain(worlds[0]!.payroll.id);
    expect(empty.body).toContain('no payroll has reconciliation data');
    expect((await viewer.get('/console/reconciliation?pay_date=2026-02-30')).statusCode).toBe(400);
    expect((await viewer.get('/console/reconciliation/not-a-date/reconciliation.csv')).statusCode).toBe(400);
  });
});

describe('the reconciliation downloads', () => {
  it("streams the operators' reconciliation CSV, whose collected amounts sum to the database's", async () => {
    const response = await viewer.get(`/console/reconciliation/${PD1}/reconciliation.csv`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="reconciliation-${PD1}.csv"`);
    const records = parse(response.body, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([...reconciliationColumns]);
    expect(records).toHaveLength(4);
    expect(await attemptTotals(sandboxWorld.payroll.id)).toMatchObject({ collected: 1_000 });
    expect(new Set(records.map((record) => record.payroll_id))).toEqual(new Set(worlds.map((w) => w.payroll.id)));
    expect(records.reduce((sum, record) => sum + minorOf(record.collected!), 0)).toBe(await collectedOnPd1());
    // Each row names its payroll and employee, with the works number, after the columns finance already had.
    for (const w of worlds) {
      for (const person of w.people) {
        const employment = await t.db
          .selectFrom('employments')
          .select('payroll_reference')
          .where('employee_id', '=', person.employee.id)
          .where('payroll_id', '=', w.payroll.id)
          .executeTakeFirstOrThrow();
        expect(records.find((record) => record.employee_id === person.employee.id)).toMatchObject({
          payroll: w.payroll.name,
          employee_name: `${person.employee.given_name} ${person.employee.family_name}`,
          payroll_reference: employment.payroll_reference,
        });
      }
    }
  });

  it('gives the summary CSV, one row per payroll, totals matching the database', async () => {
    const response = await viewer.get(`/console/reconciliation/${PD1}/summary.csv`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="reconciliation-summary-${PD1}.csv"`);
    const records = parse(response.body, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([...reconciliationSummaryColumns]);
    expect(records.map((record) => record.payroll_id).sort()).toEqual(worlds.map((w) => w.payroll.id).sort());
    for (const record of records) {
      const totals = await attemptTotals(record.payroll_id!);
      expect(minorOf(record.collected!)).toBe(totals.collected);
      expect(minorOf(record.requested!)).toBe(totals.requested);
    }
    expect(records.reduce((sum, record) => sum + minorOf(record.collected!), 0)).toBe(await collectedOnPd1());
    expect(records.find((record) => record.payroll_id === worlds[0]!.payroll.id)).toMatchObject({ exceptions: '1', held_over_deductions: '5.00' });
  });
});
