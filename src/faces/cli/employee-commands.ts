import { createReadStream, statSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { employmentStatusSchema, contractTypeSchema } from '../../directory/payroll-providers/reference-schemas.ts';
import type { EmployeeChanges } from '../../collections/employee-changes/employee-admin-service.ts';
import type { ImportErrorFile } from '../../directory/payrolls/employee-import-error-file.ts';
import type { EmployeeImportReport } from '../../directory/payrolls/employee-import-resource.ts';
import type { EmployeeImportProgress } from '../../collections/employee-changes/employee-import-service.ts';
import type { EmployeeRecord, EmployeeResource } from '../../directory/payrolls/employee-resource.ts';
import type { Runtime } from '../../platform/runtime/runtime.ts';
import { InvalidError } from '../../platform/shared/domain-errors.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, useCursorKeys } from '../../platform/shared/paging.ts';
import { operatorName, parseDateOption, parseUuidOption } from './options.ts';

/** Files from this size on show a progress bar on stderr while they import. */
const PROGRESS_FROM_BYTES = 1024 * 1024;

function parseChoice<T extends string>(choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`);
    return value as T;
  };
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_PAGE_SIZE}`);
  return limit;
}

export function describeEmployee(employee: EmployeeResource): string {
  const salary = employee.annualised_salary === null ? 'salary unknown' : `${formatMoney(employee.annualised_salary, employee.currency)} a year`;
  const dates = `${employee.start_date ?? '?'} to ${employee.end_date ?? 'now'}`;
  return `Employee ${employee.id} ${employee.payroll_reference} ${employee.given_name} ${employee.family_name}: ${employee.employment_status}, ${employee.contract_type}, ${dates}, ${salary}`;
}

/** The report for a person; `errorsFile` is where every error was written (--errors-out), if anywhere. */
export function describeImport(report: EmployeeImportReport, errorsFile?: string): string {
  const what = report.dry_run
    ? 'Dry run, nothing applied'
    : !report.applied
      ? 'Rejected, nothing applied'
      : report.import_id === null
        ? 'Nothing changed (no import run or audit entry recorded)'
        : `Imported (import ${report.import_id})`;
  const lines = [
    `${what}: ${report.rows} rows, ${report.created} created, ${report.updated} updated (${report.left} left), ${report.unchanged} unchanged, ${report.rejected} rejected`,
    `  file sha256 ${report.file_sha256}`,
  ];
  if (report.previous_import)
    lines.push(`  this file was imported before: ${report.previous_import.id} at ${report.previous_import.finished_at} by ${report.previous_import.imported_by}`);
  for (const error of report.errors) lines.push(`  line ${error.line}${error.column === null ? '' : `, ${error.column}`}: ${error.reason}`);
  if (errorsFile !== undefined && report.error_count > 0) {
    lines.push(`  all ${report.error_count} errors are in ${errorsFile}`);
  } else if (report.errors_truncated) {
    lines.push(`  ... ${report.error_count - report.errors.length} more errors not listed; --errors-out FILE writes every one (line,column,reason)`);
  }
  // Every error of every row is found in one pass: fixing these leaves no second round.
  const good = report.rows - report.rejected;
  if (report.rejected > 0 && !report.partial && good > 0) {
    const rows = `${good} good row${good === 1 ? '' : 's'}`;
    const listing = errorsFile === undefined ? '; --errors-out FILE writes every error (line,column,reason)' : '';
    lines.push(
      report.dry_run
        ? `  with --partial, the ${rows} would be imported and the bad ones left out${listing}`
        : `  fix the bad rows, or run again with --partial to import the ${rows} alone (the bad ones are left out and reported)${listing}`,
    );
  }
  return lines.join('\n');
}

/** With --json, stdout holds the one JSON object, so the way to the full error list goes to stderr. */
function printImport(report: EmployeeImportReport, json: boolean | undefined, errorsFile: string | undefined): void {
  if (!json) {
    process.stdout.write(`${describeImport(report, errorsFile)}\n`);
    return;
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
  if (report.errors_truncated && errorsFile === undefined) {
    process.stderr.write(`${report.error_count - report.errors.length} more errors not listed; --errors-out FILE writes every one (line,column,reason)\n`);
  }
}

async function withRuntime(name: string, work: (runtime: Runtime) => Promise<void>): Promise<void> {
  const { loadConfig } = await import('../../platform/config/config.ts');
  const { openRuntime } = await import('../../platform/runtime/runtime.ts');
  const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, name);
  try {
    await work(runtime);
  } catch (error) {
    (await import('./failures.ts')).reportRefusal(error);
  } finally {
    await runtime.close();
  }
}

