import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { importEmployees, type EmployeeImportRequest } from '../../../src/collections/employee-changes/employee-import-service.ts';
import { showEmployeeOnPayroll, updateEmployeeOnPayroll } from '../../../src/collections/employee-changes/employee-admin-service.ts';
import { lightAvailabilityCheck } from '../../../src/collections/availability/availability-service.ts';
import { createEmployer, createPayroll, createPayrollProvider, futureMonthlyPayDates } from '../../support/factories.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

// Issue 33, item 3: two payrolls' files about the same person (one individual, matched by national
// registration number, date of birth and family name) must not undo each other (decision 0015).

let database: TestDatabase;
let db: TestDatabase['db'];

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
});
afterAll(async () => database?.drop());

const FULL_HEADER =
  'payroll_reference,given_name,family_name,national_registration_number,date_of_birth,email_address,phone_number,postal_code,start_date,end_date,employment_status,contract_type,annualised_salary,currency';

const fileOf = (header: string, ...lines: string[]) => `${[header, ...lines].join('\n')}\n`;

function run(payrollId: string, file: string, options: Partial<Omit<EmployeeImportRequest, 'payrollId' | 'source'>> = {}) {
  return db
    .transaction()
    .execute((trx) => importEmployees(trx, { payrollId, source: Readable.from([Buffer.from(file)]), dryRun: false, partial: false, actor: cliActor('importer'), ...options }));
}

let serial = 0;
/** A National Insurance number HMRC could issue, new to this file's database. */
const freshNumber = () => `CE${String(++serial).padStart(6, '0')}A`;

/** One provider with two employers, each with a payroll: payroll A and payroll B. */
async function twoPayrolls() {
  const provider = await createPayrollProvider(db);
  const employerA = await createEmployer(db, provider.id);
  const employerB = await createEmployer(db, provider.id);
  const payrollA = await createPayroll(db, { providerId: provider.id, employerId: employerA.id, payDates: futureMonthlyPayDates() });
  const payrollB = await createPayroll(db, { providerId: provider.id, employerId: employerB.id, payDates: futureMonthlyPayDates() });
  return { provider, payrollA, payrollB };
}

const employeesOfProvider = (providerId: string) => db.selectFrom('employees').selectAll().where('payroll_provider_id', '=', providerId).execute();

const employmentOn = (payrollId: string) => db.selectFrom('employments').selectAll().where('payroll_id', '=', payrollId).executeTakeFirstOrThrow();

