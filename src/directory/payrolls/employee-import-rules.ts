import { z } from 'zod';
import { currencyExponent, isSupportedCurrency } from '../../platform/money/currency.ts';
import { fromMajorUnits, MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { employeeRecordRequestSchema, type EmployeeRecord } from './employee-resource.ts';
import { checkNationalInsuranceNumber, identityUpdate, matchesKnownPerson, personIdentity, type KnownPerson, type StoredIdentity } from './person-identity.ts';

// The rules of a bulk CSV import of a payroll's employees, each a pure function: what the header
// must hold, what makes a row good (the provider push's own rules, the employee record schema, plus
// what only a file needs), how a salary in major units becomes minor units, and which employee a
// row is about.

/** The columns of an import file, in the documented order (a file may order them as it likes). */
export const EMPLOYEE_IMPORT_COLUMNS = [
  'payroll_reference',
  'given_name',
  'family_name',
  'national_registration_number',
  'date_of_birth',
  'email_address',
  'phone_number',
  'postal_code',
  'start_date',
  'end_date',
  'employment_status',
  'contract_type',
  'annualised_salary',
  'currency',
] as const;

export type EmployeeImportColumn = (typeof EMPLOYEE_IMPORT_COLUMNS)[number];

/** Without these a row cannot be an employee record; every other column may be left out of the file. */
export const REQUIRED_IMPORT_COLUMNS: readonly EmployeeImportColumn[] = ['payroll_reference', 'given_name', 'family_name', 'employment_status'];

export const importErrorSchema = z
  .object({
    line: z.number().int().min(1).meta({ description: 'Line of the file the row starts on (the header is line 1)' }),
    column: z.string().nullable().meta({ description: 'The column at fault; null when the whole row is' }),
    reason: z.string(),
  })
  .meta({
    id: 'EmployeeImportError',
    description: 'What is wrong with one row of an employee import file',
    example: { line: 12, column: 'date_of_birth', reason: 'must be a date as YYYY-MM-DD' },
  });

export type ImportError = z.infer<typeof importErrorSchema>;

/** A header maps each known column to its position in every row. */
export type ImportHeader = ReadonlyMap<EmployeeImportColumn, number>;

const isImportColumn = (name: string): name is EmployeeImportColumn => (EMPLOYEE_IMPORT_COLUMNS as readonly string[]).includes(name);

/**
 * The first line names the columns: each known column at most once, every required one present, no
 * other. Names are matched as written, apart from surrounding spaces and case.
 */
export function readImportHeader(names: readonly string[]): { header: ImportHeader; errors: ImportError[] } {
  const header = new Map<EmployeeImportColumn, number>();
  const errors: ImportError[] = [];
  names.forEach((raw, position) => {
    const name = raw.trim().toLowerCase();
    if (!isImportColumn(name)) {
      errors.push({ line: 1, column: raw, reason: `is not a known column (known: ${EMPLOYEE_IMPORT_COLUMNS.join(', ')})` });
    } else if (header.has(name)) {
      errors.push({ line: 1, column: name, reason: 'appears more than once in the header' });
    } else {
      header.set(name, position);
    }
  });
  for (const column of REQUIRED_IMPORT_COLUMNS) {
    if (!header.has(column)) errors.push({ line: 1, column, reason: 'is a required column and is missing from the header' });
  }
  return { header, errors };
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * An annual salary as a file states it, in major units with a decimal point ("42000.50"), as exact
 * integer minor units of the currency (4200050 pence). No sign, currency symbol, thousands separator
 * or exponent; no more decimal places than the currency has. Digits are checked before the project's
 * conversion runs, so a number too long for a double to hold exactly is refused, never rounded.
 */
export function salaryInMinorUnits(text: string, currency: string): { minorUnits: number } | { reason: string } {
  const match = DECIMAL.exec(text);
  if (!match) {
    return { reason: 'must be a decimal amount in major units such as 42000.50, without sign, currency symbol or thousands separators' };
  }
  const exponent = currencyExponent(currency);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) {
    return { reason: exponent === 0 ? `must be a whole number of ${currency}` : `must have at most ${exponent} decimal places for ${currency}` };
  }
  const minorDigits = `${match[1]}${fraction.padEnd(exponent, '0')}`.replace(/^0+/, '');
  if (minorDigits.length > String(MAX_EXACT_MINOR_UNITS).length) return { reason: 'is too large' };
  return { minorUnits: fromMajorUnits(Number(text), currency) };
}

const employeeRecordSchema = employeeRecordRequestSchema.shape.employee;

/**
 * A leaver's employment ended on a day, and an operator's record (a file's row, a create or update)
 * must say which: payroll and billers read the end date. A provider's push may still leave it out.
 */
export function leaverWithoutEndDate(record: { employment_status: string; end_date?: string | null | undefined }): boolean {
  return record.employment_status === 'leaver' && !record.end_date;
}

/**
 * One good row: the employee record the provider push would accept, with its currency settled and
 * its national registration number normalised. An optional field that is absent (or null) was not
 * given: an import keeps what is stored for it (decision 0015).
 */
export type ImportedEmployee = EmployeeRecord & {
  national_registration_number: string | null;
  currency: string;
};

/** The cells the directory checks read: a row's identifiers, as far as its cells are good. */
export interface MatchedRow {
  national_registration_number: string | null;
  date_of_birth: string | null;
  family_name: string;
  /** Cells that are bad (their errors are reported already): what depends on them is not judged. */
  unreadable?: ReadonlySet<IdentityColumn>;
}

type IdentityColumn = 'national_registration_number' | 'date_of_birth' | 'family_name';

/** What the cross-row checks (repeated keys) and the directory checks read of a bad row. */
export interface BadRowKeys extends MatchedRow {
  /** Null when the cell is bad or missing: the row then takes part in no check by reference. */
  payroll_reference: string | null;
}

export type RowValidation = { ok: true; employee: ImportedEmployee } | { ok: false; errors: ImportError[]; keys: BadRowKeys };

/** Columns from a closed list of values: read whatever their case, stored as the list spells them. */
const LOWER_CASE_COLUMNS = ['employment_status', 'contract_type'] as const;

/**
 * Whether one data row is a good employee record. Cells are trimmed; an empty cell is a field not
 * given, which an import leaves as it is stored (an import never clears anything; decision 0015).
 * The record must pass the provider push's own schema; a file's row must also use the payroll's
 * currency (the default when left out), give a National Insurance number HMRC could have issued,
 * and say when a leaver's employment ended. `employment_status`, `contract_type` and `currency` are
 * read whatever their case (`Active`, `FULL_TIME`, `gbp`) and stored as the lists spell them. Every
 * column is checked on its own and every fault of the row reported, each with its column; a bad row
 * still gives what its good cells say (keys), so that the checks across rows and against the
 * directory find its other faults in the same pass.
 */
export function validateImportRow(fields: readonly string[], header: ImportHeader, line: number, payrollCurrency: string): RowValidation {
  const errors: ImportError[] = [];
  const width = Math.max(...header.values()) + 1;
  if (fields.length !== width) {
    errors.push({ line, column: null, reason: `has ${fields.length} fields where the header has ${width}` });
    // The cells cannot be told apart: the row takes part in no other check.
    return {
      ok: false,
      errors,
      keys: {
        payroll_reference: null,
        national_registration_number: null,
        date_of_birth: null,
        family_name: '',
        unreadable: new Set(['national_registration_number', 'date_of_birth', 'family_name']),
      },
    };
  }
  const cells: Partial<Record<EmployeeImportColumn, string>> = {};
  for (const [column, position] of header) {
    const value = fields[position]!.trim();
    if (value !== '') cells[column] = value;
  }
  for (const column of LOWER_CASE_COLUMNS) cells[column] = cells[column]?.toLowerCase();
  if (cells.currency !== undefined) cells.currency = cells.currency.toUpperCase();

  const currency = cells.currency ?? payrollCurrency;
  if (currency !== payrollCurrency) {
    errors.push({ line, column: 'currency', reason: `must be the payroll currency ${payrollCurrency}` });
  }
  let annualisedSalary: number | undefined;
  if (cells.annualised_salary !== undefined && isSupportedCurrency(payrollCurrency)) {
    const salary = salaryInMinorUnits(cells.annualised_salary, payrollCurrency);
    if ('reason' in salary) errors.push({ line, column: 'annualised_salary', reason: salary.reason });
    else annualisedSalary = salary.minorUnits;
  }
  let nationalRegistrationNumber: string | null = null;
  if (cells.national_registration_number !== undefined) {
    const checked = checkNationalInsuranceNumber(cells.national_registration_number);
    if (checked.ok) nationalRegistrationNumber = checked.value;
    else errors.push({ line, column: 'national_registration_number', reason: checked.reason });
  }

  const { annualised_salary: _salaryText, currency: _currency, national_registration_number: _number, ...textFields } = cells;
  const parsed = employeeRecordSchema.safeParse({
    ...Object.fromEntries(Object.entries(textFields).filter(([, value]) => value !== undefined)),
    ...(annualisedSalary === undefined ? {} : { annualised_salary: annualisedSalary }),
  });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const column = typeof issue.path[0] === 'string' ? issue.path[0] : null;
      // A salary the conversion refused already has its reason; a missing cell is a required field.
      if (column === 'annualised_salary' && errors.some((e) => e.column === column)) continue;
      const reason = column !== null && cells[column as EmployeeImportColumn] === undefined ? 'is required' : issue.message;
      errors.push({ line, column, reason });
    }
  }
  if (leaverWithoutEndDate({ employment_status: cells.employment_status ?? '', end_date: cells.end_date })) {
    errors.push({ line, column: 'end_date', reason: 'is required for a leaver' });
  }
  if (!parsed.success || errors.length > 0) {
    const bad = new Set(errors.map((error) => error.column));
    const unreadable = new Set<IdentityColumn>();
    for (const column of ['national_registration_number', 'date_of_birth', 'family_name'] as const) {
      if (bad.has(column)) unreadable.add(column);
    }
    return {
      ok: false,
      errors,
      keys: {
        payroll_reference: cells.payroll_reference !== undefined && !bad.has('payroll_reference') ? cells.payroll_reference : null,
        national_registration_number: nationalRegistrationNumber,
        date_of_birth: unreadable.has('date_of_birth') ? null : (cells.date_of_birth ?? null),
        family_name: unreadable.has('family_name') ? '' : cells.family_name!,
        unreadable,
      },
    };
  }

  return { ok: true, employee: { ...parsed.data, national_registration_number: nationalRegistrationNumber, currency } };
}

