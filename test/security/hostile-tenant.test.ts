import type { Job } from 'bullmq';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPayoutsProcessor } from '../../jobs/run-payouts.ts';
import { runMatching } from '../../src/settlement/cash/matching-service.ts';
import { collectStatus, formatStatus } from '../../src/faces/cli/status-command.ts';
import { reconcilePayDate } from '../../src/cycle/reconciliation/reconciliation-service.ts';
import { threeWayReport } from '../../src/settlement/reports/three-way-report.ts';
import { createWorld, PD1, type World } from '../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, reconciledPayDate } from '../support/cash.ts';
import { cliEnvOf, runDeductions } from '../support/cli.ts';
import { signedInAs } from '../support/console.ts';
import { createOperator } from '../support/factories.ts';
import { PROPERTY_SEED } from '../support/property-seed.ts';
import { runtimeOf } from '../support/runtime.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../support/test-app.ts';

// A payroll provider (or a bank file) hostile to everyone else: the largest amounts the schemas allow,
// pushed, confirmed and credited, must never stop another tenant's cash handling. Reports are bounded
// at input (422), sums are exact, and a pay date that still cannot be handled (records stored before
// the bounds) is left behind as its own exception while every other pay date goes on.

const LARGEST_MAJOR = 9_999_999_999_999.99; // the largest amount a JSON number carries exactly
const LARGEST_MINOR = 999_999_999_999_999;
const PER_EMPLOYEE = 1_000_000_000; // MAX_REPORTED_DEDUCTION_MINOR's default: GBP 10,000,000.00
const PER_PAY_DATE = 3_000_000_000; // set below: three employees at the per-employee limit
const ACCOUNT = { sort_code: '60-16-13', account_number: '31926819' };
const TODAY = '2026-11-02';

