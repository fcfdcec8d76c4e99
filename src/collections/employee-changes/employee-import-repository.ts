import { sql, type Insertable } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { ContractType, EmployeeImportRunsTable, EmploymentStatus } from '../../platform/db/tables.ts';
import { knownFamilyNamesOf } from '../../directory/payrolls/directory-repository.ts';
import { LIVE_MANDATE_STATUSES } from './employment-change-repository.ts';

// A bulk import works set-based: every row is staged in a temporary table of the importing
// transaction (dropped at its end), good rows with their record and bad rows with the keys their
// good cells give, so that rows are checked against each other there (repeated payroll references
// and national registration numbers, bad rows included), then good rows are applied in slices of
// lines with one statement per table. An empty cell is a field not given: what is stored stays
// (decision 0015). Unchanged rows are never written, so a repeated file bumps no updated_at and
// raises no event.

/** One row as staged: for a good row, the employee it resolved to and the record the file gives it (null: not given). */
export interface StagedImportRow {
  line: number;
  /** The row has errors of its own (bad cells, refused by the directory): staged for the checks across rows only. */
  rejected: boolean;
  employeeId: string | null;
  newEmployee: boolean | null;
  payroll_reference: string | null;
  given_name: string | null;
  family_name: string | null;
  national_registration_number: string | null;
  date_of_birth: string | null;
  email_address: string | null;
  phone_number: string | null;
  postal_code: string | null;
  start_date: string | null;
  end_date: string | null;
  employment_status: EmploymentStatus | null;
  contract_type: ContractType | null;
  annualised_salary: number | null;
  currency: string | null;
}

/** Two imports of one payroll never interleave: the second waits for the first to commit. */
export async function advisoryLockPayrollForImport(trx: Executor, payrollId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`employee-import:${payrollId}`}, 0))`.execute(trx);
}

export async function createImportStaging(trx: Executor): Promise<void> {
  await sql`
    create temporary table employee_import_rows (
      line integer primary key,
      rejected boolean not null,
      employee_id uuid,
      new_employee boolean,
      payroll_reference text,
      given_name text,
      family_name text,
      national_registration_number text,
      date_of_birth date,
      email_address text,
      phone_number text,
      postal_code text,
      start_date date,
      end_date date,
      employment_status text,
      contract_type text,
      annualised_salary bigint,
      currency char(3),
      reference_repeats integer,
      number_repeats integer
    ) on commit drop
  `.execute(trx);
}

export async function stageImportRows(trx: Executor, rows: readonly StagedImportRow[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <K extends keyof StagedImportRow>(key: K) => rows.map((row) => row[key]);
  await sql`
    insert into employee_import_rows (
      line, rejected, employee_id, new_employee, payroll_reference, given_name, family_name, national_registration_number,
      date_of_birth, email_address, phone_number, postal_code, start_date, end_date, employment_status,
      contract_type, annualised_salary, currency)
    select * from unnest(
      ${column('line')}::int4[], ${column('rejected')}::bool[], ${column('employeeId')}::uuid[], ${column('newEmployee')}::bool[],
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
  national_registration_number: string | null;
  date_of_birth: string | null;
  /** Another payroll employs the same person too. */
  employedElsewhere: boolean;
}

export interface NationalRegistrationNumberHolder {
  nationalRegistrationNumber: string;
  employeeId: string;
  date_of_birth: string | null;
  /** Every family name known for the person (knownFamilyNamesOf). */
  family_names: string[];
  payrollReferenceOnThisPayroll: string | null;
}

/** Who already holds a slice's payroll references on the payroll, and its national registration numbers at the provider. */
export async function findImportCandidates(
  trx: Executor,
  scope: { payrollId: string; providerId: string },
  keys: { payrollReferences: readonly string[]; nationalRegistrationNumbers: readonly string[] },
): Promise<{ byReference: ReferenceHolder[]; byNationalRegistrationNumber: NationalRegistrationNumberHolder[] }> {
  const byReference =
    keys.payrollReferences.length === 0
      ? { rows: [] }
      : await sql<ReferenceHolder>`
    select e.payroll_reference as "payrollReference", e.employee_id as "employeeId", p.national_registration_number, p.date_of_birth,
           exists (select 1 from employments o where o.employee_id = e.employee_id and o.payroll_id <> e.payroll_id) as "employedElsewhere"
      from employments e
      join employees p on p.id = e.employee_id
     where e.payroll_id = ${scope.payrollId}::uuid and e.payroll_reference = any(${keys.payrollReferences}::text[])
  `.execute(trx);
  const byNationalRegistrationNumber =
    keys.nationalRegistrationNumbers.length === 0
      ? { rows: [] }
      : await sql<NationalRegistrationNumberHolder>`
    select p.national_registration_number as "nationalRegistrationNumber", p.id as "employeeId", p.date_of_birth,
           ${knownFamilyNamesOf('p')} as family_names,
           e.payroll_reference as "payrollReferenceOnThisPayroll"
      from employees p
      left join employments e on e.employee_id = p.id and e.payroll_id = ${scope.payrollId}::uuid
     where p.payroll_provider_id = ${scope.providerId}::uuid
       and p.national_registration_number = any(${keys.nationalRegistrationNumbers}::text[])
  `.execute(trx);
  return {
    byReference: byReference.rows,
    byNationalRegistrationNumber: byNationalRegistrationNumber.rows,
  };
}

/**
 * Marks every staged row whose payroll reference, or national registration number, an earlier row of
 * the file already has (the first one stands, good or bad) as rejected, noting which line it
 * repeats. Bad rows take part with the keys their good cells give, so a repeated reference is found
 * in the same pass as the row's other faults. listRepeatedRows gives them.
 */
