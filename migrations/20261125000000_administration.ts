import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// An installation set up without SQL (administration API and CLI):
// - bank holidays come from a maintained library per region; the table now holds only the days an
//   operator adds (a one-off bank holiday), per region. The rows it held were a hand-written copy of
//   the England and Wales list, which the library now provides, so they go;
// - a payroll names its bank-holiday region, a provider its region;
// - sandbox data is marked on the provider (its employers, payrolls and employees follow it) and on
//   the clients that may see it, so the two never mix;
// - an employer's opt-in status keeps its history.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create domain bank_holiday_region as text
      check (value in ('england-and-wales', 'scotland', 'northern-ireland'));

    delete from bank_holidays;
    alter table bank_holidays drop constraint bank_holidays_pkey;
    alter table bank_holidays add column region bank_holiday_region not null;
    alter table bank_holidays add column added_by text not null;
    alter table bank_holidays add column created_at timestamptz not null default now();
    alter table bank_holidays add primary key (region, holiday_date);

    alter table payroll_providers add column region bank_holiday_region not null default 'england-and-wales';
    alter table payroll_providers add column sandbox boolean not null default false;
    alter table payroll_providers add column updated_at timestamptz not null default now();

    alter table payrolls add column bank_holiday_region bank_holiday_region not null default 'england-and-wales';

    alter table clients add column sandbox boolean not null default false;

    create table employer_opt_in_changes (
      id uuid primary key default gen_random_uuid(),
      employer_id uuid not null references employers (id),
      from_status text,
      to_status text not null check (to_status in ('pending', 'opted_in', 'opted_out')),
      changed_by text not null,
      reason text,
      changed_at timestamptz not null default now()
    );
    create index employer_opt_in_changes_by_employer on employer_opt_in_changes (employer_id, changed_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table employer_opt_in_changes;
    alter table clients drop column sandbox;
    alter table payrolls drop column bank_holiday_region;
    alter table payroll_providers drop column updated_at;
    alter table payroll_providers drop column sandbox;
    alter table payroll_providers drop column region;
    alter table bank_holidays drop constraint bank_holidays_pkey;
    alter table bank_holidays drop column created_at;
    alter table bank_holidays drop column added_by;
    alter table bank_holidays drop column region;
    alter table bank_holidays add primary key (holiday_date);
    drop domain bank_holiday_region;
  `.execute(db);
}