/** What the directory knows under one row's identifiers, before the import changes anything. */
export interface ImportMatchCandidates {
  /** The employment that holds the row's payroll reference on this payroll: its employee, who they are, and whether another payroll employs them too. */
  byReference: (StoredIdentity & { employeeId: string; employedElsewhere: boolean }) | undefined;
  /** The provider's employee that holds the row's national registration number, with every family name known for them. */
  byNationalRegistrationNumber: (KnownPerson & { employeeId: string; payrollReferenceOnThisPayroll: string | null }) | undefined;
}

export type ImportMatch =
  | { kind: 'existing-employment'; employeeId: string }
  | { kind: 'second-employment'; employeeId: string }
  | { kind: 'new-employee' }
  | { kind: 'refused'; errors: Array<Omit<ImportError, 'line'>> }
  /** A bad cell the decision depends on: nothing more to say of this row. */
  | { kind: 'undecided' };

const IDENTIFIER_NAMES: Record<keyof StoredIdentity, string> = {
  national_registration_number: 'national registration number',
  date_of_birth: 'date of birth',
};

/**
 * Which employee a row is about. The payroll reference is the key within the payroll: a row whose
 * reference is known updates that employment; the national registration number and date of birth
 * it gives must then agree with its person's, or be new to them (identityUpdate: a number or date
 * another payroll of theirs relies on is not changed by one file). A new reference is a new
 * employment; its employee is the provider's employee with the same national registration number
 * when that person is the same one by the availability check's rule (date of birth, and a family
 * name matching any the directory knows for them: someone's second job, however that payroll spells
 * the name), else a new employee. A national registration number another person of the provider
 * holds is refused, as the provider's push refuses it, and so is a second employment on one
 * payroll. A cell in `row.unreadable` is bad already: what depends on it is not judged.
 */
