import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Reconciliation writes, per payment request and pay date, an attempt and one or two ledger entries;
// the payout run then links every entry to its payout and writes one payout item per entry: about a
// million rows each at full scale. Every foreign key on those rows ran a query per row that also took
// a share lock on the referenced row, a write of its own: on the reconciliation benchmark the checks
// were about a third of the cost of inserting attempts and ledger entries. And each connection caches
// the plan of a check the first time it runs; with collection_attempts still empty then (the first
// reconciliation after a deployment, or any run with autovacuum off) the cached plan is a sequential
// scan, and every later check read the whole, growing table.
//
// The keys dropped here only re-checked what the writing statement itself guarantees:
// - collection_attempts -> payment_requests, pay_dates: reconciliation writes an attempt for a payment
//   request it has just read, of the pay date it holds locked (for update) in the same transaction;
// - ledger_entries -> collection_attempts, payment_requests, clients: written by the same statement as
//   the attempt they post for, from the same payment row (its id and biller);
// - ledger_entries -> payouts, payout_items -> payouts, ledger_entries, payment_requests: the payout
//   run inserts the payout, then one statement links the entries and writes the items from them.
// None of the referenced rows is ever deleted (payment requests are cancelled, payouts fail, clients are
// disabled). ledger-repository's findBrokenLedgerLinks checks more than these keys did (an entry's
// payment and biller are its attempt's, an item's entry is in the item's payout); the reconciliation
// and payout tests assert it finds nothing.

const droppedForeignKeys = [
  ['collection_attempts', 'collection_attempts_payment_request_id_fkey', 'foreign key (payment_request_id) references payment_requests (id)'],
  ['collection_attempts', 'collection_attempts_payroll_id_pay_date_fkey', 'foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)'],
  ['ledger_entries', 'ledger_entries_biller_client_id_fkey', 'foreign key (biller_client_id) references clients (id)'],
  ['ledger_entries', 'ledger_entries_payment_request_id_fkey', 'foreign key (payment_request_id) references payment_requests (id)'],
  ['ledger_entries', 'ledger_entries_collection_attempt_id_fkey', 'foreign key (collection_attempt_id) references collection_attempts (id)'],
  ['ledger_entries', 'ledger_entries_payout_id_fkey', 'foreign key (payout_id) references payouts (id)'],
  ['payout_items', 'payout_items_payout_id_fkey', 'foreign key (payout_id) references payouts (id)'],
  ['payout_items', 'payout_items_ledger_entry_id_fkey', 'foreign key (ledger_entry_id) references ledger_entries (id)'],
  ['payout_items', 'payout_items_payment_request_id_fkey', 'foreign key (payment_request_id) references payment_requests (id)'],
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