describe('one employer import never overwrites another employer', () => {
  /** Payroll A's file: with e-mail and phone, the name with its apostrophe. */
  const fileA = (number: string) =>
    fileOf(FULL_HEADER, `A-7,Siobhan,O'Donnell,${number},1985-06-01,siobhan@a.example,+447700900111,BT1 1AA,2020-01-06,,active,full_time,30000,GBP`);
  /** Payroll B's file: the same person (number spaced and in lower case), no contact details, the name in capitals without the apostrophe. */
  const fileB = (number: string) =>
    fileOf(FULL_HEADER, `B-3,SIOBHAN,ODONNELL,${number.toLowerCase().replace(/(..)(..)(..)(..)/, '$1 $2 $3 $4 ')},1985-06-01,,,,2022-02-01,,active,part_time,12000,`);

  it("A then B then A again: B's import keeps A's e-mail, phone and O'Donnell, and A's unchanged file is 0 updated", async () => {
    const { provider, payrollA, payrollB } = await twoPayrolls();
    const number = freshNumber();

    expect(await run(payrollA.id, fileA(number))).toMatchObject({ created: 1, updated: 0, rejected: 0 });
    const afterA = await employmentOn(payrollA.id);

    const b = await run(payrollB.id, fileB(number));
    expect(b).toMatchObject({ created: 1, updated: 0, rejected: 0 });

    // One individual: B's employment belongs to the person A's file created.
    const people = await employeesOfProvider(provider.id);
    expect(people).toHaveLength(1);
    expect(people[0]).toMatchObject({ national_registration_number: number, date_of_birth: '1985-06-01' });
    expect((await employmentOn(payrollB.id)).employee_id).toBe(people[0]!.id);

    // A's employment as A's file left it, B's as B's file gives it, each name exactly as given.
    expect(await employmentOn(payrollA.id)).toEqual(afterA);
    expect(await showEmployeeOnPayroll(db, payrollA.id, people[0]!.id)).toMatchObject({
      given_name: 'Siobhan',
      family_name: "O'Donnell",
      email_address: 'siobhan@a.example',
      phone_number: '+447700900111',
      postal_code: 'BT1 1AA',
      national_registration_number: number,
    });
    expect(await showEmployeeOnPayroll(db, payrollB.id, people[0]!.id)).toMatchObject({
      given_name: 'SIOBHAN',
      family_name: 'ODONNELL',
      email_address: null,
      phone_number: null,
      national_registration_number: number,
    });

    const againA = await run(payrollA.id, fileA(number));
    expect(againA).toMatchObject({ created: 0, updated: 0, unchanged: 1, import_id: null });
    expect(await employmentOn(payrollA.id)).toEqual(afterA);
    const againB = await run(payrollB.id, fileB(number));
    expect(againB).toMatchObject({ created: 0, updated: 0, unchanged: 1, import_id: null });
  });

  it('B then A then B again: the same, in the other order', async () => {
    const { provider, payrollA, payrollB } = await twoPayrolls();
    const number = freshNumber();

    expect(await run(payrollB.id, fileB(number))).toMatchObject({ created: 1 });
    const afterB = await employmentOn(payrollB.id);
    expect(await run(payrollA.id, fileA(number))).toMatchObject({ created: 1, rejected: 0 });
    expect(await employeesOfProvider(provider.id)).toHaveLength(1);
    expect(await employmentOn(payrollB.id)).toEqual(afterB);
    expect(await employmentOn(payrollA.id)).toMatchObject({ family_name: "O'Donnell", email_address: 'siobhan@a.example', phone_number: '+447700900111' });

    expect(await run(payrollB.id, fileB(number))).toMatchObject({ updated: 0, unchanged: 1 });
    expect(await run(payrollA.id, fileA(number))).toMatchObject({ updated: 0, unchanged: 1 });
  });

  it("still matches O'Donnell, ODONNELL and o donnell as one person: a third payroll's file, availability checks", async () => {
    const { provider, payrollA, payrollB } = await twoPayrolls();
    const employerC = await createEmployer(db, provider.id);
    const payrollC = await createPayroll(db, { providerId: provider.id, employerId: employerC.id, payDates: futureMonthlyPayDates() });
    const number = freshNumber();
    await run(payrollA.id, fileA(number));
    await run(payrollB.id, fileB(number));

    const c = await run(payrollC.id, fileOf(FULL_HEADER, `C-1,Siobhan,o donnell,${number},1985-06-01,,,,,,active,,,`));
    expect(c).toMatchObject({ created: 1, rejected: 0 });
    const [person] = await employeesOfProvider(provider.id);
    expect((await employmentOn(payrollC.id)).employee_id).toBe(person!.id);
    expect(await employeesOfProvider(provider.id)).toHaveLength(1);

    // No provider is asked: the answer comes from the directory alone.
    const deps = { adapterFor: () => null, timeZone: 'Europe/London', log: { warn: () => undefined } };
    for (const family_name of ["O'Donnell", 'ODONNELL', 'o donnell', 'O’DONNELL']) {
      const answer = await lightAvailabilityCheck(db, { national_registration_number: number, date_of_birth: '1985-06-01', family_name }, deps);
      expect(answer, family_name).toEqual({ availability_check: { availability_status: 'confirmed', employment_count: 3 } });
    }
    const stranger = await lightAvailabilityCheck(db, { national_registration_number: number, date_of_birth: '1985-06-01', family_name: 'Murphy' }, deps);
    expect(stranger).toEqual({ availability_check: { availability_status: 'not_found', employment_count: 0 } });
  });

  it("refuses a file that would change who someone is while another payroll employs them; an operator's correction settles it", async () => {
    const { payrollA, payrollB } = await twoPayrolls();
    const number = freshNumber();
    await run(payrollA.id, fileA(number));
    await run(payrollB.id, fileB(number));
    const before = await db.selectFrom('employees').selectAll().where('national_registration_number', '=', number).executeTakeFirstOrThrow();

    const otherBirthDate = fileOf(FULL_HEADER, `B-3,SIOBHAN,ODONNELL,${number},1985-06-02,,,,2022-02-01,,active,part_time,12000,`);
    const refused = await run(payrollB.id, otherBirthDate, { dryRun: true });
    expect(refused).toMatchObject({ rejected: 1, updated: 0 });
    expect(refused.errors).toEqual([{ line: 2, column: 'date_of_birth', reason: expect.stringContaining('whom another payroll employs too') }]);
    expect(await db.selectFrom('employees').selectAll().where('id', '=', before.id).executeTakeFirstOrThrow()).toEqual(before);

    // The operator decides which payroll is right, for every payroll; then A's file is the odd one out.
    await db
      .transaction()
      .execute((trx) => updateEmployeeOnPayroll(trx, payrollB.id, before.id, { date_of_birth: '1985-06-02' }, { actor: cliActor('ops'), reason: 'birth certificate seen' }));
    expect(await run(payrollB.id, otherBirthDate)).toMatchObject({ updated: 0, unchanged: 1 });
    expect((await run(payrollA.id, fileA(number), { dryRun: true })).errors).toEqual([{ line: 2, column: 'date_of_birth', reason: expect.any(String) }]);
  });
});

