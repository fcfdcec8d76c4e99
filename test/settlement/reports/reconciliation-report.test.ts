import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { exportReconciliation } from '../../../src/faces/cli/export-commands.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import {
  csvLine,
  reconciliationColumns,
  reconciliationCsvLine,
  payoutIdsCell,
  reconciliationCsvStream,
  reconciliationRecords,
  reconciliationSummaryColumns,
  toCsvLabels,
  toReconciliationRecord,
} from '../../../src/settlement/reports/reconciliation-report.ts';
import {
  createBiller,
  createCollectionAccount,
  createCollectionAttemptRow,
  createEmployee,
  createEmployer,
  createMandateRow,
  createOperator,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
  createProviderClient,
} from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';

const PAY_DATE = '2026-11-27';
const NEXT_PAY_DATE = '2026-12-24';
const OTHER_PAY_DATE = '2026-10-30';
const calendar = [
  { pay_date: OTHER_PAY_DATE, payroll_cutoff_date: '2026-10-23', pay_period: '7-2026', lock_date: '2026-10-21' },
  { pay_date: PAY_DATE, payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: NEXT_PAY_DATE, payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
];

let t: TestApp;
let billerA: IssuedCredentials;
let billerB: IssuedCredentials;
let operatorHeaders: Record<string, string>;
let payrolls: Array<{ id: string; employees: string[] }>;
let exceptionOnlyPayrollId: string;
let exceptionOnlyPayrollName: string;
let paidOutPaymentId: string;
let payoutId: string;

type Outcome = 'collected' | 'carried' | 'failed' | 'partially_collected' | null;

interface AttemptSpec {
  biller: IssuedCredentials;
  payroll: number;
  employee: number;
  requested: number;
  deducted: number | null;
  collected: number;
  outcome: Outcome;
  pushVersion?: number;
  carriedTo?: string;
  payDate?: string;
}

/** A payment request and its reconciled attempt, as reconciliation leaves them, with its ledger entry. */
async function attempt(spec: AttemptSpec) {
  const payroll = payrolls[spec.payroll]!;
  const payDate = spec.payDate ?? PAY_DATE;
  const mandate = await createMandateRow(t.db, { billerClientId: spec.biller.clientId, employeeId: payroll.employees[spec.employee]!, payrollId: payroll.id });
  const status = spec.outcome === 'collected' ? 'collected' : spec.outcome === 'carried' ? 'pending' : (spec.outcome ?? 'instructed');
  const payment = await createPaymentRequestRow(t.db, { mandate, status, amount: spec.requested, targetPayDate: payDate });
  const row = await createCollectionAttemptRow(t.db, payment, {
    pay_date: payDate,
    attempt_number: 1,
    requested_amount: spec.requested,
    deducted_amount: spec.deducted,
    collected_amount: spec.collected,
    shortfall_amount: spec.outcome === null ? 0 : spec.requested - spec.collected,
    carried_to_pay_date: spec.carriedTo ?? null,
    outcome: spec.outcome,
    push_version: spec.pushVersion ?? (spec.outcome === null ? null : 1),
    reconciled_at: spec.outcome === null ? null : new Date(),
  });
  if (spec.collected > 0) {
    await t.db
      .insertInto('ledger_entries')
      .values({
        biller_client_id: spec.biller.clientId,
        payment_request_id: payment.id,
        collection_attempt_id: row.id,
        revision: 0,
        kind: 'payment_collected',
        amount: spec.collected,
        currency: 'GBP',
        pay_date: payDate,
      })
      .execute();
    await t.db.updateTable('payment_requests').set({ collected_amount: spec.collected }).where('id', '=', payment.id).execute();
  }
  return payment;
}

beforeAll(async () => {
  t = await startTestApp();
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id, { name: 'Northwind, "Foods" Ltd' });
  payrolls = [];
  for (let p = 0; p < 2; p++) {
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
    const employees: string[] = [];
    for (let e = 0; e < 4; e++) {
      employees.push((await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id })).employee.id);
    }
    payrolls.push({ id: payroll.id, employees });
  }
  const quiet = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
  exceptionOnlyPayrollId = quiet.id;
  exceptionOnlyPayrollName = quiet.name;
  // The first payroll spells its first employee's name its own way (decision 0015); a comma and a quote to quote.
  await t.db
    .updateTable('employments')
    .set({ given_name: 'Siobhán', family_name: `O'Donnell, "Jr"` })
    .where('employee_id', '=', payrolls[0]!.employees[0]!)
    .where('payroll_id', '=', payrolls[0]!.id)
    .execute();

  billerA = await createBiller(t.db);
  billerB = await createBiller(t.db);
  operatorHeaders = await authHeaders(t.app, await createOperator(t.db));
  await t.db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: billerA.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Biller A Ltd' })
    .execute();

  const paidOut = await attempt({ biller: billerA, payroll: 0, employee: 0, requested: 12_550, deducted: 12_550, collected: 12_550, outcome: 'collected', pushVersion: 2 });
  paidOutPaymentId = paidOut.id;
  await attempt({ biller: billerA, payroll: 0, employee: 1, requested: 5000, deducted: 2000, collected: 2000, outcome: 'carried', carriedTo: NEXT_PAY_DATE });
  await attempt({ biller: billerB, payroll: 0, employee: 2, requested: 7000, deducted: null, collected: 0, outcome: null });
  await attempt({ biller: billerB, payroll: 1, employee: 0, requested: 3000, deducted: 0, collected: 0, outcome: 'failed' });
  await attempt({ biller: billerA, payroll: 1, employee: 1, requested: 999, deducted: 999, collected: 999, outcome: 'collected' });
  await attempt({ biller: billerB, payroll: 1, employee: 3, requested: 4321, deducted: 4000, collected: 4000, outcome: 'partially_collected' });
  // Enough further rows that small pages have to continue across payrolls.
  for (let i = 0; i < 14; i++) {
    const amount = 1000 + i * 137;
    await attempt({ biller: i % 3 === 0 ? billerB : billerA, payroll: i % 2, employee: 3, requested: amount, deducted: amount, collected: amount, outcome: 'collected' });
  }
  // Another pay date: never in this pay date's report.
  await attempt({ biller: billerA, payroll: 0, employee: 0, requested: 1111, deducted: 1111, collected: 1111, outcome: 'collected', payDate: OTHER_PAY_DATE });

  const summary = await runPayouts(t.db, { funding: 'deducted', today: '2026-12-01', settlementDelayWorkingDays: 1, holidays: new Set() });
  payoutId = (summary.groups.find((group) => group.billerClientId === billerA.clientId) as { payoutId: string }).payoutId;

  await t.db
    .insertInto('reconciliation_exceptions')
    .values([
      {
        payroll_id: payrolls[0]!.id,
        pay_date: PAY_DATE,
        employee_id: payrolls[0]!.employees[3]!,
        kind: 'unexpected_employee',
        amount: 2500,
        currency: 'GBP',
        record_version: 1,
        detail: 'deducted without a request',
      },
      {
        payroll_id: payrolls[0]!.id,
        pay_date: PAY_DATE,
        employee_id: payrolls[0]!.employees[0]!,
        kind: 'over_deduction',
        amount: 100,
        currency: 'GBP',
        record_version: 2,
        detail: 'deducted more than requested',
      },
      {
        payroll_id: exceptionOnlyPayrollId,
        pay_date: PAY_DATE,
        employee_id: null,
        kind: 'missing_confirmation',
        amount: null,
        currency: null,
        record_version: null,
        detail: 'no confirmation',
      },
      {
        payroll_id: payrolls[1]!.id,
        pay_date: OTHER_PAY_DATE,
        employee_id: null,
        kind: 'missing_confirmation',
        amount: null,
        currency: null,
        record_version: null,
        detail: 'no confirmation',
      },
    ])
    .execute();
});
afterAll(async () => t?.close());

