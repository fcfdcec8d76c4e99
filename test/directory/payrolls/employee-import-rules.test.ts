import { describe, expect, it } from 'vitest';
import {
  CappedErrorList,
  EMPLOYEE_IMPORT_COLUMNS,
  leaverWithoutEndDate,
  matchImportedEmployee,
  readImportHeader,
  salaryInMinorUnits,
  validateImportRow,
  type ImportMatchCandidates,
  type MatchedRow,
} from '../../../src/directory/payrolls/employee-import-rules.ts';

describe('salaryInMinorUnits', () => {
  it.each([
    ['42000.50', 'GBP', 4_200_050],
    ['42000.5', 'GBP', 4_200_050],
    ['42000', 'GBP', 4_200_000],
    ['42000.500', 'GBP', 4_200_050],
    ['0', 'GBP', 0],
    ['0.01', 'GBP', 1],
    ['007.10', 'GBP', 710],
    ['1500000', 'JPY', 1_500_000],
    ['12.345', 'BHD', 12_345],
    ['9999999999999.99', 'GBP', 999_999_999_999_999],
  ])('%s %s is %i minor units', (text, currency, minorUnits) => {
    expect(salaryInMinorUnits(text, currency)).toEqual({ minorUnits });
  });

  it.each([
    ['12.345', 'GBP', 'must have at most 2 decimal places for GBP'],
    ['1500.5', 'JPY', 'must be a whole number of JPY'],
    ['10000000000000.00', 'GBP', 'is too large'],
    ['99999999999999999999', 'GBP', 'is too large'],
    ['-100', 'GBP', expect.stringContaining('without sign')],
    ['£100', 'GBP', expect.stringContaining('currency symbol')],
    ['42,000', 'GBP', expect.stringContaining('thousands separators')],
    ['1e5', 'GBP', expect.stringContaining('major units')],
    ['.5', 'GBP', expect.stringContaining('major units')],
    ['5.', 'GBP', expect.stringContaining('major units')],
    [' 5', 'GBP', expect.stringContaining('major units')],
  ])('%s %s is refused: %s', (text, currency, reason) => {
    expect(salaryInMinorUnits(text, currency)).toEqual({ reason });
  });
});

describe('readImportHeader', () => {
  it('maps every documented column to its position, in any order, whatever the case and surrounding spaces', () => {
    const { header, errors } = readImportHeader([' Employment_Status', ...EMPLOYEE_IMPORT_COLUMNS.filter((c) => c !== 'employment_status')]);
    expect(errors).toEqual([]);
    expect(header.get('employment_status')).toBe(0);
    expect(header.get('payroll_reference')).toBe(1);
    expect(header.size).toBe(EMPLOYEE_IMPORT_COLUMNS.length);
  });

  it.each([
    [['payroll_reference', 'given_name', 'family_name'], [{ line: 1, column: 'employment_status', reason: 'is a required column and is missing from the header' }]],
    [
      ['payroll_reference', 'given_name', 'family_name', 'employment_status', 'salary'],
      [{ line: 1, column: 'salary', reason: expect.stringContaining('is not a known column') }],
    ],
    [
      ['payroll_reference', 'given_name', 'family_name', 'employment_status', 'given_name'],
      [{ line: 1, column: 'given_name', reason: 'appears more than once in the header' }],
    ],
    [['payroll_reference', 'given_name', 'family_name', 'employment_status'], []],
  ])('%j: %j', (names, errors) => {
    expect(readImportHeader(names).errors).toEqual(errors);
  });
});

