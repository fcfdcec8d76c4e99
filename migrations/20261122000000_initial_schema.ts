import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must never import application code. Later changes get a new migration.
//
// Conventions: money is bigint minor units beside a char(3) ISO 4217 code; pay dates are `date`;
// instants are timestamptz. Unique constraints, not application checks, stop double effects.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`

    -- Who calls us -------------------------------------------------------------------------------

    create table payroll_providers (
      id uuid primary key default gen_random_uuid(),
      name text not null,
      -- Base URL of a provider implementing the reference interface; null: instruction files only.
      api_base_url text,
      api_token_url text,
      api_client_id text,
      api_client_secret text,
      lead_time_working_days integer not null default 2 check (lead_time_working_days between 0 and 30),
      created_at timestamptz not null default now()
    );

    create table clients (
      id uuid primary key default gen_random_uuid(),
      name text not null,
      role text not null check (role in ('biller', 'payroll_provider', 'operator')),
      secret_hash text not null,
      scopes text[] not null default '{}',
      payroll_provider_id uuid references payroll_providers (id),
      created_at timestamptz not null default now(),
      disabled_at timestamptz,
      check ((role = 'payroll_provider') = (payroll_provider_id is not null))
    );

    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      client_id uuid not null references clients (id) on delete cascade,
      key_hash text not null unique,
      key_prefix text not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz
    );
    create index api_keys_client_idx on api_keys (client_id);

    -- Employers, payrolls and their calendars ----------------------------------------------------

    create table bank_holidays (
      holiday_date date primary key,
      name text not null
    );

    create table employers (
      id uuid primary key default gen_random_uuid(),
      payroll_provider_id uuid not null references payroll_providers (id),
      external_id text not null,
      name text not null,
      sic_code text,
      industry_name text,
      salary_deduction_opt_in_status text not null default 'pending'
        check (salary_deduction_opt_in_status in ('pending', 'opted_in', 'opted_out')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (payroll_provider_id, external_id)
    );

    -- Our account that employers remit deducted money into, per currency.
    create table collection_accounts (
      id uuid primary key default gen_random_uuid(),
      currency char(3) not null,
      account_number text not null,
      sort_code text not null check (sort_code ~ '^[0-9]{2}-[0-9]{2}-[0-9]{2}$'),
      account_holder_name text not null,
      active boolean not null default true,
      created_at timestamptz not null default now()
    );
    create unique index collection_accounts_one_active_per_currency
      on collection_accounts (currency) where active;

    create table payrolls (
      id uuid primary key default gen_random_uuid(),
      employer_id uuid not null references employers (id),
      payroll_provider_id uuid not null references payroll_providers (id),
      external_id text not null,
      name text not null,
      payment_run_frequency text not null default 'unknown'
        check (payment_run_frequency in ('weekly', 'fortnightly', 'four_weekly', 'monthly', 'unknown')),
      currency char(3) not null default 'GBP',
      calendar_synced_at timestamptz,
      created_at timestamptz not null default now(),
      unique (payroll_provider_id, external_id)
    );
    create index payrolls_employer_idx on payrolls (employer_id);

    create table pay_dates (
      payroll_id uuid not null references payrolls (id),
      pay_date date not null,
      payroll_cutoff_date date not null,
      pay_period text not null check (pay_period ~ '^[0-9]+-[0-9]+$'),
      lock_date date not null,
      locked_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (payroll_id, pay_date),
      unique (payroll_id, pay_period),
      check (payroll_cutoff_date <= pay_date),
      check (lock_date <= payroll_cutoff_date)
    );
    -- The nightly run asks: which pairs have a lock date on or before today and are not locked yet.
    create index pay_dates_due_for_lock_idx on pay_dates (lock_date) where locked_at is null;

    -- People ---------------------------------------------------------------------------------------

    create table employees (
      id uuid primary key default gen_random_uuid(),
      payroll_provider_id uuid not null references payroll_providers (id),
      national_registration_number text,
      date_of_birth date,
      given_name text not null,
      family_name text not null,
      email_address text,
      phone_number text,
      postal_code text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index employees_nrn_per_provider
      on employees (payroll_provider_id, national_registration_number)
      where national_registration_number is not null;
    create index employees_lookup_idx on employees (lower(family_name), date_of_birth);

    create table employments (
      id uuid primary key default gen_random_uuid(),
      employee_id uuid not null references employees (id),
      employer_id uuid not null references employers (id),
      payroll_id uuid not null references payrolls (id),
      payroll_reference text not null,
      start_date date,
      end_date date,
      employment_status text not null default 'active'
        check (employment_status in ('active', 'leaver', 'unknown')),
      contract_type text not null default 'unknown'
        check (contract_type in ('full_time', 'part_time', 'fixed_term', 'zero_hours', 'unknown')),
      annualised_salary bigint check (annualised_salary >= 0),
      currency char(3) not null default 'GBP',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (employee_id, payroll_id),
      unique (payroll_id, payroll_reference)
    );
    create index employments_payroll_idx on employments (payroll_id);

    -- Billers' side --------------------------------------------------------------------------------

    create table consumers (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      given_name text not null,
      family_name text not null,
      email_address text,
      phone_number text,
      date_of_birth date,
      postal_code text,
      national_registration_number text,
      external_reference text,
      created_at timestamptz not null default now()
    );
    create index consumers_biller_idx on consumers (biller_client_id);

    create table beneficiary_accounts (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      currency char(3) not null,
      account_number text not null,
      sort_code text not null check (sort_code ~ '^[0-9]{2}-[0-9]{2}-[0-9]{2}$'),
      account_holder_name text not null,
      active boolean not null default true,
      created_at timestamptz not null default now()
    );
    create unique index beneficiary_accounts_one_active
      on beneficiary_accounts (biller_client_id, currency) where active;

    create table mandates (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      consumer_id uuid not null references consumers (id),
      employee_id uuid not null,
      payroll_id uuid not null,
      status text not null default 'pending_enablement'
        check (status in ('pending_enablement', 'active', 'suspended', 'revoked', 'cancelled', 'expired', 'failed')),
      status_reason text,
      currency char(3) not null default 'GBP',
      -- MandateLimitations: caps applied when a pay date is locked.
      max_amount_per_pay_date bigint check (max_amount_per_pay_date > 0),
      max_total_amount bigint check (max_total_amount > 0),
      valid_from date,
      valid_to date,
      authorisation_source jsonb not null,
      reference text,
      metadata jsonb,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      revoked_at timestamptz,
      foreign key (employee_id, payroll_id) references employments (employee_id, payroll_id),
      check (valid_to is null or valid_from is null or valid_from <= valid_to)
    );
    create index mandates_biller_page_idx on mandates (biller_client_id, created_at desc, id desc);
    create index mandates_employment_idx on mandates (payroll_id, employee_id);

    create table schedules (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      mandate_id uuid not null references mandates (id),
      status text not null default 'active' check (status in ('active', 'completed', 'cancelled', 'errored')),
      currency char(3) not null,
      total_amount bigint not null check (total_amount > 0),
      instalment_count integer not null check (instalment_count > 0),
      metadata jsonb,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index schedules_biller_page_idx on schedules (biller_client_id, created_at desc, id desc);

    create table payment_requests (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      mandate_id uuid not null references mandates (id),
      schedule_id uuid references schedules (id),
      instalment_number integer,
      payroll_id uuid not null references payrolls (id),
      employee_id uuid not null references employees (id),
      status text not null default 'pending'
        check (status in ('pending', 'instructed', 'collected', 'paid_out', 'cancelled', 'failed', 'partially_collected')),
      currency char(3) not null,
      amount bigint not null check (amount > 0),
      collected_amount bigint not null default 0,
      paid_out_amount bigint not null default 0,
      attempts integer not null default 0 check (attempts >= 0),
      due_date date,
      allow_post_due_date_deduction boolean not null default false,
      target_pay_date date not null,
      metadata jsonb,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      cancelled_at timestamptz,
      foreign key (payroll_id, target_pay_date) references pay_dates (payroll_id, pay_date),
      check (collected_amount between 0 and amount),
      check (paid_out_amount between 0 and collected_amount),
      check ((schedule_id is null) = (instalment_number is null)),
      unique (schedule_id, instalment_number)
    );
    -- The lock job's query: pending requests targeted at one (payroll, pay date).
    create index payment_requests_lock_idx on payment_requests (payroll_id, target_pay_date)
      where status = 'pending';
    create index payment_requests_biller_page_idx on payment_requests (biller_client_id, created_at desc, id desc);
    create index payment_requests_mandate_idx on payment_requests (mandate_id);
    create index payment_requests_schedule_idx on payment_requests (schedule_id) where schedule_id is not null;

    -- The frozen deduction data, one current snapshot per payroll pay date ------------------------

    create table deduction_snapshots (
      id uuid primary key default gen_random_uuid(),
      payroll_id uuid not null,
      pay_date date not null,
      pay_period text not null,
      snapshot_version integer not null check (snapshot_version > 0),
      status text not null default 'locked' check (status in ('locked', 'confirmed', 'reconciled', 'superseded')),
      currency char(3) not null,
      total_amount bigint not null check (total_amount >= 0),
      employee_count integer not null check (employee_count >= 0),
      locked_at timestamptz not null default now(),
      superseded_at timestamptz,
      superseded_by uuid references deduction_snapshots (id),
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date),
      unique (payroll_id, pay_date, snapshot_version)
    );
    create unique index deduction_snapshots_one_current
      on deduction_snapshots (payroll_id, pay_date) where status <> 'superseded';

    create table deduction_lines (
      id uuid primary key default gen_random_uuid(),
      snapshot_id uuid not null references deduction_snapshots (id) on delete cascade,
      employee_id uuid not null references employees (id),
      payroll_reference text not null,
      requested_amount bigint not null check (requested_amount > 0),
      currency char(3) not null,
      payment_reference text not null,
      unique (snapshot_id, employee_id),
      unique (snapshot_id, payment_reference)
    );

    -- Which payment requests make up each line, and how much of each was asked for this pay date.
    create table deduction_line_payments (
      snapshot_id uuid not null references deduction_snapshots (id) on delete cascade,
      line_id uuid not null references deduction_lines (id) on delete cascade,
      payment_request_id uuid not null references payment_requests (id),
      requested_amount bigint not null check (requested_amount > 0),
      primary key (snapshot_id, payment_request_id)
    );
    create index deduction_line_payments_line_idx on deduction_line_payments (line_id);

    create table requested_payments (
      id uuid primary key default gen_random_uuid(),
      snapshot_id uuid not null references deduction_snapshots (id) on delete cascade,
      payment_reference text not null,
      payment_amount bigint not null check (payment_amount > 0),
      currency char(3) not null,
      account_number text not null,
      sort_code text not null check (sort_code ~ '^[0-9]{2}-[0-9]{2}-[0-9]{2}$'),
      account_holder_name text not null,
      unique (snapshot_id, payment_reference)
    );

    -- Operator re-runs of one payroll pay date, with who, when and why.
    create table reruns (
      id uuid primary key default gen_random_uuid(),
      payroll_id uuid not null,
      pay_date date not null,
      reason text not null check (length(reason) > 0),
      requested_by text not null,
      requested_at timestamptz not null default now(),
      previous_snapshot_id uuid references deduction_snapshots (id),
      new_snapshot_id uuid references deduction_snapshots (id),
      completed_at timestamptz,
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)
    );

    -- Instruction files -------------------------------------------------------------------------

    create table instruction_files (
      id uuid primary key default gen_random_uuid(),
      snapshot_id uuid not null unique references deduction_snapshots (id),
      payroll_id uuid not null,
      pay_date date not null,
      file_version integer not null check (file_version > 0),
      file_name text not null,
      content bytea not null,
      sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
      item_count integer not null check (item_count >= 0),
      created_at timestamptz not null default now(),
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date),
      unique (payroll_id, pay_date, file_version)
    );

    create table instruction_items (
      id uuid primary key default gen_random_uuid(),
      instruction_file_id uuid not null references instruction_files (id) on delete cascade,
      employee_id uuid not null references employees (id),
      payroll_reference text not null,
      amount bigint not null check (amount >= 0),
      previous_amount bigint check (previous_amount >= 0),
      currency char(3) not null,
      payment_reference text,
      pay_period text not null,
      action text not null check (action in ('new', 'amend', 'stop', 'continue')),
      unique (instruction_file_id, employee_id)
    );

    -- Outbound pushes of changed items to providers that have an API.
    create table employee_deduction_pushes (
      id uuid primary key default gen_random_uuid(),
      instruction_item_id uuid not null unique references instruction_items (id),
      payroll_id uuid not null references payrolls (id),
      employee_id uuid not null references employees (id),
      status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
      attempts integer not null default 0,
      last_error text,
      response jsonb,
      created_at timestamptz not null default now(),
      sent_at timestamptz
    );
    create index employee_deduction_pushes_pending_idx on employee_deduction_pushes (payroll_id)
      where status = 'pending';

    -- What payroll actually deducted ---------------------------------------------------------------

    create table confirmations (
      id uuid primary key default gen_random_uuid(),
      payroll_id uuid not null,
      pay_date date not null,
      deduction_data_id uuid not null references deduction_snapshots (id),
      submitted_by_client_id uuid not null references clients (id),
      total_amount bigint not null check (total_amount >= 0),
      employee_count integer not null,
      currency char(3) not null,
      received_at timestamptz not null default now(),
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)
    );

    -- Versioned per (payroll, pay period, employee): the highest version is the truth.
    create table deduction_records (
      id uuid primary key default gen_random_uuid(),
      payroll_id uuid not null,
      pay_period text not null,
      pay_date date not null,
      employee_id uuid not null references employees (id),
      record_id text not null,
      version bigint not null check (version >= 0),
      deduction_amount bigint not null check (deduction_amount >= 0),
      currency char(3) not null,
      leaver boolean not null default false,
      requested_payments jsonb not null default '[]',
      content_hash text not null,
      source text not null check (source in ('push', 'confirmation')),
      confirmation_id uuid references confirmations (id),
      received_by_client_id uuid not null references clients (id),
      received_at timestamptz not null default now(),
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date),
      unique (payroll_id, pay_period, employee_id, version)
    );
    create index deduction_records_latest_idx
      on deduction_records (payroll_id, pay_date, employee_id, version desc);

    -- Reconciliation, ledger and payouts -----------------------------------------------------------

    -- One attempt per payment request per pay date; a re-run of that pay date reuses it.
    create table collection_attempts (
      id uuid primary key default gen_random_uuid(),
      payment_request_id uuid not null references payment_requests (id),
      payroll_id uuid not null,
      pay_date date not null,
      attempt_number integer not null check (attempt_number > 0),
      requested_amount bigint not null check (requested_amount > 0),
      deducted_amount bigint,
      collected_amount bigint not null default 0 check (collected_amount >= 0),
      shortfall_amount bigint not null default 0 check (shortfall_amount >= 0),
      carried_to_pay_date date,
      outcome text check (outcome in ('collected', 'carried', 'failed', 'partially_collected')),
      push_version bigint,
      revision integer not null default 0,
      created_at timestamptz not null default now(),
      reconciled_at timestamptz,
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date),
      unique (payment_request_id, pay_date),
      unique (payment_request_id, attempt_number)
    );
    create index collection_attempts_pay_date_idx on collection_attempts (payroll_id, pay_date);

    create table reconciliation_exceptions (
      id uuid primary key default gen_random_uuid(),
      payroll_id uuid not null,
      pay_date date not null,
      employee_id uuid references employees (id),
      kind text not null check (kind in ('unexpected_employee', 'over_deduction', 'missing_confirmation')),
      amount bigint,
      currency char(3),
      record_version bigint,
      detail text not null,
      created_at timestamptz not null default now(),
      foreign key (payroll_id, pay_date) references pay_dates (payroll_id, pay_date)
    );
    create unique index reconciliation_exceptions_once
      on reconciliation_exceptions (payroll_id, pay_date, coalesce(employee_id, '00000000-0000-0000-0000-000000000000'::uuid), kind, coalesce(record_version, -1));

    create table payouts (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      currency char(3) not null,
      amount bigint not null check (amount > 0),
      status text not null default 'pending' check (status in ('pending', 'paid', 'failed')),
      payout_date date not null,
      reference text not null unique,
      account_number text not null,
      sort_code text not null check (sort_code ~ '^[0-9]{2}-[0-9]{2}-[0-9]{2}$'),
      account_holder_name text not null,
      failure_reason text,
      version integer not null default 1,
      created_at timestamptz not null default now(),
      paid_at timestamptz,
      failed_at timestamptz,
      unique (biller_client_id, currency, payout_date)
    );
    create index payouts_biller_page_idx on payouts (biller_client_id, created_at desc, id desc);

    -- Signed postings: collected money is positive, reversals negative. Unique per attempt, revision
    -- and kind, so re-reconciling the same revision can never post twice.
    create table ledger_entries (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      payment_request_id uuid not null references payment_requests (id),
      collection_attempt_id uuid not null references collection_attempts (id),
      revision integer not null,
      kind text not null check (kind in ('payment_collected', 'collection_reversed')),
      amount bigint not null check (amount <> 0),
      currency char(3) not null,
      pay_date date not null,
      payout_id uuid references payouts (id),
      created_at timestamptz not null default now(),
      check ((kind = 'payment_collected') = (amount > 0)),
      unique (collection_attempt_id, revision, kind)
    );
    create index ledger_entries_unpaid_idx on ledger_entries (biller_client_id, currency, pay_date)
      where payout_id is null;
    create index ledger_entries_payment_idx on ledger_entries (payment_request_id);

    create table payout_items (
      id uuid primary key default gen_random_uuid(),
      payout_id uuid not null references payouts (id),
      ledger_entry_id uuid not null unique references ledger_entries (id),
      payment_request_id uuid not null references payment_requests (id),
      kind text not null check (kind in ('payment_collected', 'collection_reversed')),
      amount bigint not null check (amount <> 0)
    );
    create index payout_items_payout_idx on payout_items (payout_id);

    -- Events (the outbox) and webhooks -------------------------------------------------------------

    create table events (
      id uuid primary key default gen_random_uuid(),
      sequence bigint generated always as identity unique,
      type text not null check (type in ('mandate.created', 'mandate.updated', 'payment_request.created',
        'payment_request.updated', 'payout.created', 'employee.updated', 'webhook_endpoint.disabled')),
      -- The biller this event belongs to; only that biller can read it or receive it.
      biller_client_id uuid not null references clients (id),
      resource_type text not null,
      resource_id uuid not null,
      payload jsonb not null,
      created_at timestamptz not null default now(),
      dispatched_at timestamptz
    );
    create index events_biller_page_idx on events (biller_client_id, sequence desc);
    create index events_undispatched_idx on events (sequence) where dispatched_at is null;

    create table webhook_endpoints (
      id uuid primary key default gen_random_uuid(),
      biller_client_id uuid not null references clients (id),
      url text not null check (url ~ '^https?://'),
      description text,
      event_types text[] not null default '{}',
      secret text not null,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      status text not null default 'enabled' check (status in ('enabled', 'disabled')),
      disabled_reason text,
      failing_since timestamptz,
      created_at timestamptz not null default now(),
      deleted_at timestamptz
    );
    create index webhook_endpoints_biller_idx on webhook_endpoints (biller_client_id) where deleted_at is null;

    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      event_id uuid not null references events (id),
      endpoint_id uuid not null references webhook_endpoints (id),
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'abandoned')),
      attempts integer not null default 0,
      last_status_code integer,
      next_attempt_at timestamptz,
      created_at timestamptz not null default now(),
      succeeded_at timestamptz,
      unique (event_id, endpoint_id)
    );

    create table webhook_delivery_attempts (
      id uuid primary key default gen_random_uuid(),
      delivery_id uuid not null references webhook_deliveries (id),
      attempt_number integer not null,
      status_code integer,
      latency_ms integer not null,
      response_snippet text,
      error text,
      attempted_at timestamptz not null default now(),
      unique (delivery_id, attempt_number)
    );

    -- Idempotency -----------------------------------------------------------------------------------

    create table idempotency_keys (
      client_id uuid not null references clients (id),
      idempotency_key uuid not null,
      fingerprint text not null,
      status text not null default 'in_flight' check (status in ('in_flight', 'completed')),
      response_status integer,
      response_headers jsonb,
      response_body bytea,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      primary key (client_id, idempotency_key)
    );
    create index idempotency_keys_expiry_idx on idempotency_keys (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table if exists idempotency_keys, webhook_delivery_attempts, webhook_deliveries,
      webhook_endpoints, events, payout_items, ledger_entries, payouts, reconciliation_exceptions,
      collection_attempts, deduction_records, confirmations, employee_deduction_pushes,
      instruction_items, instruction_files, reruns, requested_payments, deduction_line_payments,
      deduction_lines, deduction_snapshots, payment_requests, schedules, mandates,
      beneficiary_accounts, consumers, employments, employees, pay_dates, payrolls,
      collection_accounts, employers, bank_holidays, api_keys, clients, payroll_providers cascade;
  `.execute(db);
}