const report = (query: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url: `/reports/reconciliation?${query}`, headers });

type CsvRow = Record<(typeof reconciliationColumns)[number], string>;
const rowsOf = (csv: string) => parse(csv, { columns: true }) as CsvRow[];

const DECIMAL = /^-?\d+\.\d{2}$/;
/** GBP decimal string back to minor units, by moving the point (no float arithmetic). */
function minor(value: string): number {
  expect(value).toMatch(DECIMAL);
  return Number(value.replace('.', ''));
}

async function databaseTotals(filter: { billerClientId?: string; payrollId?: string } = {}) {
  let query = t.db
    .selectFrom('collection_attempts as ca')
    .innerJoin('payment_requests as pr', 'pr.id', 'ca.payment_request_id')
    .select((eb) => [
      eb.fn.countAll<number>().as('rows'),
      eb.fn.sum<number>('ca.requested_amount').as('requested'),
      eb.fn.sum<number>(eb.fn.coalesce('ca.deducted_amount', eb.val(0))).as('deducted'),
      eb.fn.sum<number>('ca.collected_amount').as('collected'),
      eb.fn.sum<number>('ca.shortfall_amount').as('shortfall'),
    ])
    .where('ca.pay_date', '=', PAY_DATE);
  if (filter.billerClientId) query = query.where('pr.biller_client_id', '=', filter.billerClientId);
  if (filter.payrollId) query = query.where('ca.payroll_id', '=', filter.payrollId);
  const totals = await query.executeTakeFirstOrThrow();
  return Object.fromEntries(Object.entries(totals).map(([key, value]) => [key, Number(value)]));
}

