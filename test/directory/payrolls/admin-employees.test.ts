import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { employeeEnvelopeSchema } from '../../../src/directory/payrolls/employee-resource.ts';
import { employeeImportReportSchema } from '../../../src/directory/payrolls/employee-import-resource.ts';
import { createBiller, createEmploymentWorld, createMandateRow, createPaymentRequestRow, createProviderClient, createOperator } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';

let t: TestApp;
let operator: Record<string, string>;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;

beforeAll(async () => {
  t = await startTestApp();
  world = await createEmploymentWorld(t.db);
  operator = await authHeaders(t.app, await createOperator(t.db));
});
afterAll(async () => t?.close());

const HEADER = 'payroll_reference,given_name,family_name,date_of_birth,start_date,end_date,employment_status,contract_type,annualised_salary';

const csvOf = (lines: string[]) => `${HEADER}\n${lines.map((line) => `${line}\n`).join('')}`;
const contentDigest = (text: string) => `sha-256=:${createHash('sha256').update(text).digest('base64')}:`;

function importFile(payrollId: string, lines: string[], query = '', headers: Record<string, string> = {}) {
  // A stream, as a client uploading a large file sends it: the route must not need it whole.
  const chunks = [`${HEADER}\n`, ...lines.map((line) => `${line}\n`)].map((text) => Buffer.from(text));
  return t.app.inject({
    method: 'POST',
    url: `/admin/payrolls/${payrollId}/employees/import${query}`,
    headers: {
      ...operator,
      'content-type': 'text/csv',
      'idempotency-key': crypto.randomUUID(),
      'content-digest': contentDigest(csvOf(lines)),
      ...headers,
    },
    payload: Readable.from(chunks),
  });
}

const deductions = (args: string[]) => runDeductions(args, cliEnvOf(t.config));

/** 1,500 rows with a bad date of birth each: more errors than a report lists. */
const manyBadLines = Array.from({ length: 1_500 }, (_, i) => `M-${i},Many,Bad,not-a-date,,,active,,`);
const everyBadLine = Array.from({ length: 1_500 }, (_, i) => String(i + 2));

const spooledErrorFiles = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('employee-import-errors-')));

