import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Five operators asking at once to re-run one payroll's pay date made five snapshot versions and five
// instruction files, one per request. A re-run is now one row per freeze, open until its freeze commits,
// and at most one is open per pay date: a request while one is open joins it, so each re-run keeps a
// list of who asked and why (rerun_requests) instead of a single reason. Re-runs left open by the old
// code for the same pay date become one: the newest keeps every request, the others are dropped (they
// never froze anything, so no snapshot points at them).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table rerun_requests (
      id uuid primary key default gen_random_uuid(),
      rerun_id uuid not null references reruns (id),
      reason text not null check (length(reason) > 0),
      requested_by text not null,
      requested_at timestamptz not null default now()
    );
    create index rerun_requests_rerun_idx on rerun_requests (rerun_id);

    insert into rerun_requests (rerun_id, reason, requested_by, requested_at)
    select id, reason, requested_by, requested_at from reruns;

    with merged as (
      select id, first_value(id) over (partition by payroll_id, pay_date order by requested_at desc, id desc) as kept
      from reruns
      where completed_at is null
    )
    update rerun_requests r set rerun_id = merged.kept from merged where r.rerun_id = merged.id and merged.id <> merged.kept;
    delete from reruns r where not exists (select from rerun_requests q where q.rerun_id = r.id);
    update reruns r set requested_at = q.first_requested_at
    from (select rerun_id, min(requested_at) as first_requested_at from rerun_requests group by rerun_id) q
    where q.rerun_id = r.id and q.first_requested_at < r.requested_at;

    alter table reruns drop column reason, drop column requested_by;
    alter table reruns add constraint reruns_completed_with_snapshot check ((completed_at is null) = (new_snapshot_id is null));
    create unique index reruns_one_open_per_pay_date on reruns (payroll_id, pay_date) where completed_at is null;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index reruns_one_open_per_pay_date;
    alter table reruns drop constraint reruns_completed_with_snapshot;
    alter table reruns add column reason text, add column requested_by text;
    update reruns r
    set reason = first.reason, requested_by = first.requested_by
    from (
      select distinct on (rerun_id) rerun_id, reason, requested_by
      from rerun_requests
      order by rerun_id, requested_at, id
    ) first
    where first.rerun_id = r.id;
    update reruns set reason = 'unknown', requested_by = 'unknown' where reason is null;
    alter table reruns alter column reason set not null, alter column requested_by set not null,
      add constraint reruns_reason_check check (length(reason) > 0);
    drop table rerun_requests;
  `.execute(db);
}
