import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// An exception holds money payroll deducted but no payment request may take (an over-deduction, an
// employee with nothing requested). How much is held depends on the record and on what the employee's
// requests can still take, and the second changes when another pay date's reconciliation corrects a
// payment both pay dates concern. Keying exceptions by record version, with a re-run of the same version
// doing nothing on conflict, kept the first figure forever: money already collected stayed held as
// well. Now each (pay date, employee, kind) has at most one current exception; a reconciliation that
// finds a different figure supersedes it and records the new one, so the history stays and only the
// current row counts.

const NO_EMPLOYEE = sql.raw(`'00000000-0000-0000-0000-000000000000'::uuid`);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table reconciliation_exceptions add column superseded_at timestamptz`.execute(db);
  // Until now every record version kept its own row: the newest stays current.
  await sql`
    update reconciliation_exceptions e set superseded_at = now()
    from (
      select id, row_number() over (
               partition by payroll_id, pay_date, coalesce(employee_id, ${NO_EMPLOYEE}), kind
               order by coalesce(record_version, -1) desc, created_at desc, id desc) as newest_first
      from reconciliation_exceptions
    ) ranked
    where ranked.id = e.id and ranked.newest_first > 1
  `.execute(db);
  await sql`drop index reconciliation_exceptions_once`.execute(db);
  await sql`
    create unique index reconciliation_exceptions_current
      on reconciliation_exceptions (payroll_id, pay_date, coalesce(employee_id, ${NO_EMPLOYEE}), kind)
      where superseded_at is null
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index reconciliation_exceptions_current`.execute(db);
  await sql`delete from reconciliation_exceptions where superseded_at is not null`.execute(db);
  await sql`
    create unique index reconciliation_exceptions_once
      on reconciliation_exceptions (payroll_id, pay_date, coalesce(employee_id, ${NO_EMPLOYEE}), kind, coalesce(record_version, -1))
  `.execute(db);
  await sql`alter table reconciliation_exceptions drop column superseded_at`.execute(db);
}