function printEmployee(employee: EmployeeResource, json: boolean | undefined): void {
  process.stdout.write(json ? `${JSON.stringify(employee)}\n` : `${describeEmployee(employee)}\n`);
}

interface RecordOptions {
  payrollReference?: string;
  givenName?: string;
  familyName?: string;
  nationalRegistrationNumber?: string;
  dateOfBirth?: string;
  email?: string;
  phone?: string;
  postalCode?: string;
  startDate?: string;
  endDate?: string;
  status?: EmployeeRecord['employment_status'];
  contractType?: NonNullable<EmployeeRecord['contract_type']>;
  annualisedSalary?: string;
}

/** The fields an option set gives; an empty value clears an optional field (null). */
async function recordFields(runtime: Runtime, payrollId: string, options: RecordOptions): Promise<EmployeeChanges> {
  const text = (value: string | undefined) => (value === undefined ? undefined : value.trim() === '' ? null : value);
  let salary: number | null | undefined;
  if (options.annualisedSalary !== undefined) {
    if (options.annualisedSalary.trim() === '') {
      salary = null;
    } else {
      const { salaryInMinorUnits } = await import('../../directory/payrolls/employee-import-rules.ts');
      const { payrollCurrencyOf } = await import('../../collections/employee-changes/employee-admin-service.ts');
      const converted = salaryInMinorUnits(options.annualisedSalary.trim(), await payrollCurrencyOf(runtime.db, payrollId));
      if ('reason' in converted) {
        throw new InvalidError('invalid-salary', `--annualised-salary ${converted.reason}`);
      }
      salary = converted.minorUnits;
    }
  }
  const fields: EmployeeChanges = {
    payroll_reference: options.payrollReference,
    given_name: options.givenName,
    family_name: options.familyName,
    national_registration_number: text(options.nationalRegistrationNumber),
    date_of_birth: text(options.dateOfBirth),
    email_address: text(options.email),
    phone_number: text(options.phone),
    postal_code: text(options.postalCode),
    start_date: text(options.startDate),
    end_date: text(options.endDate),
    employment_status: options.status,
    contract_type: options.contractType,
    annualised_salary: salary,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as EmployeeChanges;
}

function recordOptions(command: Command, required: boolean): Command {
  const option = (flags: string, description: string, parse?: (value: string) => unknown) => {
    if (parse) command.option(flags, description, parse as never);
    else command.option(flags, description);
  };
  const needed = (flags: string, description: string) => (required ? command.requiredOption(flags, description) : command.option(flags, description));
  needed('--payroll-reference <ref>', "the employee's works number on the payroll");
  needed('--given-name <name>', 'given name');
  needed('--family-name <name>', 'family name');
  option('--national-registration-number <nino>', 'National Insurance number');
  option('--date-of-birth <date>', 'YYYY-MM-DD');
  option('--email <address>', 'e-mail address');
  option('--phone <number>', 'phone number');
  option('--postal-code <code>', 'postal code');
  option('--start-date <date>', 'employment start, YYYY-MM-DD');
  option('--end-date <date>', 'employment end, YYYY-MM-DD (a leaver needs one)');
  option('--status <status>', 'active, leaver or unknown' + (required ? ' (default active)' : ''), parseChoice(employmentStatusSchema.options));
  option('--contract-type <type>', contractTypeSchema.options.join(', '), parseChoice(contractTypeSchema.options));
  option('--annualised-salary <amount>', "annual salary in major units of the payroll's currency, e.g. 42000.50");
  return command;
}

export function registerEmployeeCommands(program: Command): void {
  const employees = program.command('employees').description("A payroll's employees and employments: bulk CSV import, single changes, leavers (all audited)");

  employees
    .command('import')
    .description('Import employees and employments from a CSV file, upserting by payroll reference (bad rows listed; nothing applied unless --partial)')
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--file <path>', 'the CSV file (header line first)')
    .option('--dry-run', 'validate and report what would change; apply nothing')
    .option('--partial', 'apply the good rows even when some are bad')
    .option('--errors-out <file>', 'write every bad row to this CSV file (line,column,reason), however many; the report lists the first 1,000')
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who imports (default: the OS user)')
    .option('--json', 'print the report as JSON')
    .action(async (options: { payroll: string; file: string; dryRun?: boolean; partial?: boolean; errorsOut?: string; reason?: string; by?: string; json?: boolean }) => {
      let size: number;
      try {
        size = statSync(options.file).size;
      } catch (error) {
        throw new InvalidError('unreadable-file', `Cannot read ${options.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const { Presets, SingleBar } = await import('cli-progress');
      const { openImportErrorFile } = await import('../../directory/payrolls/employee-import-error-file.ts');
      const { EmployeeImportRejected, importEmployees } = await import('../../collections/employee-changes/employee-import-service.ts');
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const bar =
        size >= PROGRESS_FROM_BYTES
          ? new SingleBar({ format: '{phase} {bar} {percentage}% | {rows} rows | {duration}s', hideCursor: true, stream: process.stderr }, Presets.shades_classic)
          : undefined;
      let applying = false;
      const onProgress = (progress: EmployeeImportProgress) => {
        if (!bar) return;
        if (progress.phase === 'reading') {
          if (!bar.isActive) bar.start(size, 0, { phase: 'Reading ', rows: 0 });
          bar.update(progress.bytes, { rows: progress.rows });
        } else {
          if (!applying) {
            applying = true;
            bar.setTotal(Math.max(progress.total, 1));
            bar.update(0, { phase: options.dryRun ? 'Counting' : 'Applying' });
          }
          bar.update(progress.rows, { rows: progress.rows });
        }
      };
      let errorsFile: ImportErrorFile | undefined;
      try {
        errorsFile = options.errorsOut === undefined ? undefined : await openImportErrorFile(options.errorsOut);
      } catch (error) {
        throw new InvalidError('unwritable-file', `Cannot write ${options.errorsOut}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'employees-import');
      let listed = false;
      try {
        const report = await runtime.db.transaction().execute((trx) =>
          importEmployees(trx, {
            payrollId: options.payroll,
            source: createReadStream(options.file),
            dryRun: options.dryRun ?? false,
            partial: options.partial ?? false,
            actor: cliActor(operatorName(options.by)),
            reason: options.reason ?? null,
            onProgress,
            errorSink: errorsFile,
          }),
        );
        bar?.stop();
        await errorsFile?.close();
        listed = true;
        printImport(report, options.json, errorsFile?.path);
      } catch (error) {
        bar?.stop();
        if (error instanceof EmployeeImportRejected) {
          await errorsFile?.close();
          listed = true;
          printImport(error.report, options.json, errorsFile?.path);
        }
        (await import('./failures.ts')).reportRefusal(error);
      } finally {
        // A file that failed to import (unreadable, bad header) leaves no partial list behind.
        if (!listed) await errorsFile?.discard();
        await runtime.close();
      }
    });

  recordOptions(
    employees
      .command('create')
      .description("Add an employee to a payroll (the provider's same person, by national registration number, birth date and family name, gets a second employment)")
      .requiredOption('--payroll <id>', 'payroll id', parseUuidOption),
    true,
  )
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who adds the employee (default: the OS user)')
    .option('--json', 'print the employee as JSON')
    .action(async (options: RecordOptions & { payroll: string; reason?: string; by?: string; json?: boolean }) => {
      const { createEmployeeOnPayroll } = await import('../../collections/employee-changes/employee-admin-service.ts');
      await withRuntime('employees', async (runtime) => {
        const fields = await recordFields(runtime, options.payroll, options);
        const record = { employment_status: 'active', ...fields } as EmployeeRecord;
        const employee = await runtime.db
          .transaction()
          .execute((trx) => createEmployeeOnPayroll(trx, options.payroll, record, { actor: cliActor(operatorName(options.by)), reason: options.reason ?? null }));
        printEmployee(employee, options.json);
      });
    });

  recordOptions(
    employees
      .command('update')
      .description(
        "Change an employee's record on a payroll (an empty value clears an optional field); billers holding mandates hear of it, a status change moves their mandates",
      )
      .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
      .requiredOption('--employee <id>', 'employee id', parseUuidOption),
    false,
  )
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who makes the change (default: the OS user)')
    .option('--json', 'print the employee as JSON')
    .action(async (options: RecordOptions & { payroll: string; employee: string; reason?: string; by?: string; json?: boolean }) => {
      const { updateEmployeeOnPayroll } = await import('../../collections/employee-changes/employee-admin-service.ts');
      await withRuntime('employees', async (runtime) => {
        const changes = await recordFields(runtime, options.payroll, options);
        const employee = await runtime.db
          .transaction()
          .execute((trx) =>
            updateEmployeeOnPayroll(trx, options.payroll, options.employee, changes, { actor: cliActor(operatorName(options.by)), reason: options.reason ?? null }),
          );
        printEmployee(employee, options.json);
      });
    });

  employees
    .command('leave')
    .description('The employee left on --end-date: running mandates end and their pending payment requests are cancelled, as for a leaver the provider pushes')
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--employee <id>', 'employee id', parseUuidOption)
    .requiredOption('--end-date <date>', 'the last day of the employment, YYYY-MM-DD', parseDateOption)
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who records it (default: the OS user)')
    .option('--json', 'print the employee as JSON')
    .action(async (options: { payroll: string; employee: string; endDate: string; reason?: string; by?: string; json?: boolean }) => {
      const { recordLeaver } = await import('../../collections/employee-changes/employee-admin-service.ts');
      await withRuntime('employees', async (runtime) => {
        const employee = await runtime.db
          .transaction()
          .execute((trx) =>
            recordLeaver(trx, options.payroll, options.employee, options.endDate, { actor: cliActor(operatorName(options.by)), reason: options.reason ?? null }),
          );
        printEmployee(employee, options.json);
      });
    });

  employees
    .command('show')
    .description('One employee and its employment on a payroll')
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--employee <id>', 'employee id', parseUuidOption)
    .option('--json', 'print the employee as JSON')
    .action(async (options: { payroll: string; employee: string; json?: boolean }) => {
      const { showEmployeeOnPayroll } = await import('../../collections/employee-changes/employee-admin-service.ts');
      await withRuntime('employees', async (runtime) => printEmployee(await showEmployeeOnPayroll(runtime.db, options.payroll, options.employee), options.json));
    });

  employees
    .command('list')
    .description("A payroll's employees, newest employment first, a page at a time")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .option('--status <status>', 'active, leaver or unknown', parseChoice(employmentStatusSchema.options))
    .option('--limit <n>', `page size (default ${DEFAULT_PAGE_SIZE})`, parseLimit)
    .option('--after <cursor>', 'the next page: the paging.after of the previous one')
    .option('--json', 'print the page as JSON ({ employees, paging })')
    .action(async (options: { payroll: string; status?: EmployeeRecord['employment_status']; limit?: number; after?: string; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { loadTokenIssuer } = await import('../../directory/auth/token-issuer.ts');
      const { listPayrollEmployees } = await import('../../collections/employee-changes/employee-admin-service.ts');
      await withRuntime('employees', async (runtime) => {
        // Cursors are signed with the key the API derives them from, so a page's `after` works in
        // the next command and in the API alike; without the signing key they last one command.
        await loadTokenIssuer(loadConfig()).then(
          (tokens) => useCursorKeys(tokens.derivedSecrets('paging cursors')),
          () => undefined,
        );
        const page = await listPayrollEmployees(
          runtime.db,
          options.payroll,
          { status: options.status },
          {
            limit: options.limit ?? DEFAULT_PAGE_SIZE,
            ...(options.after ? { after: options.after } : {}),
          },
        );
        if (options.json) {
          process.stdout.write(`${JSON.stringify(page)}\n`);
          return;
        }
        const lines = page.employees.map(describeEmployee);
        if (lines.length === 0) lines.push(`No employees on payroll ${options.payroll}`);
        if (page.paging.after) lines.push(`More: --after ${page.paging.after}`);
        process.stdout.write(`${lines.join('\n')}\n`);
      });
    });
}