export function matchImportedEmployee(row: MatchedRow, candidates: ImportMatchCandidates): ImportMatch {
  const unreadable = row.unreadable ?? new Set<IdentityColumn>();
  const number = unreadable.has('national_registration_number') ? null : row.national_registration_number;
  const holder = number !== null ? candidates.byNationalRegistrationNumber : undefined;
  const byReference = candidates.byReference;
  if (byReference) {
    const errors: Array<Omit<ImportError, 'line'>> = [];
    const numberHeldByAnother = holder !== undefined && holder.employeeId !== byReference.employeeId;
    if (numberHeldByAnother) errors.push({ column: 'national_registration_number', reason: 'belongs to another employee of this payroll provider' });
    const update = identityUpdate(
      byReference,
      { national_registration_number: numberHeldByAnother ? null : number, date_of_birth: unreadable.has('date_of_birth') ? null : row.date_of_birth },
      byReference.employedElsewhere,
    );
    for (const column of update.conflicts) {
      errors.push({
        column,
        reason:
          `differs from the ${IDENTIFIER_NAMES[column]} recorded for this employee, whom another payroll employs too: ` +
          'an import does not change who someone is when payrolls disagree; if this file is right, correct it with deductions employees update',
      });
    }
    return errors.length > 0 ? { kind: 'refused', errors } : { kind: 'existing-employment', employeeId: byReference.employeeId };
  }
  if (unreadable.has('national_registration_number')) return { kind: 'undecided' };
  if (!holder) return { kind: 'new-employee' };
  if (holder.payrollReferenceOnThisPayroll !== null) {
    return {
      kind: 'refused',
      errors: [
        {
          column: 'payroll_reference',
          reason: `the employee with this national registration number is already on this payroll as ${holder.payrollReferenceOnThisPayroll}`,
        },
      ],
    };
  }
  if (unreadable.has('date_of_birth') || unreadable.has('family_name')) return { kind: 'undecided' };
  const identity = personIdentity({ national_registration_number: number ?? '', date_of_birth: row.date_of_birth ?? '', family_name: row.family_name });
  if (!matchesKnownPerson(holder, identity)) {
    return {
      kind: 'refused',
      errors: [{ column: 'national_registration_number', reason: 'belongs to another employee of this payroll provider (date of birth or family name differ)' }],
    };
  }
  return { kind: 'second-employment', employeeId: holder.employeeId };
}

/** Errors kept for the report: the first `limit` in file order, and how many there were in all. */
export class CappedErrorList {
  readonly kept: ImportError[] = [];
  count = 0;

  constructor(readonly limit: number) {}

  add(error: ImportError): void {
    this.count++;
    if (this.kept.length < this.limit) this.kept.push(error);
  }

  get truncated(): boolean {
    return this.count > this.kept.length;
  }

  /** In line order, whatever order the checks found them in. */
  sorted(): ImportError[] {
    return [...this.kept].sort((a, b) => a.line - b.line);
  }
}
