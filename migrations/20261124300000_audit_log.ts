import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Marking a payout paid or failed stored no actor, and a failed payout's entries are paid again by the
// next run, so one wrong click paid twice and nobody could tell who made it. Every money-moving or
// credential-changing action now leaves one row here, written in the same transaction as the action:
// who (an API client's id, or the person at the CLI), what, on which resource, why, and a summary of
// the resource before and after. Rows are never changed or removed: the table refuses it.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table audit_log (
      id uuid primary key default gen_random_uuid(),
      at timestamptz not null default now(),
      actor_kind text not null check (actor_kind in ('client', 'cli')),
      actor text not null check (length(actor) > 0),
      action text not null,
      resource_type text not null,
      resource_id text not null,
      reason text check (reason is null or length(reason) > 0),
      before jsonb,
      after jsonb
    );
    create index audit_log_resource_idx on audit_log (resource_type, resource_id, at);
    create index audit_log_at_idx on audit_log (at desc, id desc);

    create function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_log is append-only: % refused', tg_op;
    end
    $$;
    create trigger audit_log_append_only before update or delete on audit_log
      for each row execute function audit_log_append_only();
    create trigger audit_log_no_truncate before truncate on audit_log
      for each statement execute function audit_log_append_only();
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table audit_log;
    drop function audit_log_append_only();
  `.execute(db);
}
