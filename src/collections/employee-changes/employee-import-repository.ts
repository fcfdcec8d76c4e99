import { sql, type Insertable } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { ContractType, EmployeeImportRunsTable, EmploymentStatus } from '../../platform/db/tables.ts';
import { LIVE_MANDATE_STATUSES } from './employment-change-repository.ts';

// A bulk import works set-based: good rows are staged in a temporary table of the importing
// transaction (dropped at its end), checked against each other there, then applied in slices of
// lines with one statement per table. Unchanged rows are never written, so a repeated file bumps no
// updated_at and raises no event.

/** One good row as staged: the employee it resolved to, and the record the file gives it. */
export interface StagedImportRow {
  line: number;
  employeeId: string;
  newEmployee: boolean;
  payroll_reference: string;
  given_name: string;
  family_name: string;
  national_registration_number: string | null;
  date_of_birth: string | null;
  email_address: string | null;
  phone_number: string | null;
  postal_code: string | null;
  start_date: string | null;
  end_date: string | null;
  employment_status: EmploymentStatus;
  contract_type: ContractType;
  annualised_salary: number | null;
  currency: string;
}

/** Two imports of one payroll never interleave: the second waits for the first to commit. */
export async function advisoryLockPayrollForImport(trx: Executor, payrollId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`employee-import:${payrollId}`}, 0))`.execute(trx);
}

export async function createImportStaging(trx: Executor): Promise<void> {
  await sql`
    create temporary table employee_import_rows (
      line integer primary key,
      employee_id uuid not null,
      new_employee boolean not null,
      payroll_reference text not null,
      given_name text not null,
      family_name text not null,
      national_registration_number text,
      date_of_birth date,
      email_address text,
      phone_number text,
      postal_code text,
      start_date date,
      end_date date,
      employment_status text not null,
      contract_type text not null,
      annualised_salary bigint,
      currency char(3) not null,
      rejected boolean not null default false,
      duplicate_column text,
      duplicate_of integer
    ) on commit drop
  `.execute(trx);
}

export async function stageImportRows(trx: Executor, rows: readonly StagedImportRow[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <K extends keyof StagedImportRow>(key: K) => rows.map((row) => row[key]);
  await sql`
    insert into employee_import_rows (
      line, employee_id, new_employee, payroll_reference, given_name, family_name, national_registration_number,
      date_of_birth, email_address, phone_number, postal_code, start_date, end_date, employment_status,
      contract_type, annualised_salary, currency)
    select * from unnest(
      ${column('line')}::int4[], ${column('employeeId')}::uuid[], ${column('newEmployee')}::bool[],
      ${column('payroll_reference')}::text[], ${column('given_name')}::text[], ${column('family_name')}::text[],
      ${column('national_registration_number')}::text[], ${column('date_of_birth')}::date[], ${column('email_address')}::text[],
      ${column('phone_number')}::text[], ${column('postal_code')}::text[], ${column('start_date')}::date[],
      ${column('end_date')}::date[], ${column('employment_status')}::text[], ${column('contract_type')}::text[],
      ${column('annualised_salary')}::int8[], ${column('currency')}::text[])
  `.execute(trx);
}

/**
 * Temporary tables are never analysed by autovacuum: without statistics the planner may scan all
 * staged rows for each slice, which makes applying a large file quadratic.
 */
export async function analyzeImportStaging(trx: Executor): Promise<void> {
  await sql`analyze employee_import_rows`.execute(trx);
}

export interface ReferenceHolder {
  payrollReference: string;
  employeeId: string;
}

export interface NationalRegistrationNumberHolder {
  nationalRegistrationNumber: string;
  employeeId: string;
  date_of_birth: string | null;
  family_name: string;
  payrollReferenceOnThisPayroll: string | null;
}

/** Who already holds a slice's payroll references on the payroll, and its national registration numbers at the provider. */
export async function findImportCandidates(
  trx: Executor,
  scope: { payrollId: string; providerId: string },
  keys: { payrollReferences: readonly string[]; nationalRegistrationNumbers: readonly string[] },
): Promise<{ byReference: ReferenceHolder[]; byNationalRegistrationNumber: NationalRegistrationNumberHolder[] }> {
  const byReference = await sql<ReferenceHolder>`
    select e.payroll_reference as "payrollReference", e.employee_id as "employeeId"
      from employments e
     where e.payroll_id = ${scope.payrollId}::uuid and e.payroll_reference = any(${keys.payrollReferences}::text[])
  `.execute(trx);
  const byNationalRegistrationNumber =
    keys.nationalRegistrationNumbers.length === 0
      ? { rows: [] }
      : await sql<NationalRegistrationNumberHolder>`
    select p.national_registration_number as "nationalRegistrationNumber", p.id as "employeeId", p.date_of_birth, p.family_name,
           e.payroll_reference as "payrollReferenceOnThisPayroll"
      from employees p
      left join employments e on e.employee_id = p.id and e.payroll_id = ${scope.payrollId}::uuid
     where p.payroll_provider_id = ${scope.providerId}::uuid
       and p.national_registration_number = any(${keys.nationalRegistrationNumbers}::text[])
  `.execute(trx);
  return { byReference: byReference.rows, byNationalRegistrationNumber: byNationalRegistrationNumber.rows };
}

export interface DuplicateInFile {
  line: number;
  column: 'payroll_reference' | 'national_registration_number';
  firstLine: number;
}

/**
 * Marks rejected every staged row whose payroll reference, or national registration number, an
 * earlier staged row of the file already has (the first one stands), noting which line it repeats.
 * Gives how many rows it marked; listDuplicatesInFile gives them.
 */
export async function rejectDuplicatesInFile(trx: Executor, column: DuplicateInFile['column']): Promise<number> {
  const key = sql.ref(column);
  const result = await sql`
    with firsts as (
      select line, min(line) over (partition by ${key}) as first_line
        from employee_import_rows
       where ${key} is not null and not rejected
    )
    update employee_import_rows s set rejected = true, duplicate_column = ${column}, duplicate_of = f.first_line
      from firsts f
     where f.line = s.line and f.first_line < f.line
  `.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** Up to `limit` rows marked as repeating an earlier one, after `afterLine`, in line order. */
export async function listDuplicatesInFile(trx: Executor, afterLine: number, limit: number): Promise<DuplicateInFile[]> {
  const result = await sql<DuplicateInFile>`
    select line, duplicate_column as "column", duplicate_of as "firstLine"
      from employee_import_rows
     where duplicate_of is not null and line > ${afterLine}
     order by line
     limit ${limit}
  `.execute(trx);
  return result.rows;
}

/** The last staged good line of the slice of at most `size` good lines after `afterLine`; undefined when none is left. */
export async function nextImportSliceEnd(trx: Executor, afterLine: number, size: number): Promise<number | undefined> {
  const result = await sql<{ last: number | null }>`
    select max(line) as last from (
      select line from employee_import_rows where line > ${afterLine} and not rejected order by line limit ${size}
    ) slice
  `.execute(trx);
  return result.rows[0]?.last ?? undefined;
}

export async function countStagedImportRows(trx: Executor): Promise<number> {
  const result = await sql<{ count: string }>`select count(*) as count from employee_import_rows where not rejected`.execute(trx);
  return Number(result.rows[0]!.count);
}

const employeeDiffers = sql`
  (p.national_registration_number, p.date_of_birth, p.given_name, p.family_name, p.email_address, p.phone_number, p.postal_code)
  is distinct from
  (s.national_registration_number, s.date_of_birth, s.given_name, s.family_name, s.email_address, s.phone_number, s.postal_code)`;

export interface ImportSliceCounts {
  created: number;
  updated: number;
  unchanged: number;
  left: number;
}

/**
 * What applying one slice would do, judged against the directory as it stands: a new employment is
 * created; an existing one is updated when anything of its employee or employment differs, else
 * unchanged; it left when it becomes a leaver now.
 */
export async function classifyImportSlice(
  trx: Executor,
  scope: { payrollId: string; employerId: string },
  slice: { afterLine: number; lastLine: number },
): Promise<ImportSliceCounts> {
  const result = await sql<{ created: string; updated: string; unchanged: string; left: string }>`
    with judged as (
      select e.id is null as created,
             e.employment_status <> 'leaver' and s.employment_status = 'leaver' as became_leaver,
             ${employeeDiffers}
             or (e.employer_id, e.start_date, e.end_date, e.employment_status, e.contract_type, e.annualised_salary, e.currency)
                is distinct from
                (${scope.employerId}::uuid, s.start_date, s.end_date, s.employment_status, s.contract_type, s.annualised_salary, s.currency)
             as changed
        from employee_import_rows s
        left join employments e on e.payroll_id = ${scope.payrollId}::uuid and e.payroll_reference = s.payroll_reference
        left join employees p on p.id = s.employee_id
       where s.line > ${slice.afterLine} and s.line <= ${slice.lastLine} and not s.rejected
    )
    select count(*) filter (where created) as created,
           count(*) filter (where not created and changed) as updated,
           count(*) filter (where not created and not changed) as unchanged,
           count(*) filter (where not created and became_leaver) as left
      from judged
  `.execute(trx);
  const row = result.rows[0]!;
  return { created: Number(row.created), updated: Number(row.updated), unchanged: Number(row.unchanged), left: Number(row.left) };
}

/** Employees of a slice already on the payroll whose billers hold live mandates there: their changes have consequences. */
export async function listMandatedEmployeesOfSlice(trx: Executor, payrollId: string, slice: { afterLine: number; lastLine: number }): Promise<string[]> {
  const result = await sql<{ employee_id: string }>`
    select distinct s.employee_id
      from employee_import_rows s
      join mandates m on m.employee_id = s.employee_id and m.payroll_id = ${payrollId}::uuid and m.status = any(${LIVE_MANDATE_STATUSES}::text[])
     where s.line > ${slice.afterLine} and s.line <= ${slice.lastLine} and not s.rejected and not s.new_employee
     order by s.employee_id
  `.execute(trx);
  return result.rows.map((row) => row.employee_id);
}

/**
 * Writes one slice: new employees, changed employees, then employments inserted or, where the
 * reference exists for the same employee and something differs, updated. A row equal to what is
 * stored writes nothing.
 */
export async function applyImportSlice(
  trx: Executor,
  scope: { payrollId: string; providerId: string; employerId: string },
  slice: { afterLine: number; lastLine: number },
): Promise<void> {
  const inSlice = sql`s.line > ${slice.afterLine} and s.line <= ${slice.lastLine} and not s.rejected`;
  await sql`
    insert into employees (id, payroll_provider_id, national_registration_number, date_of_birth, given_name, family_name,
                           email_address, phone_number, postal_code)
    select s.employee_id, ${scope.providerId}::uuid, s.national_registration_number, s.date_of_birth, s.given_name, s.family_name,
           s.email_address, s.phone_number, s.postal_code
      from employee_import_rows s
     where ${inSlice} and s.new_employee
  `.execute(trx);
  await sql`
    update employees p
       set national_registration_number = s.national_registration_number, date_of_birth = s.date_of_birth,
           given_name = s.given_name, family_name = s.family_name, email_address = s.email_address,
           phone_number = s.phone_number, postal_code = s.postal_code, updated_at = now()
      from employee_import_rows s
     where ${inSlice} and not s.new_employee and p.id = s.employee_id and ${employeeDiffers}
  `.execute(trx);
  await sql`
    insert into employments (employee_id, employer_id, payroll_id, payroll_reference, start_date, end_date,
                             employment_status, contract_type, annualised_salary, currency)
    select s.employee_id, ${scope.employerId}::uuid, ${scope.payrollId}::uuid, s.payroll_reference, s.start_date, s.end_date,
           s.employment_status, s.contract_type, s.annualised_salary, s.currency
      from employee_import_rows s
     where ${inSlice}
     order by s.line
    on conflict (payroll_id, payroll_reference) do update
       set employer_id = excluded.employer_id, start_date = excluded.start_date, end_date = excluded.end_date,
           employment_status = excluded.employment_status, contract_type = excluded.contract_type,
           annualised_salary = excluded.annualised_salary, currency = excluded.currency, updated_at = now()
     where employments.employee_id = excluded.employee_id
       and (employments.employer_id, employments.start_date, employments.end_date, employments.employment_status,
            employments.contract_type, employments.annualised_salary, employments.currency)
           is distinct from
           (excluded.employer_id, excluded.start_date, excluded.end_date, excluded.employment_status,
            excluded.contract_type, excluded.annualised_salary, excluded.currency)
  `.execute(trx);
}

export type NewImportRun = Omit<Insertable<EmployeeImportRunsTable>, 'id' | 'finished_at'>;

export async function insertImportRun(trx: Executor, run: NewImportRun) {
  return trx.insertInto('employee_import_runs').values(run).returning(['id', 'finished_at']).executeTakeFirstOrThrow();
}

/** The latest applied import of this very file into the payroll, if any. */
export async function findLatestImportOfFile(db: Executor, payrollId: string, fileSha256: string) {
  return db
    .selectFrom('employee_import_runs')
    .select(['id', 'finished_at', 'imported_by'])
    .where('payroll_id', '=', payrollId)
    .where('file_sha256', '=', fileSha256)
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}
