import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Bulk imports of a payroll's employees from CSV files: each applied (or refused) run is kept with
// the file's sha256 and what it did, so an operator can tell that a file was imported before, when
// and by whom, and what it changed. The rows themselves are staged in a temporary table of the
// importing transaction, never here.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table employee_import_runs (
      id uuid primary key default gen_random_uuid(),
      payroll_id uuid not null references payrolls (id),
      file_sha256 text not null check (file_sha256 ~ '^[0-9a-f]{64}$'),
      partial boolean not null,
      rows integer not null check (rows >= 0),
      created integer not null check (created >= 0),
      updated integer not null check (updated >= 0),
      unchanged integer not null check (unchanged >= 0),
      left_count integer not null check (left_count >= 0),
      rejected integer not null check (rejected >= 0),
      error_count integer not null check (error_count >= 0),
      imported_by text not null,
      started_at timestamptz not null,
      finished_at timestamptz not null default now()
    );
    create index employee_import_runs_by_payroll on employee_import_runs (payroll_id, finished_at desc);
    create index employee_import_runs_by_file on employee_import_runs (payroll_id, file_sha256);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table employee_import_runs`.execute(db);
}
