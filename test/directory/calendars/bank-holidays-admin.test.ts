import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { savePayCalendar } from '../../../src/directory/calendars/calendar-service.ts';
import type { BankHolidayRegion } from '../../../src/platform/db/tables.ts';
import { createBiller, createEmployer, createOperator, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';

// Adding or removing a one-off bank holiday moves the lock dates of the pay dates the nightly run
// has not locked yet, in that region only; a locked pay date keeps the lock date it was locked with.

let t: TestApp;
let operator: IssuedCredentials;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  operator = await createOperator(t.db);
  headers = await authHeaders(t.app, operator);
});
afterAll(async () => t?.close());

/** A payroll in a region whose provider needs two working days: Tuesday cut-offs lock the Friday before. */
async function payrollIn(region: BankHolidayRegion) {
  const provider = await createPayrollProvider(t.db, { leadTimeWorkingDays: 2 });
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, { providerId: provider.id, employerId: employer.id, frequency: 'weekly' });
  await t.db.updateTable('payrolls').set({ bank_holiday_region: region }).where('id', '=', payroll.id).execute();
  await savePayCalendar(
    t.db,
    payroll.id,
    [
      { pay_date: '2031-06-13', payroll_cutoff_date: '2031-06-10', pay_period: '10-2031' },
      { pay_date: '2031-06-20', payroll_cutoff_date: '2031-06-10', pay_period: '11-2031' },
    ],
    '2031-01-01',
  );
  // The second pay date has been locked by the nightly run.
  await t.db.updateTable('pay_dates').set({ locked_at: new Date() }).where('payroll_id', '=', payroll.id).where('pay_date', '=', '2031-06-20').execute();
  return payroll;
}

async function lockDates(payrollId: string) {
  const rows = await t.db.selectFrom('pay_dates').select(['pay_date', 'lock_date']).where('payroll_id', '=', payrollId).orderBy('pay_date').execute();
  return Object.fromEntries(rows.map((row) => [row.pay_date, row.lock_date]));
}

const post = (body: Record<string, unknown>, key: string = randomUUID()) =>
  injectJson(t.app, { method: 'POST', url: '/admin/bank-holidays', headers: { ...headers, 'idempotency-key': key }, body });

const deductions = (args: string[]) => runDeductions(args, cliEnvOf(t.config));

describe('GET /admin/bank-holidays', () => {
  it("lists a region's library days for a year, marked by source", async () => {
    const response = await t.app.inject({ method: 'GET', url: '/admin/bank-holidays?region=scotland&year=2027', headers });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.region).toBe('scotland');
    expect(body.year).toBe(2027);
    expect(body.bank_holidays.map((h: { date: string }) => h.date)).toEqual([
      '2027-01-01',
      '2027-01-04',
      '2027-03-26',
      '2027-05-03',
      '2027-05-31',
      '2027-08-02',
      '2027-11-30',
      '2027-12-27',
      '2027-12-28',
    ]);
    expect(body.bank_holidays[6]).toEqual({ region: 'scotland', date: '2027-11-30', name: 'St Andrew’s Day', source: 'library', added_by: null, created_at: null });
  });

  it('refuses an unknown region (400 naming it) and callers without admin:read (403)', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: '/admin/bank-holidays?region=wales&year=2027', headers });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors[0].pointer).toBe('/query/region');
    const biller = await createBiller(t.db);
    const forbidden = await t.app.inject({ method: 'GET', url: '/admin/bank-holidays?region=scotland', headers: await authHeaders(t.app, biller) });
    expect(forbidden.statusCode).toBe(403);
  });
});

