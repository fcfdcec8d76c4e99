import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A payroll provider without an API (files only) reports what payroll deducted with a deduction
// return file: the instruction file's items with what was deducted beside what was asked. An
// operator imports it (CLI or console) and it becomes the pay date's confirmation, as if the
// provider had posted it; or the provider's own client uploads it through the API.
//
// - confirmations.submitted_by_client_id may now be null: a confirmation an operator imported on the
//   provider's behalf has no client; confirmations.submitted_by names that operator instead (the CLI
//   user, or a console user's email). Exactly one of the two is set. Existing rows all have a client.
// - deduction_records.received_by_client_id may be null for the same records (its foreign key went
//   in 20261122031000; findBrokenRecordLinks holds a null one to an operator's confirmation).
//   Dropping a not-null is a catalogue change: no row is read or rewritten.
// - deduction_return_imports: each applied import, with the file's sha256, the instruction file it
//   answers and the confirmation it became, so an operator can tell a file was imported before, when
//   and by whom. A dry run, a refused file or a file that changes nothing leaves no row.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table confirmations alter column submitted_by_client_id drop not null;
    alter table confirmations add column submitted_by text check (length(submitted_by) > 0);
    alter table confirmations add constraint confirmations_submitted_by_one
      check ((submitted_by_client_id is null) <> (submitted_by is null));
    alter table deduction_records alter column received_by_client_id drop not null;

    create table deduction_return_imports (
      id uuid primary key default gen_random_uuid(),
      payroll_id uuid not null,
      pay_date date not null,
      instruction_file_id uuid not null references instruction_files (id),
      confirmation_id uuid not null references confirmations (id),
      file_sha256 text not null check (file_sha256 ~ '^[0-9a-f]{64}$'),
      partial boolean not null,
      rows integer not null check (rows >= 0),
      confirmed integer not null check (confirmed >= 0),
      rejected integer not null check (rejected >= 0),
      error_count integer not null check (error_count >= 0),
      imported_by text not null check (length(imported_by) > 0),
      imported_at timestamptz not null default now(),
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)
    );
    create index deduction_return_imports_by_pay_date on deduction_return_imports (payroll_id, pay_date, imported_at desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Confirmations an operator imported have no client to give back the not-null: they go, with their records.
  await sql`
    drop table deduction_return_imports;
    delete from deduction_records where received_by_client_id is null;
    delete from deduction_records r using confirmations c where r.confirmation_id = c.id and c.submitted_by_client_id is null;
    delete from confirmations where submitted_by_client_id is null;
    alter table deduction_records alter column received_by_client_id set not null;
    alter table confirmations drop constraint confirmations_submitted_by_one;
    alter table confirmations drop column submitted_by;
    alter table confirmations alter column submitted_by_client_id set not null;
  `.execute(db);
}
