import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A remittance's events (received, overdue) go to the billers whose collections its payroll pay date's
// current snapshot carries. Finding them went through every line payment of the snapshot to its payment
// request: a million rows for a night's ten thousand remittances, 2.5 s of a statement import at the
// benchmark's scale. The freeze now writes them, one row per snapshot and biller, in the statement that
// writes the line payments they come from. No foreign keys, like the line payments: the same statement
// writes the snapshot, and snapshots, payment requests and clients are never deleted.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table snapshot_billers (
      snapshot_id uuid not null,
      biller_client_id uuid not null,
      primary key (snapshot_id, biller_client_id)
    );
    insert into snapshot_billers (snapshot_id, biller_client_id)
    select distinct lp.snapshot_id, pr.biller_client_id
    from deduction_line_payments lp join payment_requests pr on pr.id = lp.payment_request_id;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table snapshot_billers`.execute(db);
}
