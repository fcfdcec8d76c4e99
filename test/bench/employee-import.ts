/**
 * Employee import benchmark (a script, not a test):
 * `npx tsx test/bench/employee-import.ts [--rows 500000] [--database deductions_bench_import]`
 *
 * On a fresh database: writes a CSV file of `rows` employees (a tenth of them leavers), imports it
 * through the import service (streamed, all-or-nothing), imports the same file again (every row
 * unchanged, nothing written), and dry-runs a file of as many rows that are all bad (each error
 * counted, the first 1,000 kept). For each it prints wall time, rows/s and this process's RSS when
 * 10%, 50% and 100% of the rows have been read, and when the import ends: the same figure at 10%
 * and at 100% is what constant memory looks like. Then it measures, in the same run, a floor: the
 * same number of employees and employments inserted with one INSERT ... SELECT generate_series each
 * (rolled back), and prints the ratio of the import to it.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { cliActor } from '../../src/platform/audit/audit-service.ts';
import { createDatabase, type Database } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { importEmployees, type EmployeeImportProgress } from '../../src/collections/employee-changes/employee-import-service.ts';
import type { EmployeeImportReport } from '../../src/directory/payrolls/employee-import-resource.ts';
import { megabytes, perSecond, recreateDatabase, seconds, timed, timedPartsRolledBack } from './bench-support.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '500000' },
    database: { type: 'string', default: 'deductions_bench_import' },
    file: { type: 'string', default: '/tmp/bench-employee-import.csv' },
    'bad-file': { type: 'string', default: '/tmp/bench-employee-import-bad.csv' },
  },
});
const ROWS = Number(values.rows);
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${values.database}`;

const HEADER =
  'payroll_reference,given_name,family_name,national_registration_number,date_of_birth,email_address,phone_number,postal_code,start_date,end_date,employment_status,contract_type,annualised_salary,currency\n';
const GIVEN = ['Priya', 'Tom', 'Aoife', 'Kwame', 'Zofia', 'Liam', 'Mei', 'Oluwaseun', 'Sian', 'Mateo'];
const FAMILY = ['Shah', 'Evans', "O'Brien", 'Mensah', 'Nowak', 'Murphy', 'Chen', 'Adeyemi', 'Jones', 'García'];
const CONTRACTS = ['full_time', 'part_time', 'fixed_term', 'zero_hours'];

function employeeLine(i: number, bad: boolean): string {
  const given = GIVEN[i % GIVEN.length]!;
  const family = FAMILY[(i * 7) % FAMILY.length]!;
  const leaver = i % 10 === 9;
  const birth = bad ? `${1 + (i % 28)}/0${1 + (i % 9)}/1980` : `19${60 + (i % 40)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`;
  const salary = `${18_000 + (i % 50_000)}.${String(i % 100).padStart(2, '0')}`;
  return [
    `WN${String(i).padStart(7, '0')}`,
    given,
    `"${family}"`,
    // A prefix HMRC issues: the import checks National Insurance numbers, and QQ is never issued.
    `AB${String(i).padStart(6, '0')}${'ABCD'[i % 4]}`,
    birth,
    `${given.toLowerCase()}.${i}@example.com`,
    `+4477009${String(i % 100_000).padStart(5, '0')}`,
    `LS${1 + (i % 28)} ${i % 10}AP`,
    `20${10 + (i % 15)}-0${1 + (i % 9)}-01`,
    leaver ? '2026-01-31' : '',
    leaver ? 'leaver' : 'active',
    CONTRACTS[i % CONTRACTS.length],
    salary,
    'GBP',
  ].join(',');
}

/** Written as a stream, a slice at a time, so the file's size never shows in this process's memory. */
async function writeFile(path: string, bad: boolean): Promise<number> {
  const out = createWriteStream(path);
  out.write(HEADER);
  for (let from = 0; from < ROWS; from += 10_000) {
    const lines: string[] = [];
    for (let i = from; i < Math.min(ROWS, from + 10_000); i++) lines.push(employeeLine(i, bad));
    if (!out.write(`${lines.join('\n')}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return statSync(path).size;
}

async function setUp(db: Database): Promise<string> {
  const provider = await db
    .insertInto('payroll_providers')
    .values({ name: 'Bench provider', api_base_url: null, api_token_url: null, api_client_id: null, api_client_secret: null, lead_time_working_days: 2 })
    .returning('id')
    .executeTakeFirstOrThrow();
  const employer = await db
    .insertInto('employers')
    .values({ payroll_provider_id: provider.id, external_id: 'BENCH', name: 'Bench Employer Ltd', salary_deduction_opt_in_status: 'opted_in' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const payroll = await db
    .insertInto('payrolls')
    .values({
      id: crypto.randomUUID(),
      employer_id: employer.id,
      payroll_provider_id: provider.id,
      external_id: 'BENCH-PR',
      name: 'Bench payroll',
      payment_run_frequency: 'monthly',
      currency: 'GBP',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return payroll.id;
}

interface Measured {
  ms: number;
  report: EmployeeImportReport;
  /** This process's RSS, in bytes, when that share of the rows had been read. */
  rssAtShare: Record<string, number>;
  rssAtEnd: number;
}

async function measuredImport(db: Database, label: string, payrollId: string, file: string, options: { dryRun: boolean }): Promise<Measured> {
  const rssAtShare: Record<string, number> = {};
  const marks = [0.1, 0.5, 1];
  const onProgress = (progress: EmployeeImportProgress) => {
    if (progress.phase !== 'reading') return;
    for (const mark of marks) {
      const key = `${mark * 100}%`;
      if (rssAtShare[key] === undefined && progress.rows >= mark * ROWS) rssAtShare[key] = process.memoryUsage().rss;
    }
  };
  const { ms, result: report } = await timed(
    label,
    () =>
      db
        .transaction()
        .execute((trx) => importEmployees(trx, { payrollId, source: createReadStream(file), dryRun: options.dryRun, partial: false, actor: cliActor('bench'), onProgress })),
    50,
  );
  return { ms, report, rssAtShare, rssAtEnd: process.memoryUsage().rss };
}

const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : megabytes(bytes / 1024));

async function main() {
  await recreateDatabase(databaseUrl);
  const db = createDatabase(databaseUrl, 2);
  try {
    await migrateToLatest(db);
    const payrollId = await setUp(db);
    process.stdout.write(`Employee import benchmark: ${ROWS.toLocaleString('en-GB')} rows\n`);
    const goodBytes = (await timed('write the file', () => writeFile(values.file!, false), 50)).result;
    const badBytes = (await timed('write the all-bad file', () => writeFile(values['bad-file']!, true), 50)).result;
    const rssBefore = process.memoryUsage().rss;

    const first = await measuredImport(db, 'import (all new)', payrollId, values.file!, { dryRun: false });
    const again = await measuredImport(db, 'import the same file again (no-op)', payrollId, values.file!, { dryRun: false });
    const bad = await measuredImport(db, 'dry run of the all-bad file', payrollId, values['bad-file']!, { dryRun: true });

    const floorPayroll = await setUp(db);
    const floor = await timed(
      'floor: INSERT ... SELECT generate_series',
      async () =>
        timedPartsRolledBack(db, async (part) => {
          await part(
            'employees',
            sql`insert into employees (id, payroll_provider_id, national_registration_number, date_of_birth, given_name, family_name, email_address, phone_number, postal_code)
              select gen_random_uuid(), (select payroll_provider_id from payrolls where id = ${payrollId}::uuid), 'ZZ' || lpad(i::text, 7, '0'),
                     date '1960-01-01' + (i % 14000), 'Given' || i, 'Family' || i, 'given.' || i || '@example.com', '+4477009' || lpad((i % 100000)::text, 5, '0'), 'LS1 4AP'
                from generate_series(1, ${ROWS}) i`,
          );
          await part(
            'employments',
            sql`insert into employments (employee_id, employer_id, payroll_id, payroll_reference, given_name, family_name, email_address, phone_number, postal_code,
                                         start_date, end_date, employment_status, contract_type, annualised_salary, currency)
              select e.id, p.employer_id, p.id, 'FLOOR' || e.national_registration_number, e.given_name, e.family_name, e.email_address, e.phone_number, e.postal_code,
                     date '2015-01-01', null, 'active', 'full_time', 2500000, 'GBP'
                from employees e, payrolls p
               where e.national_registration_number like 'ZZ%' and p.id = ${floorPayroll}::uuid`,
          );
        }),
      50,
    );
    const floorMs = floor.ms;

    const counts = await sql<{ employees: number; employments: number; leavers: number; runs: number; events: number }>`
      select (select count(*) from employees)::int as employees, (select count(*) from employments)::int as employments,
             (select count(*) from employments where employment_status = 'leaver')::int as leavers,
             (select count(*) from employee_import_runs)::int as runs, (select count(*) from events)::int as events
    `.execute(db);
    const check = counts.rows[0]!;

    const line = (name: string, run: Measured, bytes: number) =>
      [
        `  ${name}`,
        `    wall time                ${seconds(run.ms)} s, ${perSecond(ROWS, run.ms)} rows/s, ${(bytes / 1_048_576 / (run.ms / 1000)).toFixed(1)} MB/s of file`,
        `    report                   created ${run.report.created}, updated ${run.report.updated}, unchanged ${run.report.unchanged}, left ${run.report.left}, rejected ${run.report.rejected}, errors ${run.report.error_count} (${run.report.errors.length} listed)`,
        `    RSS at 10% / 50% / 100% of the rows read, at the end   ${mb(run.rssAtShare['10%'])} / ${mb(run.rssAtShare['50%'])} / ${mb(run.rssAtShare['100%'])}, ${mb(run.rssAtEnd)}`,
        `    ratio to the floor       ${(run.ms / floorMs).toFixed(2)}x`,
      ].join('\n');
    process.stdout.write(
      [
        '',
        `Result (${ROWS.toLocaleString('en-GB')} rows; file ${megabytes(goodBytes / 1024)}, all-bad file ${megabytes(badBytes / 1024)})`,
        `  RSS before the imports     ${mb(rssBefore)}`,
        line('import, all rows new', first, goodBytes),
        line('the same file again', again, goodBytes),
        line('dry run, every row bad', bad, badBytes),
        `  floor (2 INSERT ... SELECT generate_series, rolled back)   ${seconds(floorMs)} s, ${perSecond(ROWS, floorMs)} rows/s (employees ${seconds(floor.result.employees!)} s, employments ${seconds(floor.result.employments!)} s)`,
        `  peak RSS (this process)    ${megabytes(process.resourceUsage().maxRSS)}`,
        `  after: ${check.employees} employees, ${check.employments} employments (${check.leavers} leavers), ${check.runs} import runs, ${check.events} events`,
        '',
      ].join('\n'),
    );
    const ok =
      first.report.created === ROWS &&
      again.report.unchanged === ROWS &&
      again.report.updated === 0 &&
      bad.report.error_count === ROWS &&
      bad.report.errors.length === 1_000 &&
      check.employments === ROWS;
    if (!ok) {
      process.stderr.write('The import did not do what it should: see the counts above\n');
      process.exitCode = 1;
    }
  } finally {
    await db.destroy();
  }
}

await main();
