import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The nightly lock moves a million payment requests from pending to instructed. Pending requests were
// found through two partial indexes of payment_requests (where awaiting_lock, a stored status =
// 'pending'), so leaving pending changed an indexed column: every instruct was a new row version with a
// new entry in each of the table's indexes (three random B-tree inserts, and the bottom-up deletion
// passes their duplicates set off), the largest single cost of the lock.
//
// Pending requests are now found through a queue of their own, pending_payment_requests, with the
// payroll and target pay date the lock looks them up by. No index of payment_requests reads the status,
// so the lock's update is heap-only. The queue is kept by the database, whoever writes a request:
//  - a statement that inserts payment requests queues the pending ones (statement trigger);
//  - a request that enters pending (a carried shortfall, a request a re-run released) or is given
//    another target pay date while pending is queued anew (row trigger, only for those rows);
//  - a request that leaves pending keeps its queue row until the lock that looks it up finds it
//    not pending and deletes it (the lock deletes the rows of the requests it instructs or refuses in
//    the same statement). A queue row therefore says "perhaps pending": its readers check the request.
// Every pending request has its queue row at its current payroll and target pay date; the tests hold
// the database to that.
//
// deduction_line_payments_line_idx went with the foreign key it served (20261122020000): nothing has
// read it since, and the lock paid an index entry per payment for it.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    -- No request may be written between the queue's filling and its triggers' start.
    lock table payment_requests in share row exclusive mode;
    create table pending_payment_requests (
      payment_request_id uuid primary key,
      payroll_id uuid not null,
      target_pay_date date not null
    );
    create index pending_payment_requests_lock_idx on pending_payment_requests (payroll_id, target_pay_date);
    alter table pending_payment_requests set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.01);
    insert into pending_payment_requests (payment_request_id, payroll_id, target_pay_date)
      select id, payroll_id, target_pay_date from payment_requests where status = 'pending';

    create function queue_inserted_pending_payment_requests() returns trigger language plpgsql as $$
    begin
      insert into pending_payment_requests (payment_request_id, payroll_id, target_pay_date)
        select id, payroll_id, target_pay_date from inserted_payment_requests where status = 'pending'
      on conflict (payment_request_id) do update set payroll_id = excluded.payroll_id, target_pay_date = excluded.target_pay_date;
      return null;
    end
    $$;
    create trigger payment_requests_queue_inserted after insert on payment_requests
      referencing new table as inserted_payment_requests
      for each statement execute function queue_inserted_pending_payment_requests();

    create function queue_payment_request_entering_pending() returns trigger language plpgsql as $$
    begin
      insert into pending_payment_requests (payment_request_id, payroll_id, target_pay_date)
        values (new.id, new.payroll_id, new.target_pay_date)
      on conflict (payment_request_id) do update set payroll_id = excluded.payroll_id, target_pay_date = excluded.target_pay_date;
      return null;
    end
    $$;
    create trigger payment_requests_queue_entering_pending after update of status, target_pay_date on payment_requests
      for each row when (new.status = 'pending' and (old.status is distinct from 'pending' or old.target_pay_date is distinct from new.target_pay_date))
      execute function queue_payment_request_entering_pending();

    drop index payment_requests_lock_idx;
    drop index payment_requests_pending_by_mandate_idx;
    alter table payment_requests drop column awaiting_lock;
    drop index deduction_line_payments_line_idx;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create index deduction_line_payments_line_idx on deduction_line_payments (line_id);
    alter table payment_requests add column awaiting_lock boolean generated always as (status = 'pending') stored;
    create index payment_requests_lock_idx on payment_requests (payroll_id, target_pay_date) where awaiting_lock;
    create index payment_requests_pending_by_mandate_idx on payment_requests (mandate_id, target_pay_date) where awaiting_lock;
    drop trigger payment_requests_queue_entering_pending on payment_requests;
    drop function queue_payment_request_entering_pending();
    drop trigger payment_requests_queue_inserted on payment_requests;
    drop function queue_inserted_pending_payment_requests();
    drop table pending_payment_requests;
  `.execute(db);
}