export async function markRepeatedRows(trx: Executor): Promise<void> {
  for (const [key, repeats] of [
    ['payroll_reference', 'reference_repeats'],
    ['national_registration_number', 'number_repeats'],
  ] as const) {
    await sql`
      with firsts as (
        select line, min(line) over (partition by ${sql.ref(key)}) as first_line
          from employee_import_rows
         where ${sql.ref(key)} is not null
      )
      update employee_import_rows s set rejected = true, ${sql.ref(repeats)} = f.first_line
        from firsts f
       where f.line = s.line and f.first_line < f.line
    `.execute(trx);
  }
}

export interface RepeatedRow {
  line: number;
  /** The earlier line with the same payroll reference, if any. */
  referenceRepeats: number | null;
  /** The earlier line with the same national registration number, if any. */
  numberRepeats: number | null;
}

/** Up to `limit` rows repeating an earlier one, after `afterLine`, in line order. */
export async function listRepeatedRows(trx: Executor, afterLine: number, limit: number): Promise<RepeatedRow[]> {
  const result = await sql<RepeatedRow>`
    select line, reference_repeats as "referenceRepeats", number_repeats as "numberRepeats"
      from employee_import_rows
     where (reference_repeats is not null or number_repeats is not null) and line > ${afterLine}
     order by line
     limit ${limit}
  `.execute(trx);
  return result.rows;
}

/** How many rows are bad, for whatever reason. */
export async function countRejectedImportRows(trx: Executor): Promise<number> {
  const result = await sql<{ count: string }>`select count(*) as count from employee_import_rows where rejected`.execute(trx);
  return Number(result.rows[0]!.count);
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

/** The person's identifiers after the row (p: the employee, s: the staged row): what it gives, else what is stored. */
const identityDiffers = sql`
  (p.national_registration_number, p.date_of_birth)
  is distinct from
  (coalesce(s.national_registration_number, p.national_registration_number), coalesce(s.date_of_birth, p.date_of_birth))`;

/** The employment after the row (e: the employment, s: the staged row): the required fields as given, the others as given or as stored. */
const employmentDiffers = (employerId: string) => sql`
  (e.employer_id, e.given_name, e.family_name, e.email_address, e.phone_number, e.postal_code, e.start_date, e.end_date,
   e.employment_status, e.contract_type, e.annualised_salary, e.currency)
  is distinct from
  (${employerId}::uuid, s.given_name, s.family_name, coalesce(s.email_address, e.email_address), coalesce(s.phone_number, e.phone_number),
   coalesce(s.postal_code, e.postal_code), coalesce(s.start_date, e.start_date), coalesce(s.end_date, e.end_date),
   s.employment_status, coalesce(s.contract_type, e.contract_type), coalesce(s.annualised_salary, e.annualised_salary), s.currency)`;

export interface ImportSliceCounts {
  created: number;
  updated: number;
  unchanged: number;
  left: number;
}

/**
 * What applying one slice would do, judged against the directory as it stands: a new employment is
 * created; an existing one is updated when anything of its employment, or of its person's
 * identifiers, would differ, else unchanged; it left when it becomes a leaver now.
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
             ${identityDiffers} or ${employmentDiffers(scope.employerId)} as changed
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
 * Writes one slice: new employees (who they are, and the name and contact details they are first
 * recorded with); the identifiers of existing ones, where the row gives one they lacked or may
 * change (matchImportedEmployee refused the rest); employments updated where the reference exists
 * for the same employee and something differs; then new employments. A cell not given keeps what
 * is stored; a row equal to what is stored writes nothing.
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
       set national_registration_number = coalesce(s.national_registration_number, p.national_registration_number),
           date_of_birth = coalesce(s.date_of_birth, p.date_of_birth), updated_at = now()
      from employee_import_rows s
     where ${inSlice} and not s.new_employee and p.id = s.employee_id and ${identityDiffers}
  `.execute(trx);
  await sql`
    update employments e
       set employer_id = ${scope.employerId}::uuid, given_name = s.given_name, family_name = s.family_name,
           email_address = coalesce(s.email_address, e.email_address), phone_number = coalesce(s.phone_number, e.phone_number),
           postal_code = coalesce(s.postal_code, e.postal_code), start_date = coalesce(s.start_date, e.start_date),
           end_date = coalesce(s.end_date, e.end_date), employment_status = s.employment_status,
           contract_type = coalesce(s.contract_type, e.contract_type), annualised_salary = coalesce(s.annualised_salary, e.annualised_salary),
           currency = s.currency, updated_at = now()
      from employee_import_rows s
     where ${inSlice} and e.payroll_id = ${scope.payrollId}::uuid and e.payroll_reference = s.payroll_reference
       and e.employee_id = s.employee_id and ${employmentDiffers(scope.employerId)}
  `.execute(trx);
  await sql`
    insert into employments (employee_id, employer_id, payroll_id, payroll_reference, given_name, family_name, email_address,
                             phone_number, postal_code, start_date, end_date, employment_status, contract_type, annualised_salary, currency)
    select s.employee_id, ${scope.employerId}::uuid, ${scope.payrollId}::uuid, s.payroll_reference, s.given_name, s.family_name, s.email_address,
           s.phone_number, s.postal_code, s.start_date, s.end_date, s.employment_status, coalesce(s.contract_type, 'unknown'),
           s.annualised_salary, s.currency
      from employee_import_rows s
     where ${inSlice}
       and not exists (select 1 from employments e where e.payroll_id = ${scope.payrollId}::uuid and e.payroll_reference = s.payroll_reference)
     order by s.line
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
