import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Cash: bank statements of our collection accounts, the credits on them, their matches to payroll pay
// dates' requested payments, and each payroll pay date's remittance.
//
// - bank_statements: one per file imported. (collection account, format, statement id) is the bank's
//   identity of the statement and content_sha256 the file's: the same file again changes nothing, the
//   same id with other content is refused.
// - bank_credits: the credit entries. bank_reference is the bank's own reference of the entry
//   (AcctSvcrRef, else NtryRef; the CSV layout's `bank_reference`), unique per account, so a credit an
//   intraday camt.054 notified and the end-of-day camt.053 repeats is kept once. Debits are not kept.
//   matched_amount is the sum of the credit's live matches, never more than the credit.
// - remittance_matches: what part of a credit pays which payroll pay date, and by which rule. A match
//   is never deleted: unmatching stamps it (who, when, why), so the history of every decision stays.
// - remittances: one per payroll pay date that requested a payment: what the employer owes (the
//   deducted total once payroll has reported, the requested total before), what has been received,
//   the status, and when it is late.
// - remittance.received and remittance.overdue join the event types (to the billers whose collections
//   the remittance carries).
// - ledger_entries.funded_at: when cash (or trust in the employer, employers.payout_funding
//   'deducted') made the entry payable; payouts take only funded entries.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table bank_statements (
      id uuid primary key,
      collection_account_id uuid not null references collection_accounts (id),
      format text not null check (format in ('camt.053', 'camt.054', 'csv')),
      statement_id text not null check (length(statement_id) between 1 and 140),
      content_sha256 bytea not null check (length(content_sha256) = 32),
      file_name text,
      currency text not null,
      credits integer not null check (credits >= 0),
      credits_total bigint not null check (credits_total >= 0),
      credits_already_imported integer not null check (credits_already_imported >= 0),
      debits_ignored integer not null check (debits_ignored >= 0),
      imported_at timestamptz not null default now(),
      imported_by text not null,
      unique (collection_account_id, format, statement_id)
    );

    create table bank_credits (
      id uuid primary key,
      bank_statement_id uuid not null references bank_statements (id),
      collection_account_id uuid not null references collection_accounts (id),
      bank_reference text not null check (length(bank_reference) between 1 and 140),
      amount bigint not null check (amount > 0),
      currency text not null,
      booking_date date not null,
      value_date date,
      remittance_information text,
      debtor_name text,
      debtor_account text,
      matched_amount bigint not null default 0 check (matched_amount >= 0 and matched_amount <= amount),
      created_at timestamptz not null default now(),
      unique (collection_account_id, bank_reference)
    );
    create index bank_credits_unmatched_idx on bank_credits (booking_date, id) where matched_amount < amount;
    create index bank_credits_statement_idx on bank_credits (bank_statement_id);

    create table remittances (
      id uuid not null unique,
      payroll_id uuid not null references payrolls (id),
      pay_date date not null,
      employer_id uuid not null references employers (id),
      currency text not null,
      payment_reference text not null,
      requested bigint not null check (requested >= 0),
      deducted bigint check (deducted >= 0),
      expected bigint not null check (expected >= 0),
      received bigint not null default 0 check (received >= 0),
      status text not null check (status in ('expected', 'received', 'short', 'over', 'late')),
      due_date date not null,
      overdue_at timestamptz,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (payroll_id, pay_date)
    );
    create index remittances_reference_idx on remittances (payment_reference);
    create index remittances_open_idx on remittances (due_date) where status in ('expected', 'short', 'late');

    create table remittance_matches (
      id uuid primary key,
      bank_credit_id uuid not null references bank_credits (id),
      payroll_id uuid not null,
      pay_date date not null,
      amount bigint not null check (amount > 0),
      rule text not null check (rule in ('exact', 'normalised', 'many_to_one', 'one_to_many', 'tolerance', 'manual')),
      flagged boolean not null default false,
      matched_at timestamptz not null default now(),
      matched_by text not null,
      unmatched_at timestamptz,
      unmatched_by text,
      unmatch_reason text,
      foreign key (payroll_id, pay_date) references remittances (payroll_id, pay_date),
      check ((unmatched_at is null) = (unmatched_by is null))
    );
    create index remittance_matches_remittance_idx on remittance_matches (payroll_id, pay_date) where unmatched_at is null;
    create index remittance_matches_credit_idx on remittance_matches (bank_credit_id) where unmatched_at is null;

    alter table ledger_entries add column funded_at timestamptz;
    create index ledger_entries_unfunded_idx on ledger_entries (collection_attempt_id) where funded_at is null and payout_id is null;
    alter table employers add column payout_funding text check (payout_funding in ('received', 'deducted'));

    alter table events drop constraint events_type_check;
    alter table events add constraint events_type_check check (type in ('mandate.created', 'mandate.updated',
      'payment_request.created', 'payment_request.updated', 'payout.created', 'employee.updated',
      'webhook_endpoint.disabled', 'remittance.received', 'remittance.overdue'));
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    delete from events where type in ('remittance.received', 'remittance.overdue');
    alter table events drop constraint events_type_check;
    alter table events add constraint events_type_check check (type in ('mandate.created', 'mandate.updated',
      'payment_request.created', 'payment_request.updated', 'payout.created', 'employee.updated',
      'webhook_endpoint.disabled'));
    alter table employers drop column payout_funding;
    alter table ledger_entries drop column funded_at;
    drop table remittance_matches;
    drop table remittances;
    drop table bank_credits;
    drop table bank_statements;
  `.execute(db);
}