describe('validateImportRow', () => {
  const { header } = readImportHeader([...EMPLOYEE_IMPORT_COLUMNS]);
  const row = (overrides: Partial<Record<(typeof EMPLOYEE_IMPORT_COLUMNS)[number], string>> = {}) => {
    const values: Record<string, string> = {
      payroll_reference: 'WN-1',
      given_name: 'Priya',
      family_name: 'Shah',
      national_registration_number: 'ab 12 34 56 c',
      date_of_birth: '1990-05-17',
      email_address: 'priya@example.com',
      phone_number: '+447700900001',
      postal_code: 'LS1 4AP',
      start_date: '2023-09-01',
      end_date: '',
      employment_status: 'active',
      contract_type: 'full_time',
      annualised_salary: '42000.50',
      currency: 'GBP',
      ...overrides,
    };
    return EMPLOYEE_IMPORT_COLUMNS.map((column) => values[column]!);
  };

  it('gives the employee record of a good row: number normalised, salary in minor units, empty cells left out', () => {
    const result = validateImportRow(row({ email_address: '', currency: '' }), header, 7, 'GBP');
    expect(result).toEqual({
      ok: true,
      employee: {
        payroll_reference: 'WN-1',
        given_name: 'Priya',
        family_name: 'Shah',
        national_registration_number: 'AB123456C',
        date_of_birth: '1990-05-17',
        phone_number: '+447700900001',
        postal_code: 'LS1 4AP',
        start_date: '2023-09-01',
        employment_status: 'active',
        contract_type: 'full_time',
        annualised_salary: 4_200_050,
        currency: 'GBP',
      },
    });
  });

  it.each([
    [{ payroll_reference: '' }, [['payroll_reference', 'is required']]],
    [{ given_name: '  ' }, [['given_name', 'is required']]],
    [{ date_of_birth: '1990-02-30' }, [['date_of_birth', 'must be a date as YYYY-MM-DD']]],
    [{ date_of_birth: '17/05/1990' }, [['date_of_birth', 'must be a date as YYYY-MM-DD']]],
    [{ start_date: '2024-01-01', end_date: '2023-12-31' }, [['end_date', 'must not be before start_date']]],
    [{ employment_status: 'retired' }, [['employment_status', expect.stringContaining('Invalid option')]]],
    [{ employment_status: '' }, [['employment_status', 'is required']]],
    [{ employment_status: 'leaver' }, [['end_date', 'is required for a leaver']]],
    [{ contract_type: 'casual' }, [['contract_type', expect.stringContaining('Invalid option')]]],
    [{ email_address: 'priya' }, [['email_address', expect.any(String)]]],
    [{ annualised_salary: '42000.505' }, [['annualised_salary', 'must have at most 2 decimal places for GBP']]],
    [{ currency: 'EUR' }, [['currency', 'must be the payroll currency GBP']]],
    [{ national_registration_number: 'QQ1234' }, [['national_registration_number', expect.stringContaining('has 6 characters (spaces aside) where one has 9')]]],
    [{ national_registration_number: 'QQ 12 34 56 C' }, [['national_registration_number', expect.stringContaining('the prefix QQ is never issued')]]],
    [{ national_registration_number: 'AB123456E' }, [['national_registration_number', expect.stringContaining('suffix letter A, B, C or D')]]],
    [
      { date_of_birth: 'soon', employment_status: 'leaver', annualised_salary: 'lots' },
      [
        ['annualised_salary', expect.stringContaining('major units')],
        ['date_of_birth', 'must be a date as YYYY-MM-DD'],
        ['end_date', 'is required for a leaver'],
      ],
    ],
  ])('%j is refused: %j', (overrides, expected) => {
    const result = validateImportRow(row(overrides), header, 9, 'GBP');
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    expect(errors.map((e) => [e.column, e.reason]).sort()).toEqual([...expected].sort());
    expect(errors.every((e) => e.line === 9)).toBe(true);
  });

  it('refuses a row with more or fewer fields than the header as a whole, and gives no keys for it', () => {
    const result = validateImportRow(['WN-1', 'Priya'], header, 3, 'GBP');
    expect(result).toMatchObject({
      ok: false,
      errors: [{ line: 3, column: null, reason: `has 2 fields where the header has ${EMPLOYEE_IMPORT_COLUMNS.length}` }],
      keys: { payroll_reference: null, national_registration_number: null },
    });
  });

  it('reads employment_status, contract_type and currency whatever their case and spaces, and stores them as the lists spell them', () => {
    const result = validateImportRow(row({ employment_status: ' Active ', contract_type: 'FULL_TIME', currency: 'gbp' }), header, 4, 'GBP');
    expect(result).toMatchObject({ ok: true, employee: { employment_status: 'active', contract_type: 'full_time', currency: 'GBP' } });
    expect(validateImportRow(row({ employment_status: 'LEAVER', end_date: '2026-01-31', contract_type: 'Zero_Hours' }), header, 4, 'GBP')).toMatchObject({
      ok: true,
      employee: { employment_status: 'leaver', contract_type: 'zero_hours' },
    });
    // Case is forgiven, spelling is not.
    expect(validateImportRow(row({ contract_type: 'Full Time' }), header, 4, 'GBP')).toMatchObject({ ok: false, errors: [{ column: 'contract_type' }] });
  });

  it('keeps names exactly as given (spaces around them aside)', () => {
    expect(validateImportRow(row({ given_name: ' Siobhán ', family_name: "O'Donnell" }), header, 2, 'GBP')).toMatchObject({
      ok: true,
      employee: { given_name: 'Siobhán', family_name: "O'Donnell" },
    });
  });

  it('checks every column on its own and reports every fault of the row at once, with the keys its good cells give', () => {
    const result = validateImportRow(
      row({
        national_registration_number: 'QQ1234',
        date_of_birth: '1990-02-30',
        email_address: 'priya',
        employment_status: 'Retired',
        annualised_salary: '£1',
        currency: 'EUR',
      }),
      header,
      5,
      'GBP',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.column).sort()).toEqual(
      ['annualised_salary', 'currency', 'date_of_birth', 'email_address', 'employment_status', 'national_registration_number'].sort(),
    );
    expect(result.keys).toEqual({
      payroll_reference: 'WN-1',
      national_registration_number: null,
      date_of_birth: null,
      family_name: 'Shah',
      unreadable: new Set(['national_registration_number', 'date_of_birth']),
    });
    const goodKeys = validateImportRow(row({ email_address: 'priya' }), header, 5, 'GBP');
    expect(goodKeys).toMatchObject({
      ok: false,
      keys: { payroll_reference: 'WN-1', national_registration_number: 'AB123456C', date_of_birth: '1990-05-17', family_name: 'Shah', unreadable: new Set() },
    });
  });

  it('accepts a leaver with an end date, and a file without the optional columns', () => {
    expect(validateImportRow(row({ employment_status: 'leaver', end_date: '2026-01-31' }), header, 2, 'GBP').ok).toBe(true);
    const { header: minimal } = readImportHeader(['payroll_reference', 'given_name', 'family_name', 'employment_status']);
    expect(validateImportRow(['R', 'A', 'B', 'unknown'], minimal, 2, 'EUR')).toEqual({
      ok: true,
      employee: { payroll_reference: 'R', given_name: 'A', family_name: 'B', employment_status: 'unknown', national_registration_number: null, currency: 'EUR' },
    });
  });
});

