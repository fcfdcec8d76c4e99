import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { regionalHolidays } from '../../../src/directory/calendars/bank-holidays.ts';
import { payDatesFromRule } from '../../../src/directory/calendars/calendar-generation.ts';
import { lockDate } from '../../../src/directory/calendars/lock-date.ts';
import { payCalendarRuleSchema } from '../../../src/directory/calendars/pay-calendar-resource.ts';
import { insertPayrollProvider } from '../../../src/faces/cli/demo/demo-repository.ts';
import type { BankHolidayRegion } from '../../../src/platform/db/tables.ts';
import { startSandboxProvider, type RunningSandboxProvider } from '../../../src/faces/http/sandbox-server.ts';
import { httpAdapterFactory } from '../../../src/directory/payroll-providers/http-adapter.ts';
import { generateSandboxDirectory } from '../../../src/faces/sandbox/sandbox-directory.ts';
import {
  createBiller,
  createEmployee,
  createEmployer,
  createMandateRow,
  createOperator,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
} from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';

// A new calendar, generated, imported or synced, replaces a payroll's unlocked pay dates in its
// range. What has been locked was locked and instructed: a change that would touch it is refused
// whole, as is one removing a pay date payment requests target.

let t: TestApp;
let sandbox: RunningSandboxProvider;
let operator: IssuedCredentials;
let headers: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandboxProvider({
    directory: generateSandboxDirectory({ seed: 'calendar-sync', employers: 1, payrollsPerEmployer: 1, employeesPerPayroll: 2, today: '2026-11-02' }),
    clientId: 'svc',
    clientSecret: 'secret-of-svc',
  });
  t = await startTestApp({ adapterFor: httpAdapterFactory({ timeoutMs: 3_000, backoffBaseMs: 10 }) });
  operator = await createOperator(t.db);
  headers = await authHeaders(t.app, operator);
});
afterAll(async () => {
  await sandbox?.close();
  await t?.close();
});

async function payrollIn(region: BankHolidayRegion, frequency: 'monthly' | 'weekly' = 'monthly') {
  const provider = await createPayrollProvider(t.db, { leadTimeWorkingDays: 2 });
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, frequency });
  await t.db.updateTable('payrolls').set({ bank_holiday_region: region }).where('id', '=', payroll.id).execute();
  return { provider, employer, payroll };
}

const MONTHLY_LAST_WORKING_DAY = { frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 5 };
const MONTHLY_25TH = { frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, if_not_working_day: 'earlier', cutoff_working_days: 5 };

function post(url: string, body?: Record<string, unknown>, key: string = randomUUID()) {
  return injectJson(t.app, { method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, ...(body === undefined ? {} : { body }) });
}

const generate = (payrollId: string, rule: Record<string, unknown>, from: string, until: string, key?: string) =>
  post(`/admin/payrolls/${payrollId}/pay-calendar/generate`, { rule, from, until }, key);

const importCsv = (payrollId: string, csv: string, contentType = 'text/csv') =>
  t.app.inject({
    method: 'POST',
    url: `/admin/payrolls/${payrollId}/pay-calendar/import?reason=From%20the%20clerk`,
    headers: { ...headers, 'idempotency-key': randomUUID(), 'content-type': contentType },
    payload: csv,
  });

async function stored(payrollId: string) {
  return t.db.selectFrom('pay_dates').select(['pay_date', 'payroll_cutoff_date', 'pay_period', 'lock_date']).where('payroll_id', '=', payrollId).orderBy('pay_date').execute();
}

const lock = (payrollId: string, payDate: string) =>
  t.db.updateTable('pay_dates').set({ locked_at: new Date() }).where('payroll_id', '=', payrollId).where('pay_date', '=', payDate).execute();

