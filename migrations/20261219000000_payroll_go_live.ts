import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Going live (decision 0016). A payroll's go-live date is its first pay date to collect: the nightly
// run never locks, or catches up, a pay date before it, and a payroll without one is not live. A
// calendar written for a payroll without one sets it to the first pay date whose lock date has not
// passed, so a calendar generated with lock dates behind it no longer has them locked at once.
//
// Existing payrolls keep collecting as they did: one with a locked pay date goes live from its first
// locked pay date; one with pay dates but none locked from its first pay date whose lock date is
// today or later (the day in UTC: close enough for a date the operator can move).
//
// A pay date the nightly run held back because its payroll was not ready (no active collection
// account in its currency, an employer that has not opted in) is recorded as `skipped`, with the
// reason; it is locked once the payroll is ready, by the watchdog or the operator.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table payrolls add column go_live_date date;

    update payrolls p set go_live_date = first_locked.pay_date
      from (select payroll_id, min(pay_date) as pay_date from pay_dates where locked_at is not null group by payroll_id) first_locked
     where first_locked.payroll_id = p.id;

    update payrolls p set go_live_date = first_open.pay_date
      from (select payroll_id, min(pay_date) as pay_date from pay_dates where lock_date >= current_date group by payroll_id) first_open
     where first_open.payroll_id = p.id and p.go_live_date is null;

    alter table nightly_run_pay_dates drop constraint nightly_run_pay_dates_outcome_check;
    alter table nightly_run_pay_dates add constraint nightly_run_pay_dates_outcome_check
      check (outcome in ('pending', 'locked', 'already_locked', 'failed', 'skipped'));
    alter table nightly_run_pay_dates add constraint nightly_run_pay_dates_skipped_reason_check
      check (outcome <> 'skipped' or failure_reason is not null);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    delete from nightly_run_pay_dates where outcome = 'skipped';
    alter table nightly_run_pay_dates drop constraint nightly_run_pay_dates_skipped_reason_check;
    alter table nightly_run_pay_dates drop constraint nightly_run_pay_dates_outcome_check;
    alter table nightly_run_pay_dates add constraint nightly_run_pay_dates_outcome_check
      check (outcome in ('pending', 'locked', 'already_locked', 'failed'));
    alter table payrolls drop column go_live_date;
  `.execute(db);
}
