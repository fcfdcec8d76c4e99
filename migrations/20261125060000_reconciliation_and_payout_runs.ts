import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Reconciliation and payout runs as the database knows them, beside nightly runs and re-runs. Each
// run's row is written when it starts, in its own commit, and finished when its work commits: a worker
// killed midway leaves a row with no `finished_at` that stays visible, and the retry writes its own
// row and finishes it.
//
// - reconciliation_runs.trigger: `sweep` (the daily sweep queued it), `request` (records accepted, a
//   re-run or a later pay date asked for it, debounced), `sandbox` (the sandbox simulation) or
//   `direct` (called without a job, e.g. from a script).
// - payout_runs.trigger: `schedule` (the daily job), `cli` (`payouts run`; `triggered_by` says who)
//   or `direct` (called without either).
// - outcome is null while unfinished; `failed` carries the error in failure_reason.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table reconciliation_runs (
      id uuid primary key,
      payroll_id uuid not null,
      pay_date date not null,
      trigger text not null check (trigger in ('sweep', 'request', 'sandbox', 'direct')),
      triggered_by text,
      final boolean not null,
      started_at timestamptz not null default now(),
      finished_at timestamptz,
      outcome text check (outcome in ('completed', 'failed')),
      failure_reason text,
      snapshot_id uuid,
      employees integer,
      collected bigint,
      exceptions integer,
      ledger_entries integer,
      payments_updated integer,
      check ((outcome is null) = (finished_at is null)),
      check (outcome <> 'failed' or failure_reason is not null)
    );
    create index reconciliation_runs_history_idx on reconciliation_runs (started_at desc);
    create index reconciliation_runs_pay_date_idx on reconciliation_runs (payroll_id, pay_date, started_at);

    create table payout_runs (
      id uuid primary key,
      run_date date not null,
      trigger text not null check (trigger in ('schedule', 'cli', 'direct')),
      triggered_by text,
      settled_through date not null,
      started_at timestamptz not null default now(),
      finished_at timestamptz,
      outcome text check (outcome in ('completed', 'failed')),
      failure_reason text,
      payouts_made integer,
      failed_groups integer,
      -- Minor units paid out per ISO 4217 code, e.g. {"GBP": 4200}.
      totals_by_currency jsonb,
      -- Each (biller, currency) group's outcome, with the payout id where one was made.
      groups jsonb,
      check ((outcome is null) = (finished_at is null)),
      check (outcome <> 'failed' or failure_reason is not null)
    );
    create index payout_runs_history_idx on payout_runs (started_at desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table payout_runs;
    drop table reconciliation_runs;
  `.execute(db);
}