const employmentCount = async (payrollId: string) =>
  Number(
    (
      await t.db
        .selectFrom('employments')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('payroll_id', '=', payrollId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /admin/payrolls/:payroll_id/employees/import', () => {
  it('imports a streamed CSV body and answers the report; the same file again is all unchanged', async () => {
    const payroll = (await createEmploymentWorld(t.db)).payroll;
    const lines = ['H-1,Ann,Lee,1991-01-01,2021-02-01,,active,full_time,25000.75', 'H-2,Ben,Lee,,,,active,,'];

    const response = await importFile(payroll.id, lines);

    expect(response.statusCode, response.body).toBe(200);
    const report = employeeImportReportSchema.parse(response.json());
    expect(report).toMatchObject({ applied: true, rows: 2, created: 2, errors: [] });
    const again = employeeImportReportSchema.parse((await importFile(payroll.id, lines)).json());
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 2, previous_import: { id: report.import_id } });
  });

  it('holds a keyed import to its Content-Digest: required with a key, checked against the file, and a key reused with another file is refused', async () => {
    const payroll = (await createEmploymentWorld(t.db)).payroll;
    const lines = ['D-1,Dee,Gest,,,,active,,'];
    const before = await employmentCount(payroll.id);

    const withoutDigest = await importFile(payroll.id, lines, '', { 'content-digest': '' });
    expect(withoutDigest.statusCode).toBe(400);
    expect(withoutDigest.json()).toMatchObject({ type: expect.stringMatching(/content-digest-required$/), errors: [{ pointer: '/headers/content-digest' }] });

    const wrongDigest = await importFile(payroll.id, lines, '', { 'content-digest': contentDigest(csvOf(['D-1,Someone,Else,,,,active,,'])) });
    expect(wrongDigest.statusCode).toBe(400);
    expect(wrongDigest.json()).toMatchObject({ type: expect.stringMatching(/content-digest-mismatch$/) });
    expect(await employmentCount(payroll.id)).toBe(before);

    const key = crypto.randomUUID();
    const first = await importFile(payroll.id, lines, '', { 'idempotency-key': key });
    expect(first.statusCode, first.body).toBe(200);
    expect(await employmentCount(payroll.id)).toBe(before + 1);
    const replay = await importFile(payroll.id, lines, '', { 'idempotency-key': key });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const otherFile = ['D-2,Other,File,,,,active,,'];
    const reused = await importFile(payroll.id, otherFile, '', { 'idempotency-key': key });
    expect(reused.statusCode).toBe(422);
    expect(reused.json()).toMatchObject({ type: expect.stringMatching(/idempotency-key-reused$/) });
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(await employmentCount(payroll.id)).toBe(before + 1);

    // Without a key, no digest is needed: the same file again changes nothing by itself.
    const unkeyed = await importFile(payroll.id, lines, '', { 'idempotency-key': '', 'content-digest': '' });
    expect(unkeyed.statusCode, unkeyed.body).toBe(200);
  });

  it('answers 422 listing every bad row and applies nothing; 200 with the good rows applied when partial; a dry run applies nothing', async () => {
    const payroll = (await createEmploymentWorld(t.db)).payroll;
    const lines = ['B-1,Good,Row,,,,active,,', 'B-2,Bad,Date,1990-13-01,,,active,,', 'B-3,Bad,Salary,,,,active,,£100'];
    const before = await employmentCount(payroll.id);

    const rejected = await importFile(payroll.id, lines);

    expect(rejected.statusCode).toBe(422);
    expect(rejected.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = rejected.json();
    expect(problem).toMatchObject({ type: expect.stringMatching(/employee-import-rejected$/), rows: 3, rejected: 2, error_count: 2 });
    expect(problem.errors).toEqual([
      { pointer: '/lines/3/date_of_birth', detail: 'must be a date as YYYY-MM-DD' },
      { pointer: '/lines/4/annualised_salary', detail: expect.stringContaining('major units') },
    ]);
    expect(await employmentCount(payroll.id)).toBe(before);

    const dryRun = await importFile(payroll.id, lines, '?dry_run=true');
    expect(dryRun.statusCode).toBe(200);
    expect(dryRun.json()).toMatchObject({ dry_run: true, applied: false, created: 1, rejected: 2 });
    expect(await employmentCount(payroll.id)).toBe(before);

    const partial = await importFile(payroll.id, lines, '?partial=true');
    expect(partial.statusCode).toBe(200);
    expect(partial.json()).toMatchObject({ applied: true, created: 1, rejected: 2, errors: [{ line: 3 }, { line: 4 }] });
    expect(await employmentCount(payroll.id)).toBe(before + 1);
  });

  it('answers every bad row as text/csv when asked (errors=all or Accept: text/csv), with the status the report has, and removes its temporary file', async () => {
    const payroll = (await createEmploymentWorld(t.db)).payroll;
    const spooledBefore = spooledErrorFiles();
    const unkeyed = { 'idempotency-key': '', 'content-digest': '' };

    const listed = await importFile(payroll.id, manyBadLines, '', unkeyed);
    expect(listed.statusCode).toBe(422);
    expect(listed.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(listed.json()).toMatchObject({ error_count: 1_500, errors_truncated: true });
    expect(listed.json().errors).toHaveLength(1_000);

    const all = await importFile(payroll.id, manyBadLines, '?errors=all', unkeyed);
    expect(all.statusCode).toBe(422);
    expect(all.headers['content-type']).toBe('text/csv; charset=utf-8');
    const rows: string[][] = parse(all.body);
    expect(rows[0]).toEqual(['line', 'column', 'reason']);
    expect(rows.slice(1).map(([line]) => line)).toEqual(everyBadLine);
    expect(rows[1]).toEqual(['2', 'date_of_birth', 'must be a date as YYYY-MM-DD']);

    const dryRun = await importFile(payroll.id, ['G-1,Good,Row,,,,active,,', ...manyBadLines], '?dry_run', { ...unkeyed, accept: 'text/csv' });
    expect(dryRun.statusCode).toBe(200);
    expect(
      parse(dryRun.body)
        .slice(1)
        .map(([line]: string[]) => line),
    ).toEqual(everyBadLine.map((line) => String(Number(line) + 1)));

    const clean = await importFile(payroll.id, ['G-1,Good,Row,,,,active,,'], '?errors=all', unkeyed);
    expect(clean.statusCode).toBe(200);
    expect(clean.body).toBe('line,column,reason\n');
    expect(await employmentCount(payroll.id)).toBeGreaterThan(0);

    // Not a report: the problem, as without errors=all.
    const badHeader = await t.app.inject({
      method: 'POST',
      url: `/admin/payrolls/${payroll.id}/employees/import?errors=all`,
      headers: { ...operator, 'content-type': 'text/csv' },
      payload: Readable.from([Buffer.from('who,what\n1,2\n')]),
    });
    expect(badHeader.statusCode, badHeader.body).toBe(422);
    expect(badHeader.json()).toMatchObject({ type: expect.stringMatching(/invalid-import-header$/) });

    const keyed = await importFile(payroll.id, manyBadLines, '?errors=all');
    expect(keyed.statusCode).toBe(400);
    expect(keyed.json()).toMatchObject({ type: expect.stringMatching(/idempotency-key-with-all-errors$/), errors: [{ pointer: '/headers/idempotency-key' }] });

    expect([...spooledErrorFiles()].filter((name) => !spooledBefore.has(name))).toEqual([]);
  });

  it('refuses a body that is not CSV (415), an unknown payroll (404), a bad query (400), and clients that are not operators (403)', async () => {
    const json = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${world.payroll.id}/employees/import`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { rows: [] },
    });
    expect(json.statusCode).toBe(415);
    expect((await importFile(crypto.randomUUID(), ['X-1,A,B,,,,active,,'])).statusCode).toBe(404);
    expect((await importFile('not-a-uuid', ['X-1,A,B,,,,active,,'])).statusCode).toBe(404);
    expect((await importFile(world.payroll.id, [], '?dry_run=maybe')).statusCode).toBe(400);
    const provider = await authHeaders(t.app, await createProviderClient(t.db, world.provider.id));
    expect((await importFile(world.payroll.id, ['X-1,A,B,,,,active,,'], '', provider)).statusCode).toBe(403);
  });

  it('is documented with its CSV body in /openapi.json', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operation = document.paths['/admin/payrolls/{payroll_id}/employees/import'].post;
    expect(Object.keys(operation.requestBody.content)).toEqual(['text/csv']);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '404', '413', '415', '422']));
    expect(Object.keys(operation.responses['200'].content)).toEqual(['application/json', 'text/csv']);
    expect(Object.keys(operation.responses['422'].content)).toEqual(expect.arrayContaining(['application/problem+json', 'text/csv']));
    expect(operation.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'errors', in: 'query' })]));
  });
});

describe('single employee operations', () => {
  const newEmployee = (reference: string) => ({
    given_name: 'Priya',
    family_name: 'Shah',
    national_registration_number: `QQ${reference.replace(/\D/g, '').padStart(6, '0')}D`,
    date_of_birth: '1990-05-17',
    payroll_reference: reference,
    start_date: '2023-09-01',
    employment_status: 'active',
    contract_type: 'full_time',
    annualised_salary: 4_200_000,
  });
  const create = (employee: Record<string, unknown>, key = crypto.randomUUID()) =>
    injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${world.payroll.id}/employees`,
      headers: { ...operator, 'idempotency-key': key },
      body: { employee, reason: 'new starter' },
    });

  it('creates, shows, lists, updates and records a leaver, each audited', async () => {
    const created = await create(newEmployee('C-101'));
    expect(created.statusCode, created.body).toBe(201);
    const employee = employeeEnvelopeSchema.parse(created.json()).employee;
    expect(employee).toMatchObject({ payroll_id: world.payroll.id, payroll_reference: 'C-101', annualised_salary: 4_200_000 });

    const shown = await t.app.inject({ method: 'GET', url: `/admin/payrolls/${world.payroll.id}/employees/${employee.id}`, headers: operator });
    expect(shown.json()).toEqual({ employee });

    const page = await t.app.inject({ method: 'GET', url: `/admin/payrolls/${world.payroll.id}/employees?limit=1`, headers: operator });
    expect(page.statusCode).toBe(200);
    expect(page.json().employees).toEqual([employee]);
    const next = await t.app.inject({ method: 'GET', url: `/admin/payrolls/${world.payroll.id}/employees?limit=500&after=${page.json().paging.after}`, headers: operator });
    expect(next.json().employees.map((e: { id: string }) => e.id)).not.toContain(employee.id);

    const updated = await injectJson(t.app, {
      method: 'PATCH',
      url: `/admin/payrolls/${world.payroll.id}/employees/${employee.id}`,
      headers: operator,
      body: { employee: { family_name: 'Shah-Patel', email_address: 'priya@example.com', annualised_salary: 4_500_000 }, reason: 'pay rise' },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json().employee).toMatchObject({ family_name: 'Shah-Patel', email_address: 'priya@example.com', annualised_salary: 4_500_000 });

    const cleared = await injectJson(t.app, {
      method: 'PATCH',
      url: `/admin/payrolls/${world.payroll.id}/employees/${employee.id}`,
      headers: operator,
      body: { employee: { email_address: null } },
    });
    expect(cleared.json().employee.email_address).toBeNull();

    const left = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${world.payroll.id}/employees/${employee.id}/leave`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { end_date: '2026-03-31', reason: 'resigned' },
    });
    expect(left.statusCode, left.body).toBe(200);
    expect(left.json().employee).toMatchObject({ employment_status: 'leaver', end_date: '2026-03-31' });

    const audit = await t.db.selectFrom('audit_log').select(['action', 'reason', 'actor_kind']).where('resource_id', '=', employee.id).orderBy('at').orderBy('id').execute();
    expect(audit.map((entry) => [entry.action, entry.reason])).toEqual([
      ['employee.created', 'new starter'],
      ['employee.updated', 'pay rise'],
      ['employee.updated', null],
      ['employee.left', 'resigned'],
    ]);
  });

  it('ends running mandates and cancels pending payments of a leaver, as a provider push does', async () => {
    const mandated = await createEmploymentWorld(t.db);
    const biller = await createBiller(t.db);
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: mandated.employee.id, payrollId: mandated.payroll.id });
    const payment = await createPaymentRequestRow(t.db, { mandate: { ...mandate, currency: 'GBP' } });

    const left = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${mandated.payroll.id}/employees/${mandated.employee.id}/leave`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { end_date: '2026-02-28' },
    });

    expect(left.statusCode, left.body).toBe(200);
    expect((await t.db.selectFrom('mandates').select('status').where('id', '=', mandate.id).executeTakeFirstOrThrow()).status).toBe('expired');
    expect((await t.db.selectFrom('payment_requests').select('status').where('id', '=', payment.id).executeTakeFirstOrThrow()).status).toBe('cancelled');
    const again = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${mandated.payroll.id}/employees/${mandated.employee.id}/leave`,
      headers: { ...operator, 'idempotency-key': crypto.randomUUID() },
      body: { end_date: '2026-02-28' },
    });
    expect(again.statusCode).toBe(409);
  });

  it('refuses a taken payroll reference (409), a bad record (422 naming the field), unknown ids (404) and a missing Idempotency-Key (400)', async () => {
    const taken = await create({ ...newEmployee('C-201'), payroll_reference: world.employment.payroll_reference });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().errors).toEqual([{ pointer: '/employee/payroll_reference', detail: 'belongs to another employee' }]);

    const leaver = await create({ ...newEmployee('C-202'), employment_status: 'leaver' });
    expect(leaver.statusCode).toBe(422);
    expect(leaver.json().errors).toEqual([{ pointer: '/employee/end_date', detail: 'is required for a leaver' }]);

    const badDate = await create({ ...newEmployee('C-203'), date_of_birth: '1990-02-30' });
    expect(badDate.statusCode).toBe(422);
    expect(badDate.json().errors[0].pointer).toBe('/employee/date_of_birth');

    expect((await t.app.inject({ method: 'GET', url: `/admin/payrolls/${world.payroll.id}/employees/${crypto.randomUUID()}`, headers: operator })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/admin/payrolls/nope/employees`, headers: operator })).statusCode).toBe(404);
    const noKey = await injectJson(t.app, {
      method: 'POST',
      url: `/admin/payrolls/${world.payroll.id}/employees`,
      headers: operator,
      body: { employee: newEmployee('C-204') },
    });
    expect(noKey.statusCode).toBe(400);
  });
});

