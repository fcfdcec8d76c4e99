import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The payout bank file used to be generated from "the live payouts made on the date" at every download:
// a second download after more payouts were made repeated the payouts already sent under a new MsgId
// (the bank's duplicate-MsgId check cannot see that), and failed payouts stayed in it. A payment file
// is now a stored document, written once:
//
// - payment_files: one row per file, numbered per payout date (`sequence` 1, 2...), with its MsgId, its
//   CreDtTm (`created_at`), the execution date it asks for, who wrote it, and the exact bytes of both
//   renderings (pain.001 XML and CSV) with their SHA-256. Downloading it again gives these bytes.
// - payment_file_payouts: which payouts a file instructs. The payout is the primary key, so no payout
//   can be in two files: the database refuses it, whatever the code does.
// - Both tables refuse UPDATE and DELETE: a file sent to the bank is a record, never rewritten.
//
// Payouts that exist when this runs were downloadable (and may have been sent) before files were
// kept. So that none is instructed a second time, each date's existing live payouts are put in a
// legacy file of that date (sequence 0): it records that they were handed to finance before, and has
// no MsgId or bytes, since what was sent was not kept. A legacy payout that was never sent is paid by
// marking it failed, which releases its entries to a new payout with a new reference and end-to-end id.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table payment_files (
      id uuid primary key,
      payout_date date not null,
      sequence integer not null check (sequence >= 0),
      legacy boolean not null default false,
      message_id text unique check (length(message_id) between 1 and 35),
      requested_execution_date date,
      created_at timestamptz not null default now(),
      created_by text not null check (length(created_by) > 0),
      pain001 bytea,
      pain001_sha256 text check (pain001_sha256 ~ '^[0-9a-f]{64}$'),
      csv bytea,
      csv_sha256 text check (csv_sha256 ~ '^[0-9a-f]{64}$'),
      unique (payout_date, sequence),
      check (legacy = (sequence = 0)),
      check (
        case when legacy
          then message_id is null and requested_execution_date is null and pain001 is null and pain001_sha256 is null and csv is null and csv_sha256 is null
          else message_id is not null and requested_execution_date is not null and requested_execution_date >= payout_date
            and pain001 is not null and pain001_sha256 is not null and csv is not null and csv_sha256 is not null
        end
      )
    );
    create index payment_files_page_idx on payment_files (created_at desc, id desc);

    create table payment_file_payouts (
      payout_id uuid primary key references payouts (id),
      payment_file_id uuid not null references payment_files (id)
    );
    create index payment_file_payouts_file_idx on payment_file_payouts (payment_file_id);

    create function payment_files_are_final() returns trigger language plpgsql as $$
    begin
      raise exception '% is the record of what was sent to the bank: % refused', tg_table_name, tg_op;
    end
    $$;
    create trigger payment_files_are_final before update or delete on payment_files
      for each row execute function payment_files_are_final();
    create trigger payment_file_payouts_are_final before update or delete on payment_file_payouts
      for each row execute function payment_files_are_final();

    insert into payment_files (id, payout_date, sequence, legacy, created_by)
    select gen_random_uuid(), dates.payout_date, 0, true, 'migration 20261202010000_payment_files'
    from (
      select distinct p.payout_date from payouts p join clients c on c.id = p.biller_client_id where not c.sandbox
    ) dates;

    insert into payment_file_payouts (payout_id, payment_file_id)
    select p.id, f.id
    from payouts p
    join clients c on c.id = p.biller_client_id and not c.sandbox
    join payment_files f on f.payout_date = p.payout_date and f.legacy;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table payment_file_payouts;
    drop table payment_files;
    drop function payment_files_are_final();
  `.execute(db);
}
