import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A sandbox of a live biller: its twin client (clients.sandbox), the simulated payroll provider
// whose employers, payrolls and employees it sees (payroll_providers.sandbox) and that provider's own
// client, which the simulation operations act as when they pull deduction data and confirm it.
// One per live biller, so `sandbox create` run again finds the one it made.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sandboxes (
      id uuid primary key default gen_random_uuid(),
      live_biller_client_id uuid not null unique references clients (id),
      biller_client_id uuid not null unique references clients (id),
      payroll_provider_id uuid not null unique references payroll_providers (id),
      provider_client_id uuid not null unique references clients (id),
      seed text not null,
      created_by text not null,
      created_at timestamptz not null default now(),
      check (live_biller_client_id <> biller_client_id)
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table sandboxes`.execute(db);
}