let t: TestApp;
let operator: Record<string, string>;
beforeAll(async () => {
  t = await startTestApp({ env: { MAX_REPORTED_PAY_DATE_TOTAL_MINOR: String(PER_PAY_DATE), RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' } });
  await t.db
    .insertInto('collection_accounts')
    .values({ currency: 'GBP', ...ACCOUNT, account_holder_name: 'Collections Ltd' })
    .execute();
  operator = await authHeaders(t.app, await createOperator(t.db));
});
afterAll(async () => t?.close());

/** A payroll on PD1 with `employees` people, a payment each, locked: what a provider reports against. */
async function lockedPayroll(employees: number) {
  const w = await createWorld(t.db, { employees });
  for (let i = 0; i < employees; i++) await w.payment(i, 1_000);
  await w.lock(PD1);
  const snapshot = await t.db
    .selectFrom('deduction_snapshots')
    .select(['id', 'pay_period'])
    .where('payroll_id', '=', w.payroll.id)
    .where('status', '<>', 'superseded')
    .executeTakeFirstOrThrow();
  return { ...w, snapshot, headers: await authHeaders(t.app, w.providerClient) };
}
type Locked = Awaited<ReturnType<typeof lockedPayroll>>;

let recordNumber = 0;
const push = (w: Locked, employeeId: string, amount: number, extra: Record<string, unknown> = {}) =>
  injectJson(t.app, {
    method: 'POST',
    url: `/deductions/payroll/${w.payroll.id}`,
    headers: w.headers,
    body: {
      pay_period: w.snapshot.pay_period,
      id: `HOSTILE-${++recordNumber}`,
      version: recordNumber,
      salary_deduction: { employee_id: employeeId, deduction_amount: amount, currency: 'GBP' },
      ...extra,
    },
  });
const confirm = (w: Locked, lines: Array<{ employeeId: string; amount: number }>, total = lines.reduce((sum, line) => sum + Math.round(line.amount * 100), 0) / 100) =>
  injectJson(t.app, {
    method: 'POST',
    url: `/deductions/${w.payroll.id}/confirmation`,
    headers: w.headers,
    body: {
      confirmation: {
        deduction_data_id: w.snapshot.id,
        pay_period: w.snapshot.pay_period,
        currency: 'GBP',
        total_amount: total,
        deductions: lines.map((line) => ({ employee_id: line.employeeId, deducted_amount: line.amount, leaver: false })),
      },
    },
  });
let statementNumber = 0;
/** One statement (one statement_id) of credits, each with a bank reference of its own. */
function statementCsv(credits: Array<{ amount: string; reference: string }>) {
  const statementId = `HOSTILE-${++statementNumber}`;
  const lines = credits.map(
    (c, i) => `${statementId},${ACCOUNT.sort_code},${ACCOUNT.account_number},GBP,${statementId}-R${i},${PD1},,credit,${c.amount},${c.reference},Employer Ltd,`,
  );
  return `statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account\n${lines.join('\n')}\n`;
}
const importStatement = (csv: string) => t.app.inject({ method: 'POST', url: '/bank-statements', headers: { ...operator, 'content-type': 'text/csv' }, payload: csv });
const recordsOf = (payrollId: string) =>
  t.db.selectFrom('deduction_records').select(['employee_id', 'deduction_amount', 'void_id']).where('payroll_id', '=', payrollId).execute();
const openExceptions = async () =>
  (await t.app.inject({ method: 'GET', url: '/admin/pay-date-exceptions', headers: operator })).json().pay_date_exceptions as Array<{
    payroll_id: string;
    stage: string;
    detail: string;
  }>;
const remittanceOf = (payrollId: string) => t.db.selectFrom('remittances').selectAll().where('payroll_id', '=', payrollId).where('pay_date', '=', PD1).executeTakeFirst();
const payoutsOf = (billerClientId: string) => t.db.selectFrom('payouts').select(['amount', 'status']).where('biller_client_id', '=', billerClientId).execute();
const runPayoutJob = (date: string) => runPayoutsProcessor(t.db, t.config, pino({ level: 'silent' }))({ data: { date } } as Job);

/** Records a provider stored before reports were bounded, as SQL would: the only way past the limits now. */
async function storeUnboundedRecords(w: World, amount: number) {
  for (const person of w.people) await w.push(person.employee.id, PD1, amount);
}

describe('what a payroll reports is bounded at input', () => {
  let w: Locked;
  beforeAll(async () => {
    w = await lockedPayroll(4);
  });

  it('refuses an amount over MAX_REPORTED_DEDUCTION_MINOR in a push, its requested payments and a confirmation line, storing nothing', async () => {
    const employee = w.people[0]!.employee.id;
    const pushed = await push(w, employee, LARGEST_MAJOR);
    expect(pushed.statusCode).toBe(422);
    expect(pushed.json()).toMatchObject({
      type: expect.stringMatching(/reported-amount-over-limit$/),
      limit: { name: 'MAX_REPORTED_DEDUCTION_MINOR', amount: PER_EMPLOYEE, currency: 'GBP' },
      errors: [{ pointer: '/salary_deduction/deduction_amount' }],
    });
    const payment = {
      payment_information: {
        payment_reference: 'X',
        payment_amount: LARGEST_MAJOR,
        payment_account: { account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'A' },
      },
    };
    const withPayments = await push(w, employee, 1, { requested_payments: [payment] });
    expect(withPayments.statusCode).toBe(422);
    expect(withPayments.json().errors).toEqual([expect.objectContaining({ pointer: '/requested_payments/0/payment_information/payment_amount' })]);

    const confirmed = await confirm(w, [
      { employeeId: w.people[0]!.employee.id, amount: 10 },
      { employeeId: w.people[1]!.employee.id, amount: 20_000_000 },
    ]);
    expect(confirmed.statusCode).toBe(422);
    expect(confirmed.json()).toMatchObject({
      type: expect.stringMatching(/reported-amount-over-limit$/),
      errors: [{ pointer: '/confirmation/deductions/1/deducted_amount' }],
    });
    expect(await recordsOf(w.payroll.id)).toEqual([]);
  });

  it('refuses the push or confirmation that would take the pay date past MAX_REPORTED_PAY_DATE_TOTAL_MINOR, and takes one that replaces its own', async () => {
    const [a, b, c, d] = w.people.map((p) => p.employee.id);
    for (const employee of [a!, b!, c!]) expect((await push(w, employee, PER_EMPLOYEE / 100)).statusCode).toBe(200);
    const fourth = await push(w, d!, 0.01);
    expect(fourth.statusCode).toBe(422);
    expect(fourth.json()).toMatchObject({ limit: { name: 'MAX_REPORTED_PAY_DATE_TOTAL_MINOR', amount: PER_PAY_DATE } });
    expect(fourth.json().detail).toContain('£30,000,000.00');
    // A new version of an employee already counted replaces it: the pay date stays at the limit.
    expect((await push(w, a!, PER_EMPLOYEE / 100)).statusCode).toBe(200);

    const over = await confirm(
      w,
      [a!, b!, c!, d!].map((employeeId) => ({ employeeId, amount: 7_500_000.01 })),
    );
    expect(over.statusCode).toBe(422);
    expect(over.json().errors).toEqual([expect.objectContaining({ pointer: '/confirmation/total_amount' })]);
    const within = await confirm(
      w,
      [a!, b!, c!, d!].map((employeeId) => ({ employeeId, amount: 7_500_000 })),
    );
    expect(within.statusCode).toBe(201);
  });
});

describe('one pay date that cannot be handled never stops another tenant', () => {
  let honest: Awaited<ReturnType<typeof reconciledPayDate>>;
  let hostile: Locked;
  beforeAll(async () => {
    honest = await reconciledPayDate(t.db);
    hostile = await lockedPayroll(10);
    // Ten records of 9,999,999,999,999.99 add up past 2^53: what reading the pay date's total used to fail on.
    await storeUnboundedRecords(hostile, LARGEST_MINOR);
  });

  it('imports a statement, matches and pays out the other tenant, and records the hostile pay date as its own exception', async () => {
    const imported = await importStatement(statementCsv([{ amount: '248.00', reference: honest.reference }]));
    expect(imported.statusCode).toBe(201);
    expect(imported.json().matching).toMatchObject({ matches: 1 });
    expect(await remittanceOf(honest.payroll.id)).toMatchObject({ received: 24_800, status: 'received' });

    const exceptions = await openExceptions();
    expect(exceptions).toEqual([expect.objectContaining({ payroll_id: hostile.payroll.id, stage: 'remittance' })]);
    expect(exceptions[0]!.detail).toContain('past 2^53');
    const status = await collectStatus(runtimeOf(t));
    expect(status.payDateExceptions.map((e) => e.payroll_id)).toEqual([hostile.payroll.id]);
    expect(formatStatus(status)).toContain(`payroll ${hostile.payroll.name} (${hostile.payroll.id}), pay date ${PD1}: remittance`);

    await runPayoutJob('2026-11-10');
    expect(await payoutsOf(honest.biller.clientId)).toEqual([{ amount: 24_800, status: 'pending' }]);
  });

  it("answers the reports and the console's pages for the pay date with every payroll on it", async () => {
    const detail = await t.app.inject({ method: 'GET', url: `/reports/reconciliation?pay_date=${PD1}`, headers: operator });
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain(honest.payroll.id);
    const threeWay = await t.app.inject({ method: 'GET', url: `/reports/three-way?pay_date=${PD1}`, headers: operator });
    expect(threeWay.statusCode).toBe(200);
    expect(threeWay.body).toContain(honest.payroll.id);
    expect((await threeWayReport(t.db, PD1)).map((row) => row.payroll_id)).toContain(honest.payroll.id);

    const { browser } = await signedInAs(t.app, t.db, 'operator');
    for (const url of [
      `/console/reconciliation?pay_date=${PD1}`,
      `/console/reconciliation/${PD1}/summary.csv`,
      `/console/reconciliation/three-way?pay_date=${PD1}`,
      `/console/payrolls/${hostile.payroll.id}/pay-dates/${PD1}`,
    ]) {
      const page = await browser.get(url);
      expect(page.statusCode, url).toBe(200);
    }
    const summary = await browser.get(`/console/reconciliation/${PD1}/summary.csv`);
    expect(summary.body).toContain(honest.payroll.id);
    expect(summary.body).toContain(hostile.payroll.id);
  });

  it('reconciles the hostile pay date on its own, and an operator void (audited) returns it to what was requested', async () => {
    // Its own reconciliation holds the over-deductions; it does not touch anyone else.
    await reconcilePayDate(t.db, hostile.payroll.id, PD1, { today: '2026-10-31' });

    const refused = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${hostile.payroll.id}/pay-dates/${PD1}/reported-records/void`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { reason: '  ' },
    });
    expect(refused.statusCode).toBe(422);
    const voided = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${hostile.payroll.id}/pay-dates/${PD1}/reported-records/void`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { reason: 'provider pushed test amounts to the live payroll' },
    });
    expect(voided.statusCode).toBe(201);
    expect(voided.json().void).toMatchObject({ records: 10, total_amount: '99999999999999.90', currency: 'GBP', reason: 'provider pushed test amounts to the live payroll' });
    expect((await recordsOf(hostile.payroll.id)).every((r) => r.void_id === voided.json().void.id)).toBe(true);
    const again = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${hostile.payroll.id}/pay-dates/${PD1}/reported-records/void`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { reason: 'again' },
    });
    expect(again.statusCode).toBe(409);

    const audit = await t.db.selectFrom('audit_log').selectAll().where('action', '=', 'deduction_records.voided').execute();
    expect(audit).toEqual([expect.objectContaining({ resource_id: `${hostile.payroll.id}/${PD1}`, reason: 'provider pushed test amounts to the live payroll' })]);

    await runMatching(t.db, cashPolicy(TODAY));
    expect(await openExceptions()).toEqual([]);
    expect(await remittanceOf(hostile.payroll.id)).toMatchObject({ requested: 10_000, deducted: null, expected: 10_000 });
    const listed = await t.app.inject({ method: 'GET', url: `/admin/payrolls/${hostile.payroll.id}/pay-dates/${PD1}/reported-records/voids`, headers: operator });
    expect(listed.json().voids).toHaveLength(1);
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const page = await browser.get(`/console/payrolls/${hostile.payroll.id}/pay-dates/${PD1}`);
    expect(page.body).toContain('Reports voided by an operator');
    expect(page.body).toContain('£99,999,999,999,999.90');
    expect(page.body).toContain('provider pushed test amounts to the live payroll');

    // Reconciled again without the voided records: nothing reported, nothing held as over-deducted.
    await reconcilePayDate(t.db, hostile.payroll.id, PD1, { today: '2026-10-31', final: true });
    const held = await t.db
      .selectFrom('reconciliation_exceptions')
      .select(['kind', 'amount'])
      .where('payroll_id', '=', hostile.payroll.id)
      .where('superseded_at', 'is', null)
      .execute();
    expect(held.filter((e) => e.kind === 'over_deduction')).toEqual([]);
  });

  it('tells a provider re-sending a voided version so (409), and takes a version above it', async () => {
    const w = await lockedPayroll(1);
    const employee = w.people[0]!.employee.id;
    const body = { pay_period: w.snapshot.pay_period, id: 'REC-1', version: 1, salary_deduction: { employee_id: employee, deduction_amount: 10, currency: 'GBP' } };
    const send = (record: object) => injectJson(t.app, { method: 'POST', url: `/deductions/payroll/${w.payroll.id}`, headers: w.headers, body: record });
    expect((await send(body)).statusCode).toBe(200);
    const url = `/admin/payrolls/${w.payroll.id}/pay-dates/${PD1}/reported-records/void`;
    expect(
      (await injectJson(t.app, { method: 'POST', url, headers: { ...operator, 'idempotency-key': crypto.randomUUID() }, body: { reason: 'wrong employee' } })).statusCode,
    ).toBe(201);
    const replayed = await send(body);
    expect(replayed.statusCode).toBe(409);
    expect(replayed.json()).toMatchObject({ type: expect.stringMatching(/deduction-record-voided$/), current_version: 1 });
    expect((await send({ ...body, id: 'REC-2', version: 2 })).statusCode).toBe(200);
    expect((await recordsOf(w.payroll.id)).filter((r) => r.void_id === null)).toEqual([{ employee_id: employee, deduction_amount: 1_000, void_id: null }]);
  });

  it('voids from the command line too, audited with the operator named', async () => {
    const other = await lockedPayroll(2);
    await storeUnboundedRecords(other, LARGEST_MINOR);
    const run = await runDeductions(
      ['payrolls', 'void-records', '--payroll', other.payroll.id, '--pay-date', PD1, '--reason', 'test amounts on the live payroll', '--by', 'alice', '--json'],
      cliEnvOf(t.config),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ records: 2, total_amount: '19999999999999.98', voided_by: 'alice', reason: 'test amounts on the live payroll' });
    expect((await recordsOf(other.payroll.id)).every((r) => r.void_id !== null)).toBe(true);
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor', 'actor_kind'])
      .where('action', '=', 'deduction_records.voided')
      .where('resource_id', '=', `${other.payroll.id}/${PD1}`)
      .execute();
    expect(audit).toEqual([{ actor: 'alice', actor_kind: 'cli' }]);
  });

  it('refuses a manual match that would take a remittance past what is carried exactly, with 422', async () => {
    const imported = await importStatement(statementCsv([{ amount: '9999999999999.99', reference: 'NOT A REFERENCE' }]));
    expect(imported.statusCode).toBe(201);
    const credit = await t.db.selectFrom('bank_credits').select('id').where('remittance_information', '=', 'NOT A REFERENCE').executeTakeFirstOrThrow();
    const before = await remittanceOf(honest.payroll.id);
    const matched = await injectJson(t.app, {
      method: 'POST',
      url: `/bank-credits/${credit.id}/matches`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { allocations: [{ payroll_id: honest.payroll.id, pay_date: PD1, amount: LARGEST_MINOR }], reason: 'hostile' },
    });
    expect(matched.statusCode).toBe(422);
    expect(matched.json().detail).toContain('the most one remittance may receive');
    expect(await remittanceOf(honest.payroll.id)).toEqual(before);
  });

  it('refuses a statement whose credits add up past 2^53 with 422, storing nothing', async () => {
    const before = await t.db
      .selectFrom('bank_statements')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const response = await importStatement(statementCsv(Array.from({ length: 10 }, (_, i) => ({ amount: '9999999999999.99', reference: `BIG${i}` }))));
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.json()).toMatchObject({ type: expect.stringMatching(/statement-rejected$/) });
    expect(response.json().detail).toContain("the statement's credits add up to £99,999,999,999,999.90, more than £9,999,999,999,999.99");
    const after = await t.db
      .selectFrom('bank_statements')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});

describe('property: the largest amounts in every input never stop another tenant', () => {
  it('answers 2xx or 4xx to every hostile report, statement, manual match and void, and the other tenant is paid each round', async () => {
    const hostile = await lockedPayroll(3);
    const ids = hostile.people.map((p) => p.employee.id);
    const amount = fc.oneof(
      fc.constantFrom(LARGEST_MAJOR, -LARGEST_MAJOR, PER_EMPLOYEE / 100, PER_EMPLOYEE / 100 + 0.01, 0, 0.01),
      fc.integer({ min: 0, max: LARGEST_MINOR }).map((minor) => minor / 100),
    );
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(amount, { minLength: 3, maxLength: 3 }),
        amount,
        fc.array(amount, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.boolean(),
        async (lines, pushed, credits, matched, voids) => {
          round += 1;
          const statuses = [
            (await push(hostile, ids[round % ids.length]!, pushed)).statusCode,
            (
              await confirm(
                hostile,
                lines.map((value, i) => ({ employeeId: ids[i]!, amount: value })),
              )
            ).statusCode,
            (await importStatement(statementCsv(credits.map((value, i) => ({ amount: Math.abs(value).toFixed(2), reference: `P${round}-${i}` }))))).statusCode,
          ];
          // Whatever the statement left unmatched, matched by hand to the hostile pay date for any amount.
          const credit = await t.db.selectFrom('bank_credits').select('id').where('matched_amount', '=', 0).where('state', '=', 'open').executeTakeFirst();
          if (credit) {
            const body = { allocations: [{ payroll_id: hostile.payroll.id, pay_date: PD1, amount: matched }], reason: 'hostile' };
            statuses.push(
              (await injectJson(t.app, { method: 'POST', url: `/bank-credits/${credit.id}/matches`, headers: { ...operator, 'idempotency-key': crypto.randomUUID() }, body }))
                .statusCode,
            );
          }
          if (voids) {
            const url = `/admin/payrolls/${hostile.payroll.id}/pay-dates/${PD1}/reported-records/void`;
            statuses.push(
              (await injectJson(t.app, { method: 'POST', url, headers: { ...operator, 'idempotency-key': crypto.randomUUID() }, body: { reason: `round ${round}` } }))
                .statusCode,
            );
          }
          for (const status of statuses) expect(status).toBeLessThan(500);

          // Meanwhile another tenant's whole cash cycle goes through.
          const honest = await reconciledPayDate(t.db);
          const imported = await importStatement(statementCsv([{ amount: '248.00', reference: honest.reference }]));
          expect(imported.statusCode).toBe(201);
          await runPayoutJob('2026-11-10');
          expect(await payoutsOf(honest.biller.clientId)).toEqual([{ amount: 24_800, status: 'pending' }]);
          const report = await t.app.inject({ method: 'GET', url: `/reports/three-way?pay_date=${PD1}`, headers: operator });
          expect(report.statusCode).toBe(200);
        },
      ),
      { seed: PROPERTY_SEED, numRuns: 8 },
    );
  });
});