function csvTotals(rows: CsvRow[]) {
  const sum = (column: 'requested' | 'deducted' | 'collected' | 'shortfall') => rows.reduce((total, row) => total + (row[column] === '' ? 0 : minor(row[column])), 0);
  return { rows: rows.length, requested: sum('requested'), deducted: sum('deducted'), collected: sum('collected'), shortfall: sum('shortfall') };
}

/** Per employee and payroll: the name the report should print (the employment's, else the person's) and the works number. */
async function employeesAsNamed() {
  const rows = await t.db
    .selectFrom('employments as em')
    .innerJoin('employees as e', 'e.id', 'em.employee_id')
    .innerJoin('payrolls as p', 'p.id', 'em.payroll_id')
    .select([
      'em.employee_id',
      'em.payroll_id',
      'em.given_name',
      'em.family_name',
      'e.given_name as person_given',
      'e.family_name as person_family',
      'em.payroll_reference',
      'p.name as payroll',
    ])
    .execute();
  return new Map(
    rows.map((row) => [
      `${row.payroll_id} ${row.employee_id}`,
      { payroll: row.payroll, employee_name: `${row.given_name ?? row.person_given} ${row.family_name ?? row.person_family}`, payroll_reference: row.payroll_reference },
    ]),
  );
}

describe('GET /reports/reconciliation', () => {
  it('streams the whole pay date to an operator as a CSV attachment whose totals are the database’s', async () => {
    const response = await report(`pay_date=${PAY_DATE}`, operatorHeaders);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="reconciliation-${PAY_DATE}.csv"`);
    expect(response.body.split('\n')[0]).toBe(reconciliationColumns.join(','));

    const rows = rowsOf(response.body);
    expect(Object.keys(rows[0]!)).toEqual([...reconciliationColumns]);
    expect(csvTotals(rows)).toEqual(await databaseTotals());
    expect(rows.every((row) => row.pay_date === PAY_DATE && row.pay_period === '8-2026')).toBe(true);
    expect(new Set(rows.map((row) => row.payroll_id))).toEqual(new Set(payrolls.map((payroll) => payroll.id)));
  });

  it('keeps the columns finance addresses by position; the payroll, employee name and works number come last', () => {
    expect(reconciliationColumns).toEqual([
      'payroll_id',
      'employer',
      'pay_date',
      'pay_period',
      'employee_id',
      'mandate_id',
      'payment_id',
      'biller',
      'currency',
      'requested',
      'deducted',
      'collected',
      'shortfall',
      'carried_to',
      'status',
      'push_version',
      'payout_id',
      'payroll',
      'employee_name',
      'payroll_reference',
    ]);
    expect(reconciliationSummaryColumns.at(-1)).toBe('payroll');
  });

  it("names each row's payroll and employee (the payroll's spelling of the name, else the person's) with the works number, which a biller's report leaves out", async () => {
    const rows = rowsOf((await report(`pay_date=${PAY_DATE}`, operatorHeaders)).body);
    const named = await employeesAsNamed();
    for (const row of rows) {
      const expected = named.get(`${row.payroll_id} ${row.employee_id}`)!;
      expect(row).toMatchObject(expected);
      expect(row.employee_name).toMatch(/^\S.* \S+/);
      expect(row.payroll_reference).toMatch(/^WN\d+$/);
    }
    // The employment's own spelling wins over the name first recorded on the person.
    expect(rows.find((row) => row.payment_id === paidOutPaymentId)).toMatchObject({ employee_name: `Siobhán O'Donnell, "Jr"` });
    expect(rows.filter((row) => row.employee_name.startsWith('Alex Taylor')).length).toBeGreaterThan(0);
    // A biller's own report names its own payments' employees the same way, without the employer's works number.
    const own = rowsOf((await report(`pay_date=${PAY_DATE}`, await authHeaders(t.app, billerA))).body);
    expect(own.length).toBeGreaterThan(0);
    for (const row of own) expect(row).toMatchObject({ ...named.get(`${row.payroll_id} ${row.employee_id}`)!, payroll_reference: '' });
  });

  it('writes money as decimal strings and each attempt’s outcome, carry, push version and payout', async () => {
    const rows = rowsOf((await report(`pay_date=${PAY_DATE}`, operatorHeaders)).body);
    const paidOut = rows.find((row) => row.payment_id === paidOutPaymentId)!;
    const biller = await t.db.selectFrom('clients').select('name').where('id', '=', billerA.clientId).executeTakeFirstOrThrow();
    expect(paidOut).toMatchObject({
      employer: 'Northwind, "Foods" Ltd',
      biller: biller.name,
      currency: 'GBP',
      requested: '125.50',
      deducted: '125.50',
      collected: '125.50',
      shortfall: '0.00',
      carried_to: '',
      status: 'collected',
      push_version: '2',
      payout_id: payoutId,
    });
    expect(rows.find((row) => row.requested === '50.00')).toMatchObject({
      deducted: '20.00',
      collected: '20.00',
      shortfall: '30.00',
      carried_to: NEXT_PAY_DATE,
      status: 'carried',
    });
    expect(rows.find((row) => row.requested === '70.00')).toMatchObject({ deducted: '', collected: '0.00', status: 'unreconciled', push_version: '', payout_id: '' });
    expect(rows.find((row) => row.requested === '43.21')).toMatchObject({ deducted: '40.00', shortfall: '3.21', status: 'partially_collected', payout_id: '' });
    for (const row of rows) {
      for (const column of ['requested', 'collected', 'shortfall'] as const) expect(row[column]).toMatch(DECIMAL);
      if (row.deducted !== '') expect(row.deducted).toMatch(DECIMAL);
    }
    // Biller A's settled collections were paid out; biller B has no beneficiary account, so nothing was.
    const mandates = await t.db.selectFrom('payment_requests').select(['id', 'mandate_id', 'employee_id', 'biller_client_id']).execute();
    for (const row of rows) {
      const payment = mandates.find((candidate) => candidate.id === row.payment_id)!;
      expect(row.mandate_id).toBe(payment.mandate_id);
      expect(row.employee_id).toBe(payment.employee_id);
      expect(row.payout_id).toBe(payment.biller_client_id === billerA.clientId && row.collected !== '0.00' ? payoutId : '');
    }
  });

  it('gives a biller only the rows of its own payment requests', async () => {
    for (const biller of [billerA, billerB]) {
      const response = await report(`pay_date=${PAY_DATE}`, await authHeaders(t.app, biller));
      expect(response.statusCode).toBe(200);
      const rows = rowsOf(response.body);
      const own = await t.db.selectFrom('payment_requests').select('id').where('biller_client_id', '=', biller.clientId).execute();
      const ownIds = new Set(own.map((payment) => payment.id));
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((row) => ownIds.has(row.payment_id))).toBe(true);
      expect(csvTotals(rows)).toEqual(await databaseTotals({ billerClientId: biller.clientId }));
    }
  });

  it('narrows to one payroll, and answers a header only when nothing matches', async () => {
    const payrollId = payrolls[1]!.id;
    const rows = rowsOf((await report(`pay_date=${PAY_DATE}&payroll_id=${payrollId}`, operatorHeaders)).body);
    expect(rows.every((row) => row.payroll_id === payrollId)).toBe(true);
    expect(csvTotals(rows)).toEqual(await databaseTotals({ payrollId }));

    const empty = await report('pay_date=2027-01-29', operatorHeaders);
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toBe(`${reconciliationColumns.join(',')}\n`);
  });

  it('refuses a missing or malformed query (400), no credentials (401), and clients without reports:read (403)', async () => {
    expect((await report('', operatorHeaders)).statusCode).toBe(400);
    expect((await report(`pay_date=${PAY_DATE}&payroll_id=nope`, operatorHeaders)).statusCode).toBe(400);
    expect((await report(`pay_date=${PAY_DATE}&extra=1`, operatorHeaders)).statusCode).toBe(400);
    expect((await report(`pay_date=${PAY_DATE}`, {})).statusCode).toBe(401);
    const provider = await report(`pay_date=${PAY_DATE}`, await authHeaders(t.app, await createProviderClient(t.db)));
    expect(provider.statusCode).toBe(403);
    const narrowed = await report(`pay_date=${PAY_DATE}`, await authHeaders(t.app, billerA, 'payments:read'));
    expect(narrowed.statusCode).toBe(403);
    expect(narrowed.headers['www-authenticate']).toContain('insufficient_scope');
  });
});

