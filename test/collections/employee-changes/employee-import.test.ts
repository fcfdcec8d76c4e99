import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { DomainError } from '../../../src/platform/shared/domain-errors.ts';
import type { ImportError } from '../../../src/directory/payrolls/employee-import-rules.ts';
import { EmployeeImportRejected, importEmployees, type EmployeeImportRequest } from '../../../src/collections/employee-changes/employee-import-service.ts';
import {
  createBiller,
  createEmployee,
  createEmployer,
  createEmploymentWorld,
  createMandateRow,
  createPaymentRequestRow,
  createPayroll,
  futureMonthlyPayDates,
} from '../../support/factories.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let database: TestDatabase;
let db: TestDatabase['db'];

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
});
afterAll(async () => database?.drop());

const HEADER =
  'payroll_reference,given_name,family_name,national_registration_number,date_of_birth,email_address,phone_number,postal_code,start_date,end_date,employment_status,contract_type,annualised_salary,currency';

const csv = (...lines: string[]) => `${[HEADER, ...lines].join('\n')}\n`;

function run(payrollId: string, file: string, options: Partial<Omit<EmployeeImportRequest, 'payrollId' | 'source'>> = {}) {
  return db.transaction().execute((trx) =>
    importEmployees(trx, {
      payrollId,
      source: Readable.from([Buffer.from(file)]),
      dryRun: false,
      partial: false,
      actor: cliActor('importer'),
      ...options,
    }),
  );
}

async function rejection(promise: Promise<unknown>): Promise<EmployeeImportRejected> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EmployeeImportRejected);
  return error as EmployeeImportRejected;
}

/** Factories number people QQ..., a prefix HMRC never issues: an import file needs a number it could have. */
let issued = 0;
const issuedNumber = () => `AB${String(++issued).padStart(6, '0')}C`;

/** An employment world whose employee has a National Insurance number an import file can carry. */
async function importableWorld() {
  const world = await createEmploymentWorld(db);
  const employee = await db
    .updateTable('employees')
    .set({ national_registration_number: issuedNumber() })
    .where('id', '=', world.employee.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...world, employee };
}

/** Each employment of the payroll as it stands: the person's identifiers, and the name and contact details the employment holds. */
const employmentsOf = (payrollId: string) =>
  db
    .selectFrom('employments')
    .innerJoin('employees', 'employees.id', 'employments.employee_id')
    .select([
      'employees.id as employee_id',
      'payroll_reference',
      'employments.given_name',
      'employments.family_name',
      'national_registration_number',
      'date_of_birth',
      'employments.email_address',
      'employment_status',
      'contract_type',
      'start_date',
      'end_date',
      'annualised_salary',
      'currency',
      'employments.updated_at as employment_updated_at',
      'employees.updated_at as employee_updated_at',
    ])
    .where('payroll_id', '=', payrollId)
    .orderBy('payroll_reference')
    .execute();

