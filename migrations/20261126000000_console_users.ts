import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// People who use the operations console (/console), apart from the API's machine clients: created,
// disabled and given a new password from the CLI only. A password is kept as a self-describing scrypt
// hash (`scrypt$N$r$p$salt$hash`), so a later cost can be verified beside older hashes.
//
// - failed_sign_ins counts failures since the last success; at the limit the account is locked
//   until locked_until, and the count starts again after it.
// - console_sessions keeps the SHA-256 of each session token, never the token: a copy of the table
//   signs nobody in. A session ends at expires_at (absolute), after its idle limit (last_seen_at),
//   at sign-out (signed_out_at) or when its user is disabled.
// - audit_log.actor_kind gains `console`: a person acting in the console, named by email.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table console_users (
      id uuid primary key,
      email text not null unique check (email = lower(email) and email like '%_@_%'),
      name text not null check (length(name) > 0),
      role text not null check (role in ('operator', 'finance', 'viewer')),
      password_hash text not null check (password_hash like 'scrypt$%'),
      created_at timestamptz not null default now(),
      created_by text not null,
      password_changed_at timestamptz not null default now(),
      disabled_at timestamptz,
      failed_sign_ins integer not null default 0 check (failed_sign_ins >= 0),
      locked_until timestamptz,
      last_signed_in_at timestamptz
    );

    create table console_sessions (
      id uuid primary key,
      token_hash bytea not null unique,
      user_id uuid not null references console_users (id),
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      signed_out_at timestamptz,
      address text,
      user_agent text
    );
    create index console_sessions_user_idx on console_sessions (user_id) where signed_out_at is null;

    alter table audit_log drop constraint audit_log_actor_kind_check;
    alter table audit_log add constraint audit_log_actor_kind_check check (actor_kind in ('client', 'cli', 'console'));
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    delete from audit_log where actor_kind = 'console';
    alter table audit_log drop constraint audit_log_actor_kind_check;
    alter table audit_log add constraint audit_log_actor_kind_check check (actor_kind in ('client', 'cli'));
    drop table console_sessions;
    drop table console_users;
  `.execute(db);
}
