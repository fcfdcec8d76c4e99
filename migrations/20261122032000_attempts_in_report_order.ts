import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// The reconciliation CSV lists a pay date's attempts in (pay_date, payroll_id, id) order: a million rows
// for a large pay date, each with its payment request's employee, mandate, biller and currency.
//
// - Indexed only by (payroll_id, pay_date), the attempts had to be read in full and sorted (spilling to
//   disk) before the first row came out, so the export waited for the whole query and then for its own
//   formatting. Indexed in report order they stream from the first fetch, and Postgres reads the next
//   batch while the previous one is written. The index still answers the other lookups (a payroll's
//   attempts of one pay date), so it replaces the old one rather than adding a fifth.
// - The payment's identity was a lookup per row into payment_requests, a table several times larger than
//   the attempts, updated in place by every status change: on the benchmark those million random reads
//   were most of the export's 19 s of database time. A payment request never changes its employee,
//   mandate, biller or currency, so each attempt now carries them from the moment it is written; the
//   ledger audit (findBrokenLedgerLinks) checks that they agree with the payment.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index collection_attempts_pay_date_idx`.execute(db);
  await sql`
    alter table collection_attempts
      add column employee_id uuid, add column mandate_id uuid, add column biller_client_id uuid, add column currency char(3)
  `.execute(db);
  await sql`
    update collection_attempts a
    set employee_id = pr.employee_id, mandate_id = pr.mandate_id, biller_client_id = pr.biller_client_id, currency = pr.currency
    from payment_requests pr where pr.id = a.payment_request_id
  `.execute(db);
  await sql`
    alter table collection_attempts
      alter column employee_id set not null, alter column mandate_id set not null,
      alter column biller_client_id set not null, alter column currency set not null
  `.execute(db);
  await sql`create index collection_attempts_pay_date_idx on collection_attempts (pay_date, payroll_id, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index collection_attempts_pay_date_idx`.execute(db);
  await sql`
    alter table collection_attempts drop column employee_id, drop column mandate_id, drop column biller_client_id, drop column currency
  `.execute(db);
  await sql`create index collection_attempts_pay_date_idx on collection_attempts (payroll_id, pay_date)`.execute(db);
}
