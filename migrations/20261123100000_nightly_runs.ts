import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The nightly run as the database knows it. Until now a run existed only in Redis (a BullMQ flow
// whose job ids were derived from the run date), so its summary was read back from job return
// values and a Redis that had lost, or outlived, the database decided what a run did. A run is now
// a row, and each pay date it took on is a row whose outcome is written in the transaction that
// locks the pay date: the summary, run history and any later console read these.
//
// - `trigger`: `schedule` (the job scheduler), `catch_up` (the worker's watchdog, for a run date
//   whose scheduled trigger never ran) or `manual` (the CLI; `triggered_by` says who).
// - One unfinished run per run date: a second trigger joins it rather than racing it.
// - `job_requeues`: how often the watchdog queued the pay date's job again because Redis no longer
//   had a live job for a pay date the database still calls pending; it gives up after a bound.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table nightly_runs (
      id uuid primary key,
      run_date date not null,
      trigger text not null check (trigger in ('schedule', 'catch_up', 'manual')),
      triggered_by text,
      pay_dates_due integer not null check (pay_dates_due >= 0),
      started_at timestamptz not null default now(),
      finished_at timestamptz,
      check (finished_at is null or finished_at >= started_at)
    );
    create unique index nightly_runs_one_unfinished_per_date on nightly_runs (run_date) where finished_at is null;
    create index nightly_runs_history_idx on nightly_runs (run_date, started_at);

    create table nightly_run_pay_dates (
      run_id uuid not null references nightly_runs (id),
      payroll_id uuid not null,
      pay_date date not null,
      outcome text not null default 'pending' check (outcome in ('pending', 'locked', 'already_locked', 'failed')),
      -- The snapshot this run created (locked) or found current (already_locked).
      snapshot_id uuid,
      employee_count integer,
      payments_instructed integer,
      total_amount bigint,
      currency char(3),
      failure_reason text,
      job_requeues integer not null default 0 check (job_requeues >= 0),
      resolved_at timestamptz,
      primary key (run_id, payroll_id, pay_date),
      check ((outcome = 'pending') = (resolved_at is null)),
      check (outcome <> 'locked' or (snapshot_id is not null and total_amount is not null and currency is not null)),
      check (outcome <> 'failed' or failure_reason is not null)
    );
    -- Whether a run has anything left is asked after every pay date it locks.
    create index nightly_run_pay_dates_pending_idx on nightly_run_pay_dates (run_id) where outcome = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table nightly_run_pay_dates;
    drop table nightly_runs;
  `.execute(db);
}
