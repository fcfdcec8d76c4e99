import { z } from 'zod';
import { currencyExponent, isSupportedCurrency } from '../../platform/money/currency.ts';
import { fromMajorUnits, MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { employeeRecordRequestSchema, type EmployeeRecord } from './employee-resource.ts';
import { matchesPerson, normaliseNationalRegistrationNumber, personIdentity, type DirectoryPerson } from './person-identity.ts';

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

/** One good row: the employee record the provider push would accept, with its currency settled. */
export type ImportedEmployee = EmployeeRecord & {
  national_registration_number: string | null;
  currency: string;
};

export type RowValidation = { ok: true; employee: ImportedEmployee } | { ok: false; errors: ImportError[] };

/**
 * Whether one data row is a good employee record. An empty cell is a field left out (an optional
 * field is then cleared, as a provider's PUT clears it). The record must pass the provider push's
 * own schema; a file's row must also use the payroll's currency (the default when left out), and a
 * leaver must say when the employment ended. Every fault of the row is reported, each with its column.
 */
export function validateImportRow(fields: readonly string[], header: ImportHeader, line: number, payrollCurrency: string): RowValidation {
  const errors: ImportError[] = [];
  const width = Math.max(...header.values()) + 1;
  if (fields.length !== width) {
    errors.push({ line, column: null, reason: `has ${fields.length} fields where the header has ${width}` });
    return { ok: false, errors };
  }
  const cells: Partial<Record<EmployeeImportColumn, string>> = {};
  for (const [column, position] of header) {
    const value = fields[position]!.trim();
    if (value !== '') cells[column] = value;
  }

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

  const { annualised_salary: _salaryText, currency: _currency, ...textFields } = cells;
  const parsed = employeeRecordSchema.safeParse({
    ...textFields,
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
  if (!parsed.success || errors.length > 0) return { ok: false, errors };

  const record = parsed.data;
  return {
    ok: true,
    employee: {
      ...record,
      national_registration_number: record.national_registration_number ? normaliseNationalRegistrationNumber(record.national_registration_number) : null,
      currency,
    },
  };
}

/** What the directory knows under one row's identifiers, before the import changes anything. */
export interface ImportMatchCandidates {
  /** The employee that holds the row's payroll reference on this payroll. */
  byReference: { employeeId: string } | undefined;
  /** The provider's employee that holds the row's national registration number. */
  byNationalRegistrationNumber: (DirectoryPerson & { employeeId: string; payrollReferenceOnThisPayroll: string | null }) | undefined;
}

export type ImportMatch =
  | { kind: 'existing-employment'; employeeId: string }
  | { kind: 'second-employment'; employeeId: string }
  | { kind: 'new-employee' }
  | { kind: 'refused'; error: Omit<ImportError, 'line'> };

/**
 * Which employee a row is about. The payroll reference is the key within the payroll: a row whose
 * reference is known updates that employment. A new reference is a new employment; its employee is
 * the provider's employee with the same national registration number when that person is the same
 * one by the availability check's rule (date of birth and family name match too: someone's second
 * job), else a new employee. A national registration number another person of the provider holds
 * is refused, as the provider's push refuses it, and so is a second employment on one payroll.
 */
export function matchImportedEmployee(employee: ImportedEmployee, candidates: ImportMatchCandidates): ImportMatch {
  const holder = employee.national_registration_number ? candidates.byNationalRegistrationNumber : undefined;
  if (candidates.byReference) {
    if (holder && holder.employeeId !== candidates.byReference.employeeId) {
      return { kind: 'refused', error: { column: 'national_registration_number', reason: 'belongs to another employee of this payroll provider' } };
    }
    return { kind: 'existing-employment', employeeId: candidates.byReference.employeeId };
  }
  if (!holder) return { kind: 'new-employee' };
  if (holder.payrollReferenceOnThisPayroll !== null) {
    return {
      kind: 'refused',
      error: {
        column: 'payroll_reference',
        reason: `the employee with this national registration number is already on this payroll as ${holder.payrollReferenceOnThisPayroll}`,
      },
    };
  }
  if (
    !matchesPerson(
      holder,
      personIdentity({
        national_registration_number: employee.national_registration_number ?? '',
        date_of_birth: employee.date_of_birth ?? '',
        family_name: employee.family_name,
      }),
    )
  ) {
    return {
      kind: 'refused',
      error: { column: 'national_registration_number', reason: 'belongs to another employee of this payroll provider (date of birth or family name differ)' },
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
