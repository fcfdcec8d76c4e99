import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// A confirmation stores one deduction record per employee of a pay date in one statement (500,000 on
// the reconciliation benchmark), and each record's four foreign keys ran a query per row that also
// share-locked the referenced row. Two of them hit rows every concurrent confirmation shares (the
// provider's client row), and the check on confirmations cached, in each connection, the plan it made
// when that table was still empty: a sequential scan, so every record read every confirmation so far.
// The confirmation phase of the benchmark spent most of its 177 s in those checks.
//
// The keys only re-checked what both writers (the employee push and the confirmation submission)
// establish in the same transaction before inserting: the pay date is locked by that transaction, the
// employee was found employed on the payroll, the receiving client is the authenticated caller, and the
// confirmation row was inserted just before its records. None of those rows is ever deleted.
// deductions-in's findBrokenRecordLinks checks more than the keys did (the employee is on the payroll,
// the pay period is the pay date's, the confirmation is for the same payroll and pay date); the push
// and confirmation tests assert it finds nothing.

const droppedForeignKeys = [
  ['deduction_records', 'deduction_records_employee_id_fkey', 'foreign key (employee_id) references employees (id)'],
  ['deduction_records', 'deduction_records_confirmation_id_fkey', 'foreign key (confirmation_id) references confirmations (id)'],
  ['deduction_records', 'deduction_records_received_by_client_id_fkey', 'foreign key (received_by_client_id) references clients (id)'],
  ['deduction_records', 'deduction_records_payroll_id_pay_date_fkey', 'foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)'],
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, constraint] of droppedForeignKeys) {
    await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(constraint)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table, constraint, definition] of droppedForeignKeys) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.ref(constraint)} ${sql.raw(definition)}`.execute(db);
  }
}
