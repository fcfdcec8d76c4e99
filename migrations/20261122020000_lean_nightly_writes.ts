import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The nightly lock writes about four rows per payment request (its event, its line link, its share of
// a deduction line and of an instruction item) and updates the request itself. Measured on the nightly
// benchmark, foreign-key checks were a quarter of the lock's time, and worse: each connection caches
// the plan of a check the first time it runs, when these tables are still empty, so the cached plan
// is a sequential scan and every later check reads the whole (growing) table. This migration keeps
// the nightly write path to what guards against other writers:
//
// - Snapshot, lines, line links and instruction items are written by one set-based statement each,
//   inside the transaction that holds the payroll's row lock, from rows that transaction has just read
//   or written; snapshots are superseded, never deleted, and payment requests and employees are never
//   deleted. Their foreign keys re-checked, row by row, what the statement itself guarantees. The
//   lock tests assert that nothing is orphaned.
// - Events are the outbox: written by the service that makes the change, for the biller whose resource
//   changed, and never deleted.
// - events (biller_client_id, sequence) was never read: event pages go by (created_at, id).
// - The (schedule_id, instalment_number) unique constraint indexed every request, scheduled or not, so
//   every status change wrote an entry for it; a partial unique index does the same job for scheduled
//   requests only and also serves lookups by schedule.

const droppedForeignKeys = [
  ['deduction_lines', 'deduction_lines_snapshot_id_fkey', 'foreign key (snapshot_id) references deduction_snapshots (id) on delete cascade'],
  ['deduction_lines', 'deduction_lines_employee_id_fkey', 'foreign key (employee_id) references employees (id)'],
  ['deduction_line_payments', 'deduction_line_payments_snapshot_id_fkey', 'foreign key (snapshot_id) references deduction_snapshots (id) on delete cascade'],
  ['deduction_line_payments', 'deduction_line_payments_line_id_fkey', 'foreign key (line_id) references deduction_lines (id) on delete cascade'],
  ['deduction_line_payments', 'deduction_line_payments_payment_request_id_fkey', 'foreign key (payment_request_id) references payment_requests (id)'],
  ['instruction_items', 'instruction_items_instruction_file_id_fkey', 'foreign key (instruction_file_id) references instruction_files (id) on delete cascade'],
  ['instruction_items', 'instruction_items_employee_id_fkey', 'foreign key (employee_id) references employees (id)'],
  ['events', 'events_biller_client_id_fkey', 'foreign key (biller_client_id) references clients (id)'],
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, constraint] of droppedForeignKeys) {
    await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(constraint)}`.execute(db);
  }
  await sql`drop index events_biller_page_idx`.execute(db);
  await sql`alter table payment_requests drop constraint payment_requests_schedule_id_instalment_number_key`.execute(db);
  await sql`drop index payment_requests_schedule_idx`.execute(db);
  await sql`
    create unique index payment_requests_schedule_instalment_key on payment_requests (schedule_id, instalment_number)
    where schedule_id is not null
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index payment_requests_schedule_instalment_key`.execute(db);
  await sql`create index payment_requests_schedule_idx on payment_requests (schedule_id) where schedule_id is not null`.execute(db);
  await sql`
    alter table payment_requests add constraint payment_requests_schedule_id_instalment_number_key unique (schedule_id, instalment_number)
  `.execute(db);
  await sql`create index events_biller_page_idx on events (biller_client_id, sequence desc)`.execute(db);
  for (const [table, constraint, definition] of droppedForeignKeys) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.ref(constraint)} ${sql.raw(definition)}`.execute(db);
  }
}
