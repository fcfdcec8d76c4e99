import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { databaseForMigration } from '../../support/migration-database.ts';

// 20261216000000_employment_details moves what a payroll says of its employee onto the employment
// (decision 0015): existing employments must get what their employee row held, on the way up, and
// lose the columns again on the way down. A database of its own, migrated step by step.

const MIGRATION = '20261216000000_employment_details';
const migration = databaseForMigration(MIGRATION);
const BEFORE = migration.before;
const migrateTo = (target: string) => migration.migrateTo(target);

describe(MIGRATION, () => {
  const ids = { provider: randomUUID(), employer: randomUUID(), payrollA: randomUUID(), payrollB: randomUUID(), person: randomUUID(), unnamed: randomUUID() };

  it("gives every existing employment its employee's name and contact details, an empty name as null, and takes them away on the way down", async () => {
    await migrateTo(BEFORE);
    await sql`insert into payroll_providers (id, name) values (${ids.provider}, 'Provider')`.execute(migration.db);
    await sql`insert into employers (id, payroll_provider_id, external_id, name) values (${ids.employer}, ${ids.provider}, 'E1', 'Employer')`.execute(migration.db);
    await sql`
      insert into payrolls (id, employer_id, payroll_provider_id, external_id, name)
      values (${ids.payrollA}, ${ids.employer}, ${ids.provider}, 'PA', 'Payroll A'), (${ids.payrollB}, ${ids.employer}, ${ids.provider}, 'PB', 'Payroll B')
    `.execute(migration.db);
    await sql`
      insert into employees (id, payroll_provider_id, national_registration_number, given_name, family_name, email_address, phone_number, postal_code)
      values (${ids.person}, ${ids.provider}, 'AB123456C', 'Siobhan', 'O''Donnell', 'siobhan@a.example', '+447700900111', 'BT1 1AA'),
             (${ids.unnamed}, ${ids.provider}, null, '', '', null, null, null)
    `.execute(migration.db);
    await sql`
      insert into employments (employee_id, employer_id, payroll_id, payroll_reference)
      values (${ids.person}, ${ids.employer}, ${ids.payrollA}, 'A-7'), (${ids.person}, ${ids.employer}, ${ids.payrollB}, 'B-3'),
             (${ids.unnamed}, ${ids.employer}, ${ids.payrollA}, 'Z-1')
    `.execute(migration.db);

    await migrateTo(MIGRATION);

    const { rows } = await sql<Record<string, string | null>>`
      select payroll_reference, given_name, family_name, email_address, phone_number, postal_code from employments order by payroll_reference
    `.execute(migration.db);
    expect(rows).toEqual([
      { payroll_reference: 'A-7', given_name: 'Siobhan', family_name: "O'Donnell", email_address: 'siobhan@a.example', phone_number: '+447700900111', postal_code: 'BT1 1AA' },
      { payroll_reference: 'B-3', given_name: 'Siobhan', family_name: "O'Donnell", email_address: 'siobhan@a.example', phone_number: '+447700900111', postal_code: 'BT1 1AA' },
      { payroll_reference: 'Z-1', given_name: null, family_name: null, email_address: null, phone_number: null, postal_code: null },
    ]);

    await migrateTo(BEFORE);
    const { rows: columns } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns where table_schema = 'public' and table_name = 'employments' order by column_name
    `.execute(migration.db);
    expect(columns.map((c) => c.column_name)).not.toEqual(expect.arrayContaining(['given_name']));
    expect(columns.map((c) => c.column_name)).toContain('payroll_reference');
  });
});
