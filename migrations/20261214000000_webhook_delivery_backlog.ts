import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A biller's webhook backlog waits in the database, not in the shared delivery queue, where it sat in
// front of every other biller's deliveries. A pending delivery is either in its biller's backlog or
// admitted: handed to the queue as one job, which holds it until its attempt is recorded. The
// dispatcher admits a few of each biller's due deliveries at a time, and tops a biller up as its jobs
// end:
//
// - job_id: the queue job that holds the delivery while it is admitted; null while it waits in the
//   backlog. Only that job may attempt it. Set and cleared with compare-and-set, so two dispatchers
//   never hand one delivery to two jobs.
// - admitted_at: when it was admitted (null in the backlog), for the sweep that finds jobs Redis lost.
// - admissions: how often it has been admitted; each admission's job id carries its number.
// - attempts_before_run: the attempts made before the current run of the retry schedule (a
//   redelivery starts a new run), so the delivery itself knows which attempt of its run comes next
//   (each admission is a new job, which cannot count them).
// - sequence: the order deliveries were created in (their events' order within one dispatch); a
//   biller's backlog goes out oldest due first, then in this order.
//
// Existing pending deliveries start in the backlog (their jobs, queued before, take their place in
// their biller's share when they run, or leave the delivery to the backlog); only they get a sequence
// number, as settled deliveries are never admitted again unless reopened.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence webhook_deliveries_sequence`.execute(db);
  await sql`
    alter table webhook_deliveries
      add column job_id text check (length(job_id) <= 200),
      add column admitted_at timestamptz,
      add column admissions integer not null default 0 check (admissions >= 0),
      add column attempts_before_run integer not null default 0 check (attempts_before_run >= 0),
      add column sequence bigint,
      add check ((job_id is null) = (admitted_at is null));
  `.execute(db);
  // Set after the column is added, so existing rows are not rewritten.
  await sql`alter table webhook_deliveries alter column sequence set default nextval('webhook_deliveries_sequence')`.execute(db);
  await sql`alter sequence webhook_deliveries_sequence owned by webhook_deliveries.sequence`.execute(db);
  await sql`
    update webhook_deliveries d
    set sequence = ordered.sequence
    from (select id, row_number() over (order by created_at, id) as sequence from webhook_deliveries where status = 'pending') ordered
    where d.id = ordered.id
  `.execute(db);
  await sql`select setval('webhook_deliveries_sequence', greatest(1, (select count(*) from webhook_deliveries where status = 'pending')))`.execute(db);
  // A biller's backlog per endpoint, in the order it goes out: read a few rows at a time.
  await sql`
    create index webhook_deliveries_backlog_idx on webhook_deliveries (endpoint_id, (coalesce(next_attempt_at, created_at)), sequence)
    where status = 'pending' and job_id is null
  `.execute(db);
  // What each endpoint (and so each biller) has admitted now.
  await sql`create index webhook_deliveries_admitted_idx on webhook_deliveries (endpoint_id) where job_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table webhook_deliveries
      drop column job_id,
      drop column admitted_at,
      drop column admissions,
      drop column attempts_before_run,
      drop column sequence;
  `.execute(db);
  await sql`drop sequence if exists webhook_deliveries_sequence`.execute(db);
}
