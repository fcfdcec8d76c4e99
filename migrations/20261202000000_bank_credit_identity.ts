import { type Kysely, sql } from 'kysely';

// Frozen in time: never import application code.
//
// Bank credits as real banks report them (src/cash/credit-identity.ts says the rules):
//
// - bank_credits loses its unique (account, bank_reference): banks reuse NtryRef from day to day, and
//   some reuse AcctSvcrRef within a file. A credit's identity is its account, booking date, amount and
//   the bank's references, kept apart (account_servicer_reference, entry_reference,
//   transaction_references); an entry of a batch the bank detailed keeps the lump sum it belongs to.
//   booked_statement_id: the camt.053 (or CSV) that booked it; null while only a camt.054 notified it.
//   state: open (the rules may match it), held (a person must look first: it conflicts with a known
//   credit, or it returns a debit of ours), set_aside (a person said it is no remittance, with a reason),
//   reversed (the bank took it back).
// - bank_statement_entries: what the import made of each entry of a statement (new, already known,
//   superseded, conflicting, a reversal, held, a debit, unusable), so every entry of every file is
//   accounted for, and an unresolved reversal waits there for a person.
// - bank_statements: one row per statement and page (a file may hold several statements; a paginated
//   statement comes in pages), with its sequence numbers, its balances (a paginated statement's are
//   checked once its pages are all in), the digest of its parsed content and what the integrity checks found.
// - remittances.shortfall: what was paid out of a pay date beyond what it has received, after the bank
//   reversed a credit already paid out: owed back, shown with status 'shortfall'.
// - remittance.reversed joins the event types.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table bank_statements
      add column page_number integer not null default 1 check (page_number >= 1),
      add column last_page boolean not null default true,
      add column electronic_sequence_number text check (length(electronic_sequence_number) <= 40),
      add column legal_sequence_number text check (length(legal_sequence_number) <= 40),
      add column parsed_sha256 bytea check (length(parsed_sha256) = 32),
      add column balances jsonb not null default '[]'::jsonb,
      add column integrity_findings jsonb not null default '[]'::jsonb,
      add column entry_outcomes jsonb not null default '{}'::jsonb;
    alter table bank_statements drop constraint bank_statements_collection_account_id_format_statement_id_key;
    alter table bank_statements add constraint bank_statements_identity_key unique (collection_account_id, format, statement_id, page_number);

    alter table bank_credits drop constraint bank_credits_collection_account_id_bank_reference_key;
    alter table bank_credits
      add column account_servicer_reference text check (length(account_servicer_reference) <= 140),
      add column entry_reference text check (length(entry_reference) <= 140),
      add column transaction_references text[] not null default '{}',
      add column batch_amount bigint check (batch_amount > 0),
      add column batch_part integer,
      add column batch_parts integer,
      add column booked_statement_id uuid references bank_statements (id),
      add column state text not null default 'open' check (state in ('open', 'held', 'set_aside', 'reversed')),
      add column state_reason text check (length(state_reason) <= 500),
      add column set_aside_category text check (set_aside_category in ('not_a_remittance', 'bank_interest', 'returned_to_sender', 'duplicate', 'other')),
      add column state_changed_at timestamptz,
      add column state_changed_by text,
      add constraint bank_credits_batch_check check ((batch_amount is null) = (batch_part is null) and (batch_part is null) = (batch_parts is null)
                                                     and (batch_part is null or batch_part between 1 and batch_parts)),
      add constraint bank_credits_set_aside_check check ((state = 'set_aside') = (set_aside_category is not null));
    -- What was known before: the one reference kept, as the bank's own; every credit was booked by its statement
    -- except those only a camt.054 reported.
    update bank_credits c set account_servicer_reference = c.bank_reference,
      booked_statement_id = case when s.format = 'camt.054' then null else s.id end
    from bank_statements s where s.id = c.bank_statement_id;
    create index bank_credits_identity_idx on bank_credits (collection_account_id, booking_date);
    drop index bank_credits_unmatched_idx;
    create index bank_credits_unmatched_idx on bank_credits (booking_date, id) where matched_amount < amount and state in ('open', 'held');

    create table bank_statement_entries (
      id uuid primary key,
      bank_statement_id uuid not null references bank_statements (id),
      entry_index integer not null check (entry_index >= 0),
      direction text not null check (direction in ('credit', 'debit')),
      amount bigint not null check (amount >= 0),
      currency text not null,
      booking_date date,
      bank_reference text not null,
      account_servicer_reference text check (length(account_servicer_reference) <= 140),
      entry_reference text check (length(entry_reference) <= 140),
      outcome text not null check (outcome in ('new', 'already_known', 'superseded', 'conflicting', 'reversal', 'unresolved_reversal', 'held', 'debit', 'unusable')),
      bank_credit_id uuid references bank_credits (id),
      detail text,
      resolved_at timestamptz,
      resolved_by text,
      unique (bank_statement_id, entry_index),
      -- Every credit entry names its credit, a reversal the credit it took back; a reversal already recorded
      -- names the credit the first one took back, none while that one waits for a person.
      check (outcome not in ('new', 'superseded', 'conflicting', 'reversal', 'held') or bank_credit_id is not null),
      check (outcome <> 'already_known' or direction = 'debit' or bank_credit_id is not null),
      check (outcome not in ('debit', 'unusable') or bank_credit_id is null)
    );
    create index bank_statement_entries_credit_idx on bank_statement_entries (bank_credit_id) where bank_credit_id is not null;
    -- A reversal a camt.054 notified and the camt.053 books again is one reversal: found by day and amount.
    create index bank_statement_entries_reversals_idx on bank_statement_entries (booking_date, amount) where outcome in ('reversal', 'unresolved_reversal');
    create index bank_statement_entries_unresolved_idx on bank_statement_entries (bank_statement_id) where outcome = 'unresolved_reversal' and resolved_at is null;

    -- A pairing a person took back is never made again by a rule: the matching reads these for the credits it tries.
    create index remittance_matches_unmatched_idx on remittance_matches (bank_credit_id) where unmatched_at is not null;

    alter table remittances add column shortfall bigint not null default 0 check (shortfall >= 0);
    -- The references of settled remittances, a refresh window's worth, are read on every matching run. Not a
    -- partial index on received: matching updates it, and such an index would make those updates non-HOT.
    create index remittances_pay_date_idx on remittances (pay_date);
    alter table remittances drop constraint remittances_status_check;
    alter table remittances add constraint remittances_status_check check (status in ('expected', 'received', 'short', 'over', 'late', 'shortfall'));

    alter table events drop constraint events_type_check;
    alter table events add constraint events_type_check check (type in ('mandate.created', 'mandate.updated',
      'payment_request.created', 'payment_request.updated', 'payout.created', 'employee.updated',
      'webhook_endpoint.disabled', 'remittance.received', 'remittance.overdue', 'remittance.reversed'));
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    delete from events where type = 'remittance.reversed';
    alter table events drop constraint events_type_check;
    alter table events add constraint events_type_check check (type in ('mandate.created', 'mandate.updated',
      'payment_request.created', 'payment_request.updated', 'payout.created', 'employee.updated',
      'webhook_endpoint.disabled', 'remittance.received', 'remittance.overdue'));
    update remittances set status = case when received = expected then 'received' when received > expected then 'over'
                                         when received > 0 then 'short' else 'late' end where status = 'shortfall';
    alter table remittances drop constraint remittances_status_check;
    alter table remittances add constraint remittances_status_check check (status in ('expected', 'received', 'short', 'over', 'late'));
    drop index remittances_pay_date_idx;
    alter table remittances drop column shortfall;
    drop index remittance_matches_unmatched_idx;
    drop table bank_statement_entries;
    drop index bank_credits_unmatched_idx;
    create index bank_credits_unmatched_idx on bank_credits (booking_date, id) where matched_amount < amount;
    drop index bank_credits_identity_idx;
    alter table bank_credits drop constraint bank_credits_set_aside_check, drop constraint bank_credits_batch_check,
      drop column state_changed_by, drop column state_changed_at, drop column set_aside_category, drop column state_reason,
      drop column state, drop column booked_statement_id, drop column batch_parts, drop column batch_part, drop column batch_amount,
      drop column transaction_references, drop column entry_reference, drop column account_servicer_reference;
    alter table bank_credits add constraint bank_credits_collection_account_id_bank_reference_key unique (collection_account_id, bank_reference);
    alter table bank_statements drop constraint bank_statements_identity_key;
    alter table bank_statements add constraint bank_statements_collection_account_id_format_statement_id_key unique (collection_account_id, format, statement_id);
    alter table bank_statements drop column entry_outcomes, drop column integrity_findings, drop column balances, drop column parsed_sha256,
      drop column legal_sequence_number, drop column electronic_sequence_number, drop column last_page, drop column page_number;
  `.execute(db);
}
