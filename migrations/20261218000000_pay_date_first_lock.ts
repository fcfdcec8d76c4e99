import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A re-run locks a pay date again, and the lock sets pay_dates.locked_at to its own time: the time
// the pay date was first locked (when payroll was first asked, the one the employer and the
// provider remember) was lost from the pay date, and the views showed the re-run's as "Locked".
// first_locked_at keeps it: the lock sets it once (coalesce) and never again, beside locked_at,
// which stays the latest lock's.
//
// Existing rows: a locked pay date takes the time its first snapshot was locked (every lock and
// re-run writes a snapshot in the transaction that sets locked_at, so the earliest snapshot's
// locked_at is the first lock's), or its locked_at when it has no snapshot; an unlocked one stays
// null. pay_dates is small (a row per payroll pay date) and the column has no index, so the lock's
// own update of the row stays HOT.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table pay_dates add column first_locked_at timestamptz;

    update pay_dates d
       set first_locked_at = least(d.locked_at,
                                   (select min(s.locked_at) from deduction_snapshots s
                                     where s.payroll_id = d.payroll_id and s.pay_date = d.pay_date))
     where d.locked_at is not null;

    alter table pay_dates add constraint pay_dates_first_lock_not_after_last check (first_locked_at <= locked_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table pay_dates drop constraint pay_dates_first_lock_not_after_last, drop column first_locked_at`.execute(db);
}
