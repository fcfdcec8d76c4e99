import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A webhook endpoint that keeps failing is left alone for a while (a circuit breaker) instead of being
// sent every retry of every delivery, which held the shared delivery slots for other billers:
//
// - consecutive_failures: failed attempts since the endpoint's last success.
// - circuit_open_until: while set, deliveries to the endpoint wait until then (open), and one of them
//   then probes it (half-open); null when closed. Always written from the application's clock.
// - circuit_open_ms: how long the last opening was; a failed probe doubles it, up to a bound.
//
// Existing endpoints start closed with no failures counted: their failing_since streak stays as it
// was, and the next failed attempts count from zero.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table webhook_endpoints
      add column consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
      add column circuit_open_until timestamptz,
      add column circuit_open_ms integer check (circuit_open_ms >= 0),
      add check ((circuit_open_until is null) = (circuit_open_ms is null));
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table webhook_endpoints
      drop column consecutive_failures,
      drop column circuit_open_until,
      drop column circuit_open_ms;
  `.execute(db);
}