describe('leaverWithoutEndDate', () => {
  it.each([
    ['leaver', undefined, true],
    ['leaver', null, true],
    ['leaver', '', true],
    ['leaver', '2026-01-31', false],
    ['active', undefined, false],
    ['unknown', null, false],
  ])('%s with end date %j: %s', (employment_status, end_date, expected) => {
    expect(leaverWithoutEndDate({ employment_status, end_date })).toBe(expected);
  });
});

describe('matchImportedEmployee', () => {
  const employee: MatchedRow = {
    family_name: "O'Brien-Núñez",
    national_registration_number: 'AB123456C',
    date_of_birth: '1990-05-17',
  };
  const holder = (overrides: Partial<NonNullable<ImportMatchCandidates['byNationalRegistrationNumber']>> = {}) => ({
    employeeId: 'held',
    date_of_birth: '1990-05-17',
    family_names: ['obrien nunez'],
    payrollReferenceOnThisPayroll: null,
    ...overrides,
  });
  const employment = (overrides: Partial<NonNullable<ImportMatchCandidates['byReference']>> = {}) => ({
    employeeId: 'e1',
    national_registration_number: 'AB123456C',
    date_of_birth: '1990-05-17',
    employedElsewhere: false,
    ...overrides,
  });
  const conflict = (column: string) => ({ column, reason: expect.stringContaining('whom another payroll employs too') });

  it.each<[string, Partial<MatchedRow>, ImportMatchCandidates, ReturnType<typeof matchImportedEmployee>]>([
    [
      'a known reference updates its employment',
      {},
      { byReference: employment(), byNationalRegistrationNumber: undefined },
      { kind: 'existing-employment', employeeId: 'e1' },
    ],
    [
      "a known reference with its own employee's number",
      {},
      { byReference: employment({ employeeId: 'held' }), byNationalRegistrationNumber: holder({ payrollReferenceOnThisPayroll: 'WN-1' }) },
      { kind: 'existing-employment', employeeId: 'held' },
    ],
    [
      "a known reference with another employee's number",
      {},
      { byReference: employment(), byNationalRegistrationNumber: holder() },
      { kind: 'refused', errors: [{ column: 'national_registration_number', reason: 'belongs to another employee of this payroll provider' }] },
    ],
    [
      'a known reference, identifiers left out: kept, nothing refused',
      { national_registration_number: null, date_of_birth: null },
      { byReference: employment({ employedElsewhere: true }), byNationalRegistrationNumber: undefined },
      { kind: 'existing-employment', employeeId: 'e1' },
    ],
    [
      'a known reference, a corrected birth date, nobody else employs them',
      { date_of_birth: '1990-05-18' },
      { byReference: employment(), byNationalRegistrationNumber: undefined },
      { kind: 'existing-employment', employeeId: 'e1' },
    ],
    [
      'a known reference, a birth date the person lacked, another payroll employs them',
      {},
      { byReference: employment({ date_of_birth: null, employedElsewhere: true }), byNationalRegistrationNumber: undefined },
      { kind: 'existing-employment', employeeId: 'e1' },
    ],
    [
      'a known reference, another birth date and number while another payroll employs them',
      { date_of_birth: '1990-05-18', national_registration_number: 'CE654321A' },
      { byReference: employment({ employedElsewhere: true }), byNationalRegistrationNumber: undefined },
      { kind: 'refused', errors: [conflict('national_registration_number'), conflict('date_of_birth')] },
    ],
    [
      "a known reference, another employee's number and another birth date while employed elsewhere: both said",
      { date_of_birth: '1990-05-18' },
      { byReference: employment({ employedElsewhere: true }), byNationalRegistrationNumber: holder() },
      {
        kind: 'refused',
        errors: [{ column: 'national_registration_number', reason: 'belongs to another employee of this payroll provider' }, conflict('date_of_birth')],
      },
    ],
    [
      'a known reference, a bad birth-date cell: not judged',
      { date_of_birth: null, unreadable: new Set(['date_of_birth'] as const) },
      { byReference: employment({ employedElsewhere: true }), byNationalRegistrationNumber: undefined },
      { kind: 'existing-employment', employeeId: 'e1' },
    ],
    ['a new reference and an unknown number', {}, { byReference: undefined, byNationalRegistrationNumber: undefined }, { kind: 'new-employee' }],
    ['a new reference without a number', { national_registration_number: null }, { byReference: undefined, byNationalRegistrationNumber: holder() }, { kind: 'new-employee' }],
    [
      'a new reference, a bad number cell: undecided',
      { national_registration_number: null, unreadable: new Set(['national_registration_number'] as const) },
      { byReference: undefined, byNationalRegistrationNumber: undefined },
      { kind: 'undecided' },
    ],
    [
      "a new reference, the number of the same person elsewhere (the name spelt payroll's way)",
      {},
      { byReference: undefined, byNationalRegistrationNumber: holder() },
      { kind: 'second-employment', employeeId: 'held' },
    ],
    [
      'a new reference, the number of the same person whose payrolls spell the name two ways: either matches',
      { family_name: 'ODONNELL' },
      { byReference: undefined, byNationalRegistrationNumber: holder({ family_names: ['Murphy', "O'Donnell"] }) },
      { kind: 'second-employment', employeeId: 'held' },
    ],
    [
      'a new reference, the number of someone born on another day',
      {},
      { byReference: undefined, byNationalRegistrationNumber: holder({ date_of_birth: '1991-05-17' }) },
      { kind: 'refused', errors: [{ column: 'national_registration_number', reason: expect.stringContaining('belongs to another employee') }] },
    ],
    [
      'a new reference, the number of someone with another family name',
      {},
      { byReference: undefined, byNationalRegistrationNumber: holder({ family_names: ['Murphy'] }) },
      { kind: 'refused', errors: [{ column: 'national_registration_number', reason: expect.stringContaining('belongs to another employee') }] },
    ],
    [
      'a new reference without a birth date, the number of someone known',
      { date_of_birth: null },
      { byReference: undefined, byNationalRegistrationNumber: holder() },
      { kind: 'refused', errors: [{ column: 'national_registration_number', reason: expect.stringContaining('belongs to another employee') }] },
    ],
    [
      'a new reference, a bad birth-date cell, the number of someone known: undecided',
      { date_of_birth: null, unreadable: new Set(['date_of_birth'] as const) },
      { byReference: undefined, byNationalRegistrationNumber: holder() },
      { kind: 'undecided' },
    ],
    [
      'a new reference, the number of someone already on this payroll',
      {},
      { byReference: undefined, byNationalRegistrationNumber: holder({ payrollReferenceOnThisPayroll: 'WN-9' }) },
      { kind: 'refused', errors: [{ column: 'payroll_reference', reason: expect.stringContaining('already on this payroll as WN-9') }] },
    ],
  ])('%s', (_case, overrides, candidates, expected) => {
    expect(matchImportedEmployee({ ...employee, ...overrides }, candidates)).toEqual(expected);
  });
});

describe('CappedErrorList', () => {
  it('keeps the first errors up to the limit, counts all, and lists them in line order', () => {
    const list = new CappedErrorList(2);
    list.add({ line: 9, column: 'a', reason: 'x' });
    list.add({ line: 4, column: 'b', reason: 'y' });
    expect(list.truncated).toBe(false);
    list.add({ line: 2, column: 'c', reason: 'z' });
    expect(list.count).toBe(3);
    expect(list.truncated).toBe(true);
    expect(list.sorted().map((e) => e.line)).toEqual([4, 9]);
  });
});
