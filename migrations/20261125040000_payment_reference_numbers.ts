import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Payment references a bank accepts (at most 18 letters and digits) that never collide: each
// employment and each payroll gets a number PostgreSQL assigns once and never reuses. The deduction
// reference is 'SD' and the employment's number, the remittance reference 'SDR', the pay date and the
// payroll's number; the largest values keep both within 18 characters (the sequences refuse more).
// Existing rows are numbered as the columns are added.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table employments
      add column deduction_reference_number bigint generated always as identity (maxvalue 999999999999999),
      add constraint employments_deduction_reference_number_key unique (deduction_reference_number);
    alter table payrolls
      add column remittance_reference_number bigint generated always as identity (maxvalue 99999999),
      add constraint payrolls_remittance_reference_number_key unique (remittance_reference_number);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table payrolls drop column remittance_reference_number;
    alter table employments drop column deduction_reference_number;
  `.execute(db);
}