describe('POST /admin/payrolls/{payroll_id}/pay-calendar/generate', () => {
  it("stores the rule's pay dates with lock dates from the lead time and the payroll region's bank holidays", async () => {
    const { payroll } = await payrollIn('scotland');
    const response = await generate(payroll.id, MONTHLY_LAST_WORKING_DAY, '2027-01-01', '2027-12-31');
    expect(response.statusCode).toBe(200);
    const holidays = regionalHolidays('scotland');
    const expected = payDatesFromRule(payCalendarRuleSchema.parse(MONTHLY_LAST_WORKING_DAY), { from: '2027-01-01', until: '2027-12-31' }, holidays).map((d) => ({
      ...d,
      lock_date: lockDate(d.payroll_cutoff_date, 2, holidays),
    }));
    expect(await stored(payroll.id)).toEqual(expected);
    // St Andrew's Day, Tuesday 30 November 2027, is no working day in Scotland.
    expect(expected.map((d) => d.pay_date)).toContain('2027-11-29');
    expect(response.json()).toMatchObject({ payroll_id: payroll.id, source: 'rule', from: '2027-01-01', until: '2027-12-31', changed: [], removed: [] });
    expect(response.json().added).toHaveLength(12);

    const shown = await t.app.inject({ method: 'GET', url: `/admin/payrolls/${payroll.id}/pay-dates`, headers });
    expect(shown.statusCode).toBe(200);
    expect(shown.json().bank_holiday_region).toBe('scotland');
    expect(shown.json().pay_dates[10]).toEqual({ ...expected[10], locked: false, locked_at: null, first_locked_at: null });
  });

  it('replaces the unlocked pay dates in its horizon and leaves the rest', async () => {
    const { payroll } = await payrollIn('england-and-wales');
    await generate(payroll.id, MONTHLY_LAST_WORKING_DAY, '2027-01-01', '2027-06-30');
    const response = await generate(payroll.id, MONTHLY_25TH, '2027-04-01', '2027-06-30');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ added: ['2027-04-23', '2027-05-25', '2027-06-25'], removed: ['2027-04-30', '2027-05-28', '2027-06-30'] });
    expect((await stored(payroll.id)).map((d) => d.pay_date)).toEqual(['2027-01-29', '2027-02-26', '2027-03-31', '2027-04-23', '2027-05-25', '2027-06-25']);
    const audit = await t.db.selectFrom('audit_log').select(['action', 'actor']).where('resource_id', '=', payroll.id).orderBy('at').execute();
    expect(audit).toEqual([
      { action: 'pay_calendar.generated', actor: operator.clientId },
      { action: 'pay_calendar.generated', actor: operator.clientId },
    ]);
  });

  it('refuses with 409, naming the date, a calendar that would move, remove or alter a locked pay date; nothing changes', async () => {
    const { payroll } = await payrollIn('england-and-wales');
    await generate(payroll.id, MONTHLY_LAST_WORKING_DAY, '2027-01-01', '2027-06-30');
    await lock(payroll.id, '2027-02-26');
    const before = await stored(payroll.id);

    const moved = await generate(payroll.id, MONTHLY_25TH, '2027-01-01', '2027-06-30');
    expect(moved.statusCode).toBe(409);
    expect(moved.json().type).toMatch(/locked-pay-date$/);
    expect(moved.json().pay_dates).toContain('2027-02-26');
    expect(moved.json().detail).toContain('pay date 2027-02-26 is locked');

    const altered = await generate(payroll.id, { ...MONTHLY_LAST_WORKING_DAY, cutoff_working_days: 3 }, '2027-02-01', '2027-02-28');
    expect(altered.statusCode).toBe(409);
    expect(altered.json().detail).toContain('changes its payroll_cutoff_date');

    const removed = await importCsv(payroll.id, 'pay_date,payroll_cutoff_date\n2027-02-25,2027-02-18\n2027-03-31,2027-03-24\n');
    expect(removed.statusCode).toBe(409);
    expect(removed.json().pay_dates).toEqual(['2027-02-26']);
    expect(await stored(payroll.id)).toEqual(before);

    // Leaving the locked pay date as it is, the rest may change.
    const around = await generate(payroll.id, { ...MONTHLY_LAST_WORKING_DAY, cutoff_working_days: 3 }, '2027-03-01', '2027-06-30');
    expect(around.statusCode).toBe(200);
  });

  it('refuses with 409 a calendar that removes a pay date payment requests target', async () => {
    const { provider, employer, payroll } = await payrollIn('england-and-wales');
    await generate(payroll.id, MONTHLY_LAST_WORKING_DAY, '2027-01-01', '2027-03-31');
    const { employee } = await createEmployee(t.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
    const biller = await createBiller(t.db);
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
    await createPaymentRequestRow(t.db, { mandate, targetPayDate: '2027-02-26' });
    const before = await stored(payroll.id);

    const response = await generate(payroll.id, MONTHLY_25TH, '2027-01-01', '2027-03-31');
    expect(response.statusCode).toBe(409);
    expect(response.json().type).toMatch(/pay-date-in-use$/);
    expect(response.json().pay_dates).toEqual(['2027-02-26']);
    expect(response.json().detail).toContain('pay date 2027-02-26 is the target of 1 payment request');
    expect(await stored(payroll.id)).toEqual(before);
  });

  it('refuses a rule of another frequency (422 naming /rule/frequency), a bad horizon (422 naming /until), an unknown payroll (404)', async () => {
    const { payroll } = await payrollIn('england-and-wales', 'weekly');
    const wrongFrequency = await generate(payroll.id, MONTHLY_25TH, '2027-01-01', '2027-03-31');
    expect(wrongFrequency.statusCode).toBe(422);
    expect(wrongFrequency.json().errors).toEqual([{ pointer: '/rule/frequency', detail: "must be weekly, the payroll's frequency" }]);
    const backwards = await generate(payroll.id, MONTHLY_25TH, '2027-03-31', '2027-01-01');
    expect(backwards.statusCode).toBe(422);
    expect(backwards.json().errors[0].pointer).toBe('/until');
    expect((await generate(randomUUID(), MONTHLY_25TH, '2027-01-01', '2027-03-31')).statusCode).toBe(404);
    expect((await generate('not-a-uuid', MONTHLY_25TH, '2027-01-01', '2027-03-31')).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/admin/payrolls/${randomUUID()}/pay-dates`, headers })).statusCode).toBe(404);
  });

  it('answers a repeated request with its first answer and generates once', async () => {
    const { payroll } = await payrollIn('northern-ireland');
    const key = randomUUID();
    const first = await generate(payroll.id, MONTHLY_25TH, '2027-01-01', '2027-03-31', key);
    const replay = await generate(payroll.id, MONTHLY_25TH, '2027-01-01', '2027-03-31', key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    const audit = await t.db.selectFrom('audit_log').select('action').where('resource_id', '=', payroll.id).execute();
    expect(audit).toHaveLength(1);
  });
});

describe('POST /admin/payrolls/{payroll_id}/pay-calendar/import', () => {
  it('imports a good file; the frequency labels pay dates without a pay_period', async () => {
    const { payroll } = await payrollIn('northern-ireland', 'weekly');
    const response = await importCsv(payroll.id, 'pay_date,payroll_cutoff_date\n2027-03-19,2027-03-18\n2027-03-26,2027-03-23\n');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ source: 'csv', from: '2027-03-19', until: '2027-03-26', added: ['2027-03-19', '2027-03-26'] });
    expect(await stored(payroll.id)).toEqual([
      // Cut-off Thursday 18 March less two working days, St Patrick's Day (Wednesday) skipped: Monday 15 March.
      { pay_date: '2027-03-19', payroll_cutoff_date: '2027-03-18', pay_period: '50-2026', lock_date: '2027-03-15' },
      // Cut-off Tuesday 23 March less two working days: Friday 19 March.
      { pay_date: '2027-03-26', payroll_cutoff_date: '2027-03-23', pay_period: '51-2026', lock_date: '2027-03-19' },
    ]);
    const audit = await t.db.selectFrom('audit_log').select(['action', 'reason']).where('resource_id', '=', payroll.id).execute();
    expect(audit).toEqual([{ action: 'pay_calendar.imported', reason: 'From the clerk' }]);
  });

  it('reports every bad row with its line, column and reason, and imports nothing', async () => {
    const { payroll } = await payrollIn('england-and-wales');
    const response = await importCsv(
      payroll.id,
      'pay_date,payroll_cutoff_date,pay_period\n2027-01-29,2027-01-22,10-2026\n2027-02-30,2027-02-19,11-2026\n2027-03-31,2027-04-07,12-2026\n',
    );
    expect(response.statusCode).toBe(422);
    expect(response.json().row_errors).toEqual([
      { line: 3, column: 'pay_date', reason: "'2027-02-30' is not a date as YYYY-MM-DD" },
      { line: 4, column: 'payroll_cutoff_date', reason: '2027-04-07 is after the pay date 2027-03-31' },
    ]);
    expect(response.json().errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/lines/3/pay_date', '/lines/4/payroll_cutoff_date']);
    expect(await stored(payroll.id)).toEqual([]);
  });

  it('takes text/csv only (415)', async () => {
    const { payroll } = await payrollIn('england-and-wales');
    const response = await importCsv(payroll.id, JSON.stringify({ pay_date: '2027-01-29' }), 'application/json');
    expect(response.statusCode).toBe(415);
  });
});

describe('POST /admin/payrolls/{payroll_id}/pay-calendar/sync', () => {
  it("stores the calendar the provider's payroll information operation publishes", async () => {
    const published = sandbox.directory.payrolls[0]!;
    const provider = await insertPayrollProvider(t.db, {
      name: 'Sandbox',
      api_base_url: sandbox.url,
      api_token_url: sandbox.tokenUrl,
      api_client_id: 'svc',
      api_client_secret: 'secret-of-svc',
      lead_time_working_days: 2,
    });
    const employer = await createEmployer(t.db, provider.id);
    await t.db
      .insertInto('payrolls')
      .values({
        id: published.id,
        employer_id: employer.id,
        payroll_provider_id: provider.id,
        external_id: published.id,
        name: published.name,
        payment_run_frequency: published.payment_run_frequency,
      })
      .execute();

    const response = await post(`/admin/payrolls/${published.id}/pay-calendar/sync`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ source: 'provider', added: published.pay_dates.map((d) => d.pay_date) });
    expect((await stored(published.id)).map((d) => [d.pay_date, d.payroll_cutoff_date, d.pay_period])).toEqual(
      published.pay_dates.map((d) => [d.pay_date, d.payroll_cutoff_date, d.pay_period]),
    );
    const payroll = await t.db.selectFrom('payrolls').select('calendar_synced_at').where('id', '=', published.id).executeTakeFirstOrThrow();
    expect(payroll.calendar_synced_at).toBeInstanceOf(Date);

    // Once a pay date is locked, a provider calendar that alters it is refused.
    const first = published.pay_dates[0]!;
    await lock(published.id, first.pay_date);
    await t.db
      .updateTable('pay_dates')
      .set({ payroll_cutoff_date: '2000-01-01', lock_date: '2000-01-01' })
      .where('payroll_id', '=', published.id)
      .where('pay_date', '=', first.pay_date)
      .execute();
    const refused = await post(`/admin/payrolls/${published.id}/pay-calendar/sync`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().pay_dates).toEqual([first.pay_date]);
  });

  it('refuses a payroll whose provider has no API (409)', async () => {
    const { payroll } = await payrollIn('england-and-wales');
    const response = await post(`/admin/payrolls/${payroll.id}/pay-calendar/sync`);
    expect(response.statusCode).toBe(409);
    expect(response.json().type).toMatch(/provider-without-api$/);
  });
});

const deductions = (args: string[]) => runDeductions(args, cliEnvOf(t.config));

describe('deductions calendars', () => {
  it('generates, imports and shows, one JSON object each with --json; a bad file is one line naming every bad row, exit 1', async () => {
    const { payroll } = await payrollIn('scotland', 'weekly');
    const generated = await deductions([
      'calendars',
      'generate',
      '--payroll',
      payroll.id,
      '--frequency',
      'weekly',
      '--pay-day',
      'anchor',
      '--anchor',
      '2027-01-01',
      '--if-not-working-day',
      'later',
      '--cutoff-working-days',
      '2',
      '--from',
      '2027-01-01',
      '--until',
      '2027-01-31',
      '--by',
      'ops',
      '--json',
    ]);
    expect(generated.stderr).toBe('');
    // 1 January and its Scottish neighbour 2 January (substitute Monday 4 January): paid Tuesday 5 January.
    expect(JSON.parse(generated.stdout).added).toEqual(['2027-01-05', '2027-01-08', '2027-01-15', '2027-01-22', '2027-01-29']);

    const dir = mkdtempSync(path.join(tmpdir(), 'calendar-'));
    const bad = path.join(dir, 'bad.csv');
    writeFileSync(bad, 'pay_date,payroll_cutoff_date\n2027-02-05,2027-02-09\nnot-a-date,2027-02-09\n');
    const refused = await deductions(['calendars', 'import', '--payroll', payroll.id, '--file', bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      "The file has 2 errors, so nothing was imported: line 2 payroll_cutoff_date: 2027-02-09 is after the pay date 2027-02-05; line 3 pay_date: 'not-a-date' is not a date as YYYY-MM-DD",
    ]);

    const good = path.join(dir, 'good.csv');
    writeFileSync(good, 'pay_date,payroll_cutoff_date\n2027-02-05,2027-02-02\n');
    const imported = await deductions(['calendars', 'import', '--payroll', payroll.id, '--file', good, '--json']);
    expect(JSON.parse(imported.stdout)).toMatchObject({ source: 'csv', added: ['2027-02-05'] });

    const shown = await deductions(['calendars', 'show', '--payroll', payroll.id, '--json']);
    const calendar = JSON.parse(shown.stdout);
    expect(calendar).toMatchObject({ payroll_id: payroll.id, bank_holiday_region: 'scotland' });
    expect(calendar.pay_dates.map((d: { pay_date: string }) => d.pay_date)).toEqual(['2027-01-05', '2027-01-08', '2027-01-15', '2027-01-22', '2027-01-29', '2027-02-05']);

    const audit = await t.db.selectFrom('audit_log').select(['actor_kind', 'actor', 'action']).where('resource_id', '=', payroll.id).orderBy('at').execute();
    expect(audit.map((row) => row.action)).toEqual(['pay_calendar.generated', 'pay_calendar.imported']);
    expect(audit[0]).toMatchObject({ actor_kind: 'cli', actor: 'ops' });
  }, 120_000);
});