const countEvents = async () =>
  Number(
    (
      await db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('employee import', () => {
  it('imports a good file: new employees and employments, an update of an existing one, salaries converted exactly', async () => {
    const world = await importableWorld();
    const existing = world.employment.payroll_reference;
    const file = csv(
      'WN-1,Priya,Shah,ce 65 43 21 a,1990-05-17,priya@example.com,+447700900001,LS1 4AP,2023-09-01,,active,full_time,42000.50,GBP',
      'WN-2,Tom,Evans,,1985-11-02,,,,2019-04-01,,active,part_time,18500,',
      `${existing},Alex,Taylor-Jones,${world.employee.national_registration_number},1988-03-14,,,,2020-01-06,,active,full_time,36000.00,GBP`,
    );

    const report = await run(world.payroll.id, file);

    expect(report).toMatchObject({ applied: true, rows: 3, created: 2, updated: 1, unchanged: 0, left: 0, rejected: 0, error_count: 0, errors: [] });
    expect(report.file_sha256).toMatch(/^[0-9a-f]{64}$/);
    const rows = await employmentsOf(world.payroll.id);
    expect(rows.find((row) => row.payroll_reference === 'WN-1')).toMatchObject({
      given_name: 'Priya',
      national_registration_number: 'CE654321A',
      date_of_birth: '1990-05-17',
      email_address: 'priya@example.com',
      annualised_salary: 4_200_050,
      contract_type: 'full_time',
      currency: 'GBP',
    });
    expect(rows.find((row) => row.payroll_reference === 'WN-2')).toMatchObject({ national_registration_number: null, annualised_salary: 1_850_000 });
    expect(rows.find((row) => row.payroll_reference === existing)).toMatchObject({
      employee_id: world.employee.id,
      family_name: 'Taylor-Jones',
      annualised_salary: 3_600_000,
    });

    const runs = await db.selectFrom('employee_import_runs').selectAll().where('payroll_id', '=', world.payroll.id).execute();
    expect(runs).toEqual([expect.objectContaining({ id: report.import_id, file_sha256: report.file_sha256, rows: 3, created: 2, updated: 1, imported_by: 'importer' })]);
    const audit = await db.selectFrom('audit_log').selectAll().where('resource_id', '=', world.payroll.id).execute();
    expect(audit).toEqual([expect.objectContaining({ action: 'employees.imported', actor: 'importer', actor_kind: 'cli' })]);
  });

  it('reports every bad row with its line, column and reason, and applies nothing', async () => {
    const world = await createEmploymentWorld(db);
    const before = await employmentsOf(world.payroll.id);
    const file = csv(
      'A-1,Good,Row,,,,,,2020-01-01,,active,,30000,',
      'A-1,Same,Reference,,,,,,,,active,,,',
      'A-3,Bad,Date,,1990-02-30,,,,,,active,,,',
      'A-4,Bad,Amount,,,,,,,,active,,12.345,',
      'A-5,Bad,Status,,,,,,,,retired,,,',
      'A-6,No,EndDate,,,,,,,,leaver,,,',
      'A-7,,NoGivenName,,,,,,,,active,,,',
      'A-8,Too,Few',
      'A-9,Euro,Salary,,,,,,,,active,,100,EUR',
      'A-10,Ends,Early,,,,,,2024-01-01,2023-01-01,leaver,,,',
      '"A-11",Bad,Email,,,not-an-email,,,,,active,,,',
      'A-12,Sep,Arated,,,,,,,,active,,"42,000",',
    );

    const error = await rejection(run(world.payroll.id, file));

    const { report } = error;
    expect(report).toMatchObject({ applied: false, rows: 12, rejected: 11, errors_truncated: false });
    expect(report.errors.map(({ line, column }) => [line, column])).toEqual([
      [3, 'payroll_reference'],
      [4, 'date_of_birth'],
      [5, 'annualised_salary'],
      [6, 'employment_status'],
      [7, 'end_date'],
      [8, 'given_name'],
      [9, null],
      [10, 'currency'],
      [11, 'end_date'],
      [12, 'email_address'],
      [13, 'annualised_salary'],
    ]);
    expect(report.errors[0]!.reason).toBe('repeats the payroll reference of line 2');
    expect(report.errors[2]!.reason).toBe('must have at most 2 decimal places for GBP');
    expect(report.errors[5]!.reason).toBe('is required');
    expect(report.errors[6]!.reason).toBe('has 3 fields where the header has 14');
    expect(error.errors).toContainEqual({ pointer: '/lines/4/date_of_birth', detail: 'must be a date as YYYY-MM-DD' });
    expect(error.errors).toContainEqual({ pointer: '/lines/9', detail: 'has 3 fields where the header has 14' });
    expect(await employmentsOf(world.payroll.id)).toEqual(before);
    expect(await db.selectFrom('employee_import_runs').select('id').where('payroll_id', '=', world.payroll.id).execute()).toEqual([]);
  });

  it("reports every error of every row in one pass: a row's bad cells, its repeated works number, and the directory's objections to bad rows", async () => {
    const world = await importableWorld();
    const file = csv(
      'W-1,Ann,Lee,AB900101C,1990-01-01,,,,,,active,,,',
      'W-1,Bob,Lee,QQ1234,1990-02-30,not-an-email,,,,,Retired,,£5,EUR',
      'W-3,Cat,Lee,ab 90 01 01 c,,bad-email,,,,,active,,,',
      `W-4,Dan,Lee,${world.employee.national_registration_number},1970-01-01,nope,,,,,active,,,`,
      'W-5,Eve,Lee,,,,,,,,active,,,',
    );

    const { report, detail } = await rejection(run(world.payroll.id, file));

    // Line 2 and line 6 are good; each bad row's every fault is listed, those found across rows after its own.
    expect(report).toMatchObject({ rows: 5, rejected: 3, error_count: 11 });
    expect(report.errors.map(({ line, column }) => [line, column])).toEqual([
      [3, 'currency'],
      [3, 'annualised_salary'],
      [3, 'national_registration_number'],
      [3, 'date_of_birth'],
      [3, 'email_address'],
      [3, 'employment_status'],
      [3, 'payroll_reference'],
      [4, 'email_address'],
      [4, 'national_registration_number'],
      [5, 'email_address'],
      [5, 'payroll_reference'],
    ]);
    expect(report.errors).toContainEqual({
      line: 3,
      column: 'national_registration_number',
      reason: expect.stringContaining('has 6 characters (spaces aside) where one has 9'),
    });
    expect(report.errors).toContainEqual({ line: 3, column: 'payroll_reference', reason: 'repeats the payroll reference of line 2' });
    expect(report.errors).toContainEqual({ line: 4, column: 'national_registration_number', reason: 'repeats the national registration number of line 2' });
    expect(report.errors).toContainEqual({ line: 5, column: 'payroll_reference', reason: expect.stringContaining('already on this payroll as') });
    expect(detail).toContain('--partial');
    expect(detail).toContain('--errors-out');
  });

  it('applies the good rows and reports the bad ones when partial application is asked for', async () => {
    const world = await createEmploymentWorld(db);
    const file = csv(
      'P-1,Good,One,,,,,,,,active,,,',
      'P-2,Bad,Date,,17/05/1990,,,,,,active,,,',
      'P-3,Good,Two,,,,,,,,unknown,zero_hours,0.5,',
      'P-1,Duplicate,One,,,,,,,,active,,,',
    );

    const report = await run(world.payroll.id, file, { partial: true });

    expect(report).toMatchObject({ applied: true, partial: true, rows: 4, created: 2, rejected: 2, error_count: 2 });
    expect(report.errors).toEqual([
      { line: 3, column: 'date_of_birth', reason: 'must be a date as YYYY-MM-DD' },
      { line: 5, column: 'payroll_reference', reason: 'repeats the payroll reference of line 2' },
    ]);
    const rows = await employmentsOf(world.payroll.id);
    expect(rows.map((row) => row.payroll_reference)).toEqual(expect.arrayContaining(['P-1', 'P-3']));
    expect(rows.find((row) => row.payroll_reference === 'P-1')!.given_name).toBe('Good');
    expect(rows.find((row) => row.payroll_reference === 'P-3')).toMatchObject({ employment_status: 'unknown', contract_type: 'zero_hours', annualised_salary: 50 });
    expect(rows.some((row) => row.payroll_reference === 'P-2')).toBe(false);
  });

  it('validates and counts on a dry run, and applies nothing', async () => {
    const world = await importableWorld();
    const before = await employmentsOf(world.payroll.id);
    const file = csv(
      'D-1,New,Person,,,,,,,,active,,,',
      `${world.employment.payroll_reference},Alex,Renamed,${world.employee.national_registration_number},1988-03-14,,,,2020-01-06,,active,full_time,36000,`,
      'D-3,Bad,Status,,,,,,,,gone,,,',
    );

    const report = await run(world.payroll.id, file, { dryRun: true });

    expect(report).toMatchObject({ dry_run: true, applied: false, rows: 3, created: 1, updated: 1, rejected: 1, import_id: null });
    expect(report.errors).toEqual([{ line: 4, column: 'employment_status', reason: expect.stringContaining('Invalid option') }]);
    expect(await employmentsOf(world.payroll.id)).toEqual(before);
    expect(await db.selectFrom('employee_import_runs').select('id').where('payroll_id', '=', world.payroll.id).execute()).toEqual([]);
  });

  it('changes nothing when the same file is imported again: no updated_at moves, no events, no import run or audit entry, all unchanged', async () => {
    const world = await importableWorld();
    const biller = await createBiller(db);
    await createMandateRow(db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id });
    const file = csv(
      'R-1,Ann,Lee,CE900001A,1991-01-01,,,,2021-02-01,,active,full_time,25000,',
      'R-2,Ben,Lee,,,,,,,,active,,,',
      `${world.employment.payroll_reference},Alex,Taylor,${world.employee.national_registration_number},1988-03-14,,,,2020-01-06,,active,full_time,37000,`,
    );
    const first = await run(world.payroll.id, file);
    expect(first).toMatchObject({ created: 2, updated: 1 });
    const rowsAfterFirst = await employmentsOf(world.payroll.id);
    const events = await countEvents();
    const runsOf = () => db.selectFrom('employee_import_runs').select('id').where('payroll_id', '=', world.payroll.id).execute();
    const importAuditsOf = () => db.selectFrom('audit_log').select('id').where('resource_id', '=', world.payroll.id).where('action', '=', 'employees.imported').execute();
    expect(await runsOf()).toEqual([{ id: first.import_id }]);
    expect(await importAuditsOf()).toHaveLength(1);

    const again = await run(world.payroll.id, file);

    expect(again).toMatchObject({ applied: true, rows: 3, created: 0, updated: 0, unchanged: 3, left: 0, rejected: 0, import_id: null });
    expect(again.previous_import).toMatchObject({ id: first.import_id, imported_by: 'importer' });
    expect(await employmentsOf(world.payroll.id)).toEqual(rowsAfterFirst);
    expect(await countEvents()).toBe(events);
    expect(await runsOf()).toEqual([{ id: first.import_id }]);
    expect(await importAuditsOf()).toHaveLength(1);
  });

  it('gives a leaver row the consequences of a leaver pushed by the provider: mandates end, pending payments cancelled, billers told', async () => {
    const world = await importableWorld();
    const biller = await createBiller(db);
    const mandate = await createMandateRow(db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id, status: 'active' });
    const payment = await createPaymentRequestRow(db, { mandate: { ...mandate, currency: 'GBP' } });
    const employee = world.employee;
    const file = csv(
      `${world.employment.payroll_reference},Alex,${employee.family_name},${employee.national_registration_number},1988-03-14,${employee.email_address},${employee.phone_number},${employee.postal_code},2020-01-06,2026-01-31,leaver,full_time,36000,GBP`,
    );

    const report = await run(world.payroll.id, file);

    expect(report).toMatchObject({ updated: 1, left: 1 });
    expect(await db.selectFrom('mandates').select(['status', 'status_reason']).where('id', '=', mandate.id).executeTakeFirstOrThrow()).toEqual({
      status: 'expired',
      status_reason: 'employment ended',
    });
    expect((await db.selectFrom('payment_requests').select('status').where('id', '=', payment.id).executeTakeFirstOrThrow()).status).toBe('cancelled');
    const events = await db.selectFrom('events').select(['type', 'resource_id']).where('biller_client_id', '=', biller.clientId).orderBy('sequence').execute();
    expect(events).toEqual([
      { type: 'employee.updated', resource_id: employee.id },
      { type: 'mandate.updated', resource_id: mandate.id },
      { type: 'payment_request.updated', resource_id: payment.id },
    ]);
  });

  it("matches a provider's employee on another payroll by national registration number, birth date and family name (a second job), and refuses a stranger's number", async () => {
    const world = await importableWorld();
    const employer = await createEmployer(db, world.provider.id);
    const otherPayroll = await createPayroll(db, { providerId: world.provider.id, employerId: employer.id, payDates: futureMonthlyPayDates() });
    const created = await createEmployee(db, { providerId: world.provider.id, payrollId: otherPayroll.id, employerId: employer.id });
    const employee = await db
      .updateTable('employees')
      .set({ national_registration_number: issuedNumber() })
      .where('id', '=', created.employee.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const number = employee.national_registration_number!;
    const file = csv(
      `S-1,Alex,${employee.family_name.toUpperCase()},${number.toLowerCase()},1988-03-14,,,,2024-01-01,,active,part_time,9000,`,
      `S-2,Alex,${employee.family_name},${world.employee.national_registration_number},1970-01-01,,,,,,active,,,`,
    );

    const report = await run(world.payroll.id, file, { partial: true });

    expect(report).toMatchObject({ created: 1, rejected: 1 });
    expect(report.errors).toEqual([{ line: 3, column: 'payroll_reference', reason: expect.stringContaining('already on this payroll') }]);
    const rows = await employmentsOf(world.payroll.id);
    expect(rows.find((row) => row.payroll_reference === 'S-1')!.employee_id).toBe(employee.id);

    const thirdPayroll = await createPayroll(db, { providerId: world.provider.id, employerId: employer.id });
    const stranger = csv(`S-3,Sam,Other,${number},1970-01-01,,,,,,active,,,`);
    const refused = await rejection(run(thirdPayroll.id, stranger));
    expect(refused.report.errors).toEqual([{ line: 2, column: 'national_registration_number', reason: expect.stringContaining('belongs to another employee') }]);
  });

  it('refuses a file whose header is wrong, which is not CSV, or which is empty, naming where', async () => {
    const world = await createEmploymentWorld(db);
    const refusal = async (file: string) => {
      const error = await run(world.payroll.id, file).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(DomainError);
      return error as DomainError;
    };

    const header = await refusal('payroll_reference,given_name,nickname,employment_status\n');
    expect(header.code).toBe('invalid-import-header');
    expect(header.errors).toEqual([
      { pointer: '/lines/1/nickname', detail: expect.stringContaining('is not a known column') },
      { pointer: '/lines/1/family_name', detail: 'is a required column and is missing from the header' },
    ]);
    expect((await refusal(csv('Q-1,"Unclosed,Quote,,,,,,,,active,,,'))).code).toBe('invalid-csv');
    expect((await refusal('')).code).toBe('empty-import-file');
  });

  it('keeps the first 1,000 errors in the report and counts the rest; the error sink gets every one, in line order', async () => {
    const world = await createEmploymentWorld(db);
    const lines = Array.from({ length: 1_500 }, (_, i) => `B-${i},Bad,Row,,not-a-date,,,,,,active,,,`);
    const sunk: ImportError[] = [];

    const report = await run(world.payroll.id, csv(...lines), { dryRun: true, errorSink: { write: async (errors) => void sunk.push(...errors) } });

    expect(report).toMatchObject({ rows: 1_500, rejected: 1_500, error_count: 1_500, errors_truncated: true });
    expect(report.errors).toHaveLength(1_000);
    expect(report.errors.at(-1)!.line).toBe(1_001);
    expect(sunk).toHaveLength(1_500);
    expect(sunk.map((error) => error.line)).toEqual(Array.from({ length: 1_500 }, (_, i) => i + 2));
    expect(sunk.every((error) => error.column === 'date_of_birth')).toBe(true);
  });

  it('gives the error sink the errors of every check: bad cells and refused matches in line order, repeated rows last', async () => {
    const world = await importableWorld();
    const sunk: ImportError[] = [];
    const file = csv(
      'S-1,Ann,Lee,,,,,,,,active,,,',
      'S-1,Ann,Again,,,,,,,,active,,,',
      'S-3,Bad,Date,,1990-02-30,,,,,,active,,,',
      `S-4,Not,Again,${world.employee.national_registration_number},1970-01-01,,,,,,active,,,`,
      'S-5,Bad,Status,,,,,,,,retired,,,',
    );

    const rejected = await rejection(run(world.payroll.id, file, { errorSink: { write: async (errors) => void sunk.push(...errors) } }));

    expect(sunk.map(({ line, column }) => [line, column])).toEqual([
      [4, 'date_of_birth'],
      [5, 'payroll_reference'],
      [6, 'employment_status'],
      [3, 'payroll_reference'],
    ]);
    expect(sunk.at(-1)!.reason).toBe('repeats the payroll reference of line 2');
    expect(rejected.report.errors.map((error) => error.line)).toEqual([3, 4, 5, 6]);
  });
});