describe('csvLine', () => {
  it('writes exactly what csv-stringify writes, and csv-parse reads the fields back', () => {
    const field = fc.oneof(fc.string(), fc.constantFrom('a,b', 'say "hi"', 'line\nbreak', 'cr\rlf', '"', ',', ' padded ', 'Zoë & Søn'));
    fc.assert(
      fc.property(fc.array(field, { minLength: 2, maxLength: 8 }), (fields) => {
        const line = csvLine(fields);
        expect(line).toBe(stringify([fields]));
        expect(parse(line)).toEqual([fields]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('payoutIdsCell', () => {
  it('lists each payout once, in id order, whatever the order and repeats of the entries', () => {
    fc.assert(
      fc.property(fc.array(fc.uuid(), { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), (ids, picks) => {
        const entries = picks.map((pick) => ids[pick % ids.length]!);
        expect(payoutIdsCell(entries.join(' '))).toBe([...new Set(entries)].sort().join(' '));
      }),
    );
    expect(payoutIdsCell(null)).toBe('');
  });
});

describe('reconciliationCsvLine', () => {
  it('writes exactly csvLine of toReconciliationRecord, whatever the names and values', () => {
    const name = fc.oneof(fc.string(), fc.constantFrom('Acme, Ltd', 'say "hi"', 'line\nbreak', 'cr\rlf', 'Zoë & Søn'));
    const minor = fc.integer({ min: 0, max: 999_999_999_999 });
    const row = fc.record({
      payroll_id: fc.uuid(),
      pay_date: fc.constantFrom(PAY_DATE, NEXT_PAY_DATE),
      employee_id: fc.uuid(),
      mandate_id: fc.uuid(),
      payment_id: fc.uuid(),
      biller_client_id: fc.uuid(),
      currency: fc.constantFrom('GBP', 'JPY', 'BHD', 'CLF'),
      requested_amount: minor,
      deducted_amount: fc.option(minor),
      collected_amount: minor,
      shortfall_amount: minor,
      carried_to_pay_date: fc.option(fc.constant(NEXT_PAY_DATE)),
      outcome: fc.constantFrom('collected', 'carried', 'failed', 'partially_collected', null),
      push_version: fc.option(fc.integer({ min: 0, max: 2 ** 40 })),
      payout_ids: fc.option(fc.array(fc.uuid(), { minLength: 1, maxLength: 3 }).map((ids) => ids.join(' '))),
      // Per row, from outside: a payroll's spelling of a name, a works number (either absent without an employment).
      employee_name: fc.option(fc.oneof(fc.string(), fc.constantFrom("O'Donnell, Siobhán", '=cmd|calc', '"Al" Smith', '-1 Taylor'))),
      payroll_reference: fc.option(fc.oneof(fc.string(), fc.constantFrom('+44 20 7946 0000', '00123', 'WN,1', '@ref'))),
    });
    fc.assert(
      fc.property(row, name, name, name, fc.constantFrom('8-2026', '12-2026'), (r, employer, payroll, biller, payPeriod) => {
        const labels = { payrolls: new Map([[r.payroll_id, { employer, payroll, payPeriod }]]), billers: new Map([[r.biller_client_id, biller]]) };
        expect(reconciliationCsvLine(r, toCsvLabels(labels))).toBe(csvLine(toReconciliationRecord(r, labels)));
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('the streamed CSV', () => {
  it('is exactly csvLine of toReconciliationRecord for every row: amounts in any exponent, absent values, names to quote', async () => {
    const provider = await createPayrollProvider(t.db);
    const employer = await createEmployer(t.db, provider.id, { name: 'Line\nbreak, "quoted" & Søn' });
    const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, payDates: calendar });
    const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
    // Per-row text from outside to quote and neutralise: a name with a line break, a comma and a quote, a formula-like works number.
    await t.db
      .updateTable('employments')
      .set({ given_name: '=Zoë\nAnn', family_name: 'Søn, "x"', payroll_reference: '-007' })
      .where('employee_id', '=', employee.id)
      .execute();
    const mandate = await createMandateRow(t.db, { billerClientId: billerA.clientId, employeeId: employee.id, payrollId: payroll.id });
    const cases: Array<{ currency: string; amounts: [number, number | null, number, number]; outcome: Outcome; carried?: string; push?: number; payouts?: number }> = [
      { currency: 'GBP', amounts: [3, 0, 0, 3], outcome: 'failed', push: 1 },
      { currency: 'GBP', amounts: [1, 9, 10, 99], outcome: 'collected', push: 2 ** 40, payouts: 2 },
      { currency: 'GBP', amounts: [100, null, 101, 999_999_999_999_999], outcome: null },
      { currency: 'JPY', amounts: [5, 0, 12_345, 1], outcome: 'carried', carried: NEXT_PAY_DATE, push: 3, payouts: 1 },
      { currency: 'BHD', amounts: [1_234, 5, 1_000, 999], outcome: 'partially_collected', push: 1 },
      { currency: 'CLF', amounts: [12_345_678, 1, 10_000, 9_999], outcome: 'collected', push: 1, payouts: 3 },
    ];
    // Three entries of one attempt in two payouts: the cell lists each payout once, in id order.
    const [firstPayout, secondPayout] = [crypto.randomUUID(), crypto.randomUUID()].sort() as [string, string];
    const payoutsOfEntries = [secondPayout, firstPayout, secondPayout];
    for (const spec of cases) {
      const payment = await createPaymentRequestRow(t.db, { mandate, amount: 1_000_000_000_000_000 - 1, targetPayDate: OTHER_PAY_DATE });
      const [requested, deducted, collected, shortfall] = spec.amounts;
      const row = await createCollectionAttemptRow(t.db, payment, {
        currency: spec.currency,
        pay_date: OTHER_PAY_DATE,
        attempt_number: 1,
        requested_amount: requested,
        deducted_amount: deducted,
        collected_amount: collected,
        shortfall_amount: shortfall,
        carried_to_pay_date: spec.carried ?? null,
        outcome: spec.outcome,
        push_version: spec.push ?? null,
      });
      for (let i = 0; i < (spec.payouts ?? 0); i++) {
        await t.db
          .insertInto('ledger_entries')
          .values({
            biller_client_id: payment.biller_client_id,
            payment_request_id: payment.id,
            collection_attempt_id: row.id,
            revision: i,
            kind: 'payment_collected',
            amount: 1,
            currency: spec.currency,
            pay_date: OTHER_PAY_DATE,
            payout_id: spec.payouts === 3 ? payoutsOfEntries[i]! : crypto.randomUUID(),
          })
          .execute();
      }
    }

    const filter = { payDate: OTHER_PAY_DATE, payrollId: payroll.id };
    const records: string[][] = [];
    for await (const record of reconciliationRecords(t.db, filter, 4)) records.push(record);
    expect(records).toHaveLength(cases.length);
    const chunks: Buffer[] = [];
    for await (const chunk of reconciliationCsvStream(t.db, filter, 4)) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(csvLine(reconciliationColumns) + records.map(csvLine).join(''));
    expect(records.find((record) => record[8] === 'CLF')![16]).toBe(`${firstPayout} ${secondPayout}`);
    for (const record of records) expect(record.slice(17)).toEqual([payroll.name, `'=Zoë\nAnn Søn, "x"`, `'-007`]);
    expect(parse(Buffer.concat(chunks).toString('utf8'), { columns: true })).toEqual(
      records.map(() => expect.objectContaining({ payroll: payroll.name, employee_name: `'=Zoë\nAnn Søn, "x"`, payroll_reference: `'-007` })),
    );
    // And both are right: amounts in each currency's exponent, absent ones empty.
    const amounts = records.map((record) => [record[8], ...record.slice(9, 13), record[14]]);
    expect(amounts).toEqual(
      expect.arrayContaining([
        ['GBP', '0.03', '0.00', '0.00', '0.03', 'failed'],
        ['GBP', '0.01', '0.09', '0.10', '0.99', 'collected'],
        ['GBP', '1.00', '', '1.01', '9999999999999.99', 'unreconciled'],
        ['JPY', '5', '0', '12345', '1', 'carried'],
        ['BHD', '1.234', '0.005', '1.000', '0.999', 'partially_collected'],
        ['CLF', '1234.5678', '0.0001', '1.0000', '0.9999', 'collected'],
      ]),
    );
  });
});

describe('reconciliation records', () => {
  it('reads batch by batch without losing, repeating or reordering a row', async () => {
    const collect = async (batchSize: number, billerClientId?: string) => {
      const records: string[][] = [];
      for await (const record of reconciliationRecords(t.db, { payDate: PAY_DATE, billerClientId }, batchSize)) records.push(record);
      return records;
    };
    const whole = await collect(10_000);
    expect(whole.length).toBe((await databaseTotals()).rows);
    for (const batchSize of [1, 3, 7, whole.length]) expect(await collect(batchSize)).toEqual(whole);
    expect(await collect(2, billerB.clientId)).toEqual(await collect(10_000, billerB.clientId));
    // Ordered by payroll, then attempt: each payroll's rows are contiguous.
    const payrollOrder = whole.map((record) => record[0]);
    expect(payrollOrder).toEqual([...payrollOrder].sort());
  });
});

describe('deductions export reconciliation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reconciliation-'));

  it('writes the same bytes as the API answers an operator for the same query', async () => {
    for (const [query, payrollId] of [
      [`pay_date=${PAY_DATE}`, undefined],
      [`pay_date=${PAY_DATE}&payroll_id=${payrolls[0]!.id}`, payrolls[0]!.id],
    ] as const) {
      const out = join(dir, `rows-${payrollId ?? 'all'}.csv`);
      await exportReconciliation(t.db, { payDate: PAY_DATE, payrollId, out });
      const api = await report(query, operatorHeaders);
      expect(api.rawPayload.length).toBeGreaterThan(reconciliationColumns.join(',').length + 1);
      expect(readFileSync(out).equals(api.rawPayload)).toBe(true);
    }
  });

  it('writes the per-payroll summary whose totals and exception counts are the database’s', async () => {
    const out = join(dir, 'summary.csv');
    await exportReconciliation(t.db, { payDate: PAY_DATE, summary: true, out });
    const text = readFileSync(out, 'utf8');
    expect(text.split('\n')[0]).toBe(reconciliationSummaryColumns.join(','));
    const rows = parse(text, { columns: true }) as Array<Record<(typeof reconciliationSummaryColumns)[number], string>>;
    expect(rows.map((row) => row.payroll_id).sort()).toEqual([...payrolls.map((payroll) => payroll.id), exceptionOnlyPayrollId].sort());
    for (const row of rows) {
      expect(row).toMatchObject({ employer: 'Northwind, "Foods" Ltd', pay_date: PAY_DATE, currency: 'GBP' });
      const expected = await databaseTotals({ payrollId: row.payroll_id });
      const { rows: _count, ...sums } = expected;
      expect({
        requested: minor(row.requested),
        deducted: minor(row.deducted),
        collected: minor(row.collected),
        shortfall: minor(row.shortfall),
      }).toEqual(row.payroll_id === exceptionOnlyPayrollId ? { requested: 0, deducted: 0, collected: 0, shortfall: 0 } : sums);
    }
    const exceptions = Object.fromEntries(rows.map((row) => [row.payroll_id, row.exceptions]));
    expect(exceptions).toEqual({ [payrolls[0]!.id]: '2', [payrolls[1]!.id]: '0', [exceptionOnlyPayrollId]: '1' });
    // Held money is the current exceptions' amounts; these attempts were written without records, so
    // payroll reported nothing and the summary says how much it cannot place.
    const held = Object.fromEntries(rows.map((row) => [row.payroll_id, [row.reported, row.held_over_deductions, row.held_unexpected_employees, row.unaccounted]]));
    const collectedOf = (payrollId: string) => minor(rows.find((row) => row.payroll_id === payrollId)!.collected);
    const money = (minorUnits: number) => formatMinorUnits(minorUnits, 'GBP');
    expect(held).toEqual({
      [payrolls[0]!.id]: ['0.00', '1.00', '25.00', money(-(collectedOf(payrolls[0]!.id) + 2_600))],
      [payrolls[1]!.id]: ['0.00', '0.00', '0.00', money(-collectedOf(payrolls[1]!.id))],
      [exceptionOnlyPayrollId]: ['0.00', '0.00', '0.00', '0.00'],
    });
    const onePayroll = join(dir, 'summary-one.csv');
    await exportReconciliation(t.db, { payDate: PAY_DATE, payrollId: exceptionOnlyPayrollId, summary: true, out: onePayroll });
    expect(parse(readFileSync(onePayroll, 'utf8'), { columns: true })).toEqual([
      {
        payroll_id: exceptionOnlyPayrollId,
        employer: 'Northwind, "Foods" Ltd',
        pay_date: PAY_DATE,
        currency: 'GBP',
        requested: '0.00',
        deducted: '0.00',
        collected: '0.00',
        shortfall: '0.00',
        exceptions: '1',
        reported: '0.00',
        held_over_deductions: '0.00',
        held_unexpected_employees: '0.00',
        unaccounted: '0.00',
        payroll: exceptionOnlyPayrollName,
      },
    ]);
    const allRows = rowsOf((await report(`pay_date=${PAY_DATE}`, operatorHeaders)).body);
    const total = (column: 'collected' | 'requested') => rows.reduce((sum, row) => sum + minor(row[column]), 0);
    expect(total('collected')).toBe(csvTotals(allRows).collected);
    expect(total('requested')).toBe(csvTotals(allRows).requested);
  });

  it('agrees with what payroll reported once reconciled: collected + held = reported, with money held both ways', async () => {
    // Through the real lock and reconciliation: an over-deduction (corrected once), a short one, and
    // a deduction from an employee nothing was asked of.
    await createCollectionAccount(t.db);
    const w = await createWorld(t.db, { employees: 3 });
    const [over, short, stranger] = w.people.map((person) => person.employee.id) as [string, string, string];
    await w.payment(0, 5_000);
    await w.payment(1, 10_000);
    await w.lock(PD1);
    await w.push(over, PD1, 7_000);
    await w.push(over, PD1, 6_500);
    await w.push(short, PD1, 4_000);
    await w.push(stranger, PD1, 1_234);
    await w.reconcile(PD1);

    const out = join(dir, 'summary-held.csv');
    await exportReconciliation(t.db, { payDate: PD1, payrollId: w.payroll.id, summary: true, out });
    const [row, ...more] = parse(readFileSync(out, 'utf8'), { columns: true }) as Array<Record<(typeof reconciliationSummaryColumns)[number], string>>;
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      payroll_id: w.payroll.id,
      requested: '150.00',
      collected: '90.00',
      // The latest record per employee: 65.00 + 40.00 + 12.34.
      reported: '117.34',
      // The current exceptions only: the first record's 20.00 over was superseded by the correction's 15.00.
      held_over_deductions: '15.00',
      held_unexpected_employees: '12.34',
      exceptions: '2',
      unaccounted: '0.00',
    });
    expect(minor(row!.collected) + minor(row!.held_over_deductions) + minor(row!.held_unexpected_employees)).toBe(minor(row!.reported));
  });
});
