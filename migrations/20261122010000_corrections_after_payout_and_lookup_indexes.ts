import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A later deduction record may reduce a collection that was already paid out; the reversal is then
// netted from the biller's next payout, so paid_out_amount may briefly exceed collected_amount.
// Also: indexes for paging events by (created_at, id) and for matching people by national number.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    do $$
    declare name text;
    begin
      select conname into name from pg_constraint
      where conrelid = 'payment_requests'::regclass and contype = 'c'
        and pg_get_constraintdef(oid) like '%paid_out_amount <= collected_amount%';
      if name is not null then
        execute format('alter table payment_requests drop constraint %I', name);
      end if;
    end $$;
  `.execute(db);
  await sql`alter table payment_requests add constraint payment_requests_paid_out_not_negative check (paid_out_amount >= 0)`.execute(db);
  await sql`create index events_biller_created_idx on events (biller_client_id, created_at desc, id desc)`.execute(db);
  await sql`create index employees_nrn_idx on employees (national_registration_number) where national_registration_number is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists employees_nrn_idx`.execute(db);
  await sql`drop index if exists events_biller_created_idx`.execute(db);
  await sql`alter table payment_requests drop constraint if exists payment_requests_paid_out_not_negative`.execute(db);
  await sql`alter table payment_requests add constraint payment_requests_paid_out_within_collected check (paid_out_amount between 0 and collected_amount)`.execute(db);
}