describe('an import never erases what it does not carry', () => {
  it('keeps what a column left out of the file, or an empty cell, does not say', async () => {
    const { payrollA } = await twoPayrolls();
    const number = freshNumber();
    await run(payrollA.id, fileOf(FULL_HEADER, `N-1,Priya,Shah,${number},1990-05-17,priya@example.com,+447700900001,LS1 4AP,2023-09-01,,active,full_time,42000.50,GBP`));
    const stored = await employmentOn(payrollA.id);

    // No e-mail, phone, postal code or identifier columns at all: nothing of theirs is touched.
    const narrow = await run(payrollA.id, fileOf('payroll_reference,given_name,family_name,employment_status', 'N-1,Priya,Shah,active'));
    expect(narrow).toMatchObject({ updated: 0, unchanged: 1 });
    // Every optional cell empty: the same.
    const empty = await run(payrollA.id, fileOf(FULL_HEADER, 'N-1,Priya,Shah,,,,,,,,active,,,'));
    expect(empty).toMatchObject({ updated: 0, unchanged: 1 });
    expect(await employmentOn(payrollA.id)).toEqual(stored);
    expect(await db.selectFrom('employees').select(['national_registration_number', 'date_of_birth']).where('id', '=', stored.employee_id).executeTakeFirstOrThrow()).toEqual({
      national_registration_number: number,
      date_of_birth: '1990-05-17',
    });

    // What a row does give still changes: a new phone number, and the name as this payroll now spells it.
    const changed = await run(payrollA.id, fileOf('payroll_reference,given_name,family_name,phone_number,employment_status', 'N-1,Priya,Shah-Patel,+447700900002,active'));
    expect(changed).toMatchObject({ updated: 1 });
    expect(await employmentOn(payrollA.id)).toMatchObject({
      family_name: 'Shah-Patel',
      phone_number: '+447700900002',
      email_address: 'priya@example.com',
      postal_code: 'LS1 4AP',
      contract_type: 'full_time',
      annualised_salary: 4_200_050,
      start_date: '2023-09-01',
    });
  });

  it('stores enumerated values whatever their case as the lists spell them, so a file in other capitals changes nothing', async () => {
    const { payrollA } = await twoPayrolls();
    const first = await run(
      payrollA.id,
      fileOf(FULL_HEADER, 'E-1,Kim,Park,,,,,,2022-01-01,,Active,FULL_TIME,31000,gbp', 'E-2,Lou,Park,,,,,,,2025-12-31, Leaver ,Zero_Hours,,'),
    );
    expect(first).toMatchObject({ created: 2, rejected: 0 });
    const rows = await db
      .selectFrom('employments')
      .select(['payroll_reference', 'employment_status', 'contract_type', 'currency'])
      .where('payroll_id', '=', payrollA.id)
      .orderBy('payroll_reference')
      .execute();
    expect(rows).toEqual([
      { payroll_reference: 'E-1', employment_status: 'active', contract_type: 'full_time', currency: 'GBP' },
      { payroll_reference: 'E-2', employment_status: 'leaver', contract_type: 'zero_hours', currency: 'GBP' },
    ]);
    const lower = await run(payrollA.id, fileOf(FULL_HEADER, 'E-1,Kim,Park,,,,,,2022-01-01,,active,full_time,31000,GBP', 'E-2,Lou,Park,,,,,,,2025-12-31,leaver,zero_hours,,'));
    expect(lower).toMatchObject({ updated: 0, unchanged: 2 });
  });
});