describe('POST /admin/bank-holidays and DELETE /admin/bank-holidays/{region}/{date}', () => {
  it("an added day moves the region's unlocked lock dates, never a locked one or another region's; removing it moves them back", async () => {
    const england = await payrollIn('england-and-wales');
    const scotland = await payrollIn('scotland');
    expect(await lockDates(england.id)).toEqual({ '2031-06-13': '2031-06-06', '2031-06-20': '2031-06-06' });

    // Monday 9 June 2031 becomes a bank holiday in England and Wales.
    const added = await post({ region: 'england-and-wales', date: '2031-06-09', name: 'State funeral', reason: 'Proclamation' });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toMatchObject({
      bank_holiday: { region: 'england-and-wales', date: '2031-06-09', name: 'State funeral', source: 'ad_hoc', added_by: `client ${operator.clientId}` },
      lock_dates_changed: 1,
    });
    expect(await lockDates(england.id)).toEqual({ '2031-06-13': '2031-06-05', '2031-06-20': '2031-06-06' });
    expect(await lockDates(scotland.id)).toEqual({ '2031-06-13': '2031-06-06', '2031-06-20': '2031-06-06' });

    const listed = await t.app.inject({ method: 'GET', url: '/admin/bank-holidays?region=england-and-wales&year=2031', headers });
    expect(
      listed
        .json()
        .bank_holidays.filter((h: { source: string }) => h.source === 'ad_hoc')
        .map((h: { date: string }) => h.date),
    ).toEqual(['2031-06-09']);

    const removed = await t.app.inject({ method: 'DELETE', url: '/admin/bank-holidays/england-and-wales/2031-06-09?reason=Cancelled', headers });
    expect(removed.statusCode).toBe(200);
    expect(removed.json().lock_dates_changed).toBe(1);
    expect(await lockDates(england.id)).toEqual({ '2031-06-13': '2031-06-06', '2031-06-20': '2031-06-06' });

    const audit = await t.db
      .selectFrom('audit_log')
      .select(['action', 'actor', 'resource_id', 'reason'])
      .where('resource_type', '=', 'bank_holiday')
      .where('resource_id', '=', 'england-and-wales/2031-06-09')
      .orderBy('at')
      .execute();
    expect(audit).toEqual([
      { action: 'bank_holiday.added', actor: operator.clientId, resource_id: 'england-and-wales/2031-06-09', reason: 'Proclamation' },
      { action: 'bank_holiday.removed', actor: operator.clientId, resource_id: 'england-and-wales/2031-06-09', reason: 'Cancelled' },
    ]);
  });

  it('refuses a day that already is a bank holiday (409), and a second add of the same day (409)', async () => {
    const library = await post({ region: 'scotland', date: '2031-12-25', name: 'Christmas again' });
    expect(library.statusCode).toBe(409);
    expect(library.json().detail).toContain('Christmas Day');
    expect((await post({ region: 'scotland', date: '2031-03-03', name: 'One-off' })).statusCode).toBe(201);
    const again = await post({ region: 'scotland', date: '2031-03-03', name: 'One-off' });
    expect(again.statusCode).toBe(409);
    expect(again.json().type).toMatch(/bank-holiday-exists$/);
  });

  it('answers a repeated request with its first answer', async () => {
    const key = randomUUID();
    const body = { region: 'northern-ireland', date: '2031-04-01', name: 'One-off' };
    const first = await post(body, key);
    const replay = await post(body, key);
    expect(first.statusCode).toBe(201);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
  });

  it.each([
    [{ region: 'wales', date: '2031-04-02', name: 'x' }, '/region'],
    [{ region: 'scotland', date: '2031-02-30', name: 'x' }, '/date'],
    [{ region: 'scotland', date: '2031-04-02', name: ' ' }, '/name'],
    [{ region: 'scotland', date: '2031-04-02', name: 'x', extra: 1 }, '/extra'],
  ])('refuses %j with 422 naming %s', async (body, pointer) => {
    const response = await post(body);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  });

  it('removing: 404 for a day nobody added or an unknown region, 409 for a published bank holiday', async () => {
    const del = (path: string) => t.app.inject({ method: 'DELETE', url: `/admin/bank-holidays/${path}`, headers });
    expect((await del('scotland/2031-04-03')).statusCode).toBe(404);
    expect((await del('wales/2031-04-03')).statusCode).toBe(404);
    expect((await del('scotland/not-a-date')).statusCode).toBe(404);
    const published = await del('scotland/2031-12-25');
    expect(published.statusCode).toBe(409);
    expect(published.json().type).toMatch(/library-bank-holiday$/);
  });
});

describe('deductions bank-holidays', () => {
  it('adds, lists and removes a day, printing one JSON object each with --json; a refusal is one line and exit 1', async () => {
    const add = await deductions(['bank-holidays', 'add', '--region', 'northern-ireland', '--date', '2032-02-02', '--name', 'One-off', '--by', 'ops', '--json']);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ bank_holiday: { date: '2032-02-02', source: 'ad_hoc', added_by: 'ops' } });

    const list = await deductions(['bank-holidays', 'list', '--region', 'northern-ireland', '--year', '2032', '--json']);
    const listed = JSON.parse(list.stdout);
    expect(listed.bank_holidays.map((h: { date: string; source: string }) => `${h.date} ${h.source}`).slice(0, 3)).toEqual([
      '2032-01-01 library',
      '2032-02-02 ad_hoc',
      '2032-03-17 library',
    ]);

    const again = await deductions(['bank-holidays', 'add', '--region', 'northern-ireland', '--date', '2032-02-02', '--name', 'One-off']);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);

    const remove = await deductions(['bank-holidays', 'remove', '--region', 'northern-ireland', '--date', '2032-02-02', '--json']);
    expect(remove.code).toBe(0);
    expect(JSON.parse(remove.stdout).bank_holiday.date).toBe('2032-02-02');
    const audit = await t.db
      .selectFrom('audit_log')
      .select(['actor_kind', 'actor', 'action'])
      .where('resource_id', '=', 'northern-ireland/2032-02-02')
      .orderBy('at')
      .execute();
    expect(audit.map((row) => [row.actor_kind, row.action])).toEqual([
      ['cli', 'bank_holiday.added'],
      ['cli', 'bank_holiday.removed'],
    ]);
    expect(audit[0]!.actor).toBe('ops');
  }, 120_000);
});
