import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// What a payroll says about its employee belongs to that employment (decision 0015): the name as
// that payroll spells it and the contact details that employer holds now live on `employments`,
// beside the payroll reference. Before, they lived on `employees` only, shared by every employment
// of the person, so one employer's import overwrote what another's had set (issue 33, item 3).
// `employees` keeps who the person is (national registration number, date of birth) and the name
// and contact details the person was first recorded with.
//
// The new columns are nullable: an employment whose payroll never named the person (one learnt from
// a provider's availability answer) shows the person's name. Existing employments get what the
// employee row holds now, which is the best anyone knows of what their payrolls said; an empty name
// (an employee created from an availability answer that gave none) stays null. Adding nullable
// columns without a default is a catalogue change only; the backfill rewrites each employment once,
// in this migration's transaction. No index reads them, so the nightly lock's updates are unaffected.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table employments
      add column given_name text,
      add column family_name text,
      add column email_address text,
      add column phone_number text,
      add column postal_code text
  `.execute(db);
  await sql`
    update employments e
       set given_name = nullif(p.given_name, ''),
           family_name = nullif(p.family_name, ''),
           email_address = p.email_address,
           phone_number = p.phone_number,
           postal_code = p.postal_code
      from employees p
     where p.id = e.employee_id
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table employments
      drop column given_name,
      drop column family_name,
      drop column email_address,
      drop column phone_number,
      drop column postal_code
  `.execute(db);
}
