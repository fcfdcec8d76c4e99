import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Availability checks disclose a person's employer, payroll and salary, so every check is recorded:
// which biller asked, when, which kind, and what it was told. The person is kept only as an HMAC of
// the national registration number (keyed from configuration), enough to find repeated lookups of one
// person without holding the number, the name or the date of birth in clear (null: the check gave no
// number).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table availability_lookups (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      checked_at timestamptz not null default now(),
      kind text not null check (kind in ('light', 'full')),
      outcome text not null
        check (outcome in ('confirmed', 'not_found', 'not_eligible', 'pending_employer_opt_in', 'rate_limited', 'failed')),
      national_registration_number_hmac text check (national_registration_number_hmac ~ '^[0-9a-f]{64}$')
    );
    create index availability_lookups_person_idx on availability_lookups (national_registration_number_hmac, checked_at);
    create index availability_lookups_biller_idx on availability_lookups (biller_client_id, checked_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table availability_lookups`.execute(db);
}