describe('deductions employees', () => {
  it('imports a file (JSON report on stdout), refuses one with bad rows (exit 1, nothing applied), and creates, shows, lists and records a leaver', async () => {
    const payroll = (await createEmploymentWorld(t.db)).payroll;
    const directory = mkdtempSync(join(tmpdir(), 'employee-import-'));
    const good = join(directory, 'good.csv');
    writeFileSync(good, `${HEADER}\nK-1,Kim,Park,1992-02-02,2022-01-01,,active,full_time,31000.10\n`);
    const bad = join(directory, 'bad.csv');
    writeFileSync(bad, `${HEADER}\nK-1,Kim,Park,1992-02-02,2022-01-01,,active,full_time,31000.10\nK-2,Kit,Park,1992-02-30,,,ACTIVE,,\n`);

    const imported = await deductions(['employees', 'import', '--payroll', payroll.id, '--file', good, '--json', '--by', 'ops']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ applied: true, created: 1, rows: 1 });

    const refused = await deductions(['employees', 'import', '--payroll', payroll.id, '--file', bad]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('line 3, date_of_birth: must be a date as YYYY-MM-DD');
    // Every error is found at once, and the operator is told how to import the good rows anyway.
    expect(refused.stdout).toContain('run again with --partial to import the 1 good row alone');
    expect(refused.stdout).toContain('--errors-out FILE writes every error');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('--partial');
    expect(await employmentCount(payroll.id)).toBe(2);

    const created = await deductions([
      'employees',
      'create',
      '--payroll',
      payroll.id,
      '--payroll-reference',
      'K-3',
      '--given-name',
      'Lou',
      '--family-name',
      'Park',
      '--annualised-salary',
      '28000.50',
      '--start-date',
      '2024-04-01',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const employee = JSON.parse(created.stdout);
    expect(employee).toMatchObject({ payroll_reference: 'K-3', annualised_salary: 2_800_050, employment_status: 'active' });

    const shown = await deductions(['employees', 'show', '--payroll', payroll.id, '--employee', employee.id, '--json']);
    expect(JSON.parse(shown.stdout)).toEqual(employee);

    const listed = await deductions(['employees', 'list', '--payroll', payroll.id, '--json']);
    expect(JSON.parse(listed.stdout).employees.map((e: { payroll_reference: string }) => e.payroll_reference)).toEqual(expect.arrayContaining(['K-1', 'K-3']));

    const left = await deductions(['employees', 'leave', '--payroll', payroll.id, '--employee', employee.id, '--end-date', '2026-01-31', '--reason', 'moved away', '--json']);
    expect(left.code, left.stderr).toBe(0);
    expect(JSON.parse(left.stdout)).toMatchObject({ id: employee.id, employment_status: 'leaver', end_date: '2026-01-31' });

    const unknown = await deductions(['employees', 'show', '--payroll', payroll.id, '--employee', crypto.randomUUID()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toMatch(/was not found$/);
  }, 120_000);

  it('writes every bad row to --errors-out as CSV, and says how to get them all without it', async () => {
    const payroll = (await createEmploymentWorld(t.db)).payroll;
    const directory = mkdtempSync(join(tmpdir(), 'employee-import-'));
    const file = join(directory, 'many-bad.csv');
    writeFileSync(file, csvOf(manyBadLines));
    const errorsOut = join(directory, 'errors.csv');

    const written = await deductions(['employees', 'import', '--payroll', payroll.id, '--file', file, '--errors-out', errorsOut]);
    expect(written.code).toBe(1);
    expect(written.stdout).toContain(`all 1500 errors are in ${errorsOut}`);
    expect(written.stdout).toContain('line 2, date_of_birth: must be a date as YYYY-MM-DD');
    const rows: string[][] = parse(readFileSync(errorsOut, 'utf8'));
    expect(rows[0]).toEqual(['line', 'column', 'reason']);
    expect(rows.slice(1).map(([line]) => line)).toEqual(everyBadLine);
    expect(rows.slice(1).every(([, column]) => column === 'date_of_birth')).toBe(true);

    const withoutFile = await deductions(['employees', 'import', '--payroll', payroll.id, '--file', file, '--dry-run']);
    expect(withoutFile.code, withoutFile.stderr).toBe(0);
    expect(withoutFile.stdout).toContain('500 more errors not listed; --errors-out FILE writes every one');
    const asJson = await deductions(['employees', 'import', '--payroll', payroll.id, '--file', file, '--dry-run', '--json']);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ error_count: 1_500, errors_truncated: true });
    expect(asJson.stderr).toContain('--errors-out FILE writes every one');

    const header = join(directory, 'bad-header.csv');
    writeFileSync(header, 'who,what\n1,2\n');
    const refusedHeader = await deductions(['employees', 'import', '--payroll', payroll.id, '--file', header, '--errors-out', join(directory, 'none.csv')]);
    expect(refusedHeader.code).toBe(1);
    expect(readdirSync(directory)).not.toContain('none.csv');
  }, 120_000);
});
