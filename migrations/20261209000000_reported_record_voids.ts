import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// What payroll reports can be wrong beyond repair by the provider (a push of absurd amounts, a
// confirmation against the wrong pay date). An operator can now void a payroll pay date's reported
// records, with a reason:
//
// - deduction_record_voids: one row per void (who, when, why, how many records, their total).
// - deduction_records.void_id: the void a record fell to; null while it counts. A record is never
//   deleted or changed otherwise: a void keeps what was reported, it only stops it counting.
//
// Work over many pay dates now records one pay date's failure as its own exception instead of
// failing the others' (pay_date_exceptions): the stage it failed in, what went wrong, when it was
// first and last seen and how often; an open one per pay date and stage, resolved when the stage
// next succeeds for that pay date.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table deduction_record_voids (
      id uuid primary key,
      payroll_id uuid not null,
      pay_date date not null,
      reason text not null check (length(btrim(reason)) between 1 and 500),
      voided_by text not null check (length(voided_by) > 0),
      voided_at timestamptz not null default now(),
      records integer not null check (records >= 0),
      total_amount numeric not null,
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)
    );
    create index deduction_record_voids_pay_date_idx on deduction_record_voids (payroll_id, pay_date, voided_at);

    alter table deduction_records add column void_id uuid references deduction_record_voids (id);

    create table pay_date_exceptions (
      id uuid primary key,
      payroll_id uuid not null,
      pay_date date not null,
      stage text not null check (stage in ('remittance', 'funding')),
      detail text not null,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      occurrences integer not null default 1 check (occurrences >= 1),
      resolved_at timestamptz,
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)
    );
    create unique index pay_date_exceptions_open_idx on pay_date_exceptions (payroll_id, pay_date, stage) where resolved_at is null;
    create index pay_date_exceptions_page_idx on pay_date_exceptions (last_seen_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table pay_date_exceptions;
    alter table deduction_records drop column void_id;
    drop table deduction_record_voids;
  `.execute(db);
}
