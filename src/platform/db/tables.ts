import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable, Updateable } from 'kysely';

// Table types in the style of Kysely's own example. Money columns are bigint minor units parsed to
// safe integers (see ./connection.ts); `date` columns stay 'YYYY-MM-DD' strings.

// No `| undefined` on insert: a timestamp column an insert may leave out says Generated<> (it has a default).
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json = ColumnType<unknown, string, string>;
type MinorUnits = number;
type IsoDate = string;

import type { ClientRole } from '../shared/caller.ts';

export type { ClientRole };

export interface PayrollProvidersTable {
  id: Generated<string>;
  name: string;
  api_base_url: string | null;
  api_token_url: string | null;
  api_client_id: string | null;
  api_client_secret: string | null;
  lead_time_working_days: Generated<number>;
  /** Whose bank holidays the provider keeps; a payroll's own region decides its calendar. */
  region: Generated<BankHolidayRegion>;
  /** Sandbox data: its employers, payrolls and employees are seen only by sandbox clients. */
  sandbox: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type BankHolidayRegion = 'england-and-wales' | 'scotland' | 'northern-ireland';

export interface ClientsTable {
  id: Generated<string>;
  name: string;
  role: ClientRole;
  secret_hash: string;
  scopes: string[];
  payroll_provider_id: string | null;
  created_at: Generated<Date>;
  disabled_at: Timestamp | null;
  /** Raised by each secret rotation; tokens issued against an older version stop working. */
  secret_version: Generated<number>;
  /** A sandbox client sees only sandbox payroll providers' data, a live one only live data. */
  sandbox: Generated<boolean>;
}

export interface ApiKeysTable {
  id: Generated<string>;
  client_id: string;
  key_hash: string;
  key_prefix: string;
  created_at: Generated<Date>;
  revoked_at: Timestamp | null;
}

/** Operator-added bank holidays (a one-off day); the regular ones come from a library, not a table. */
export interface BankHolidaysTable {
  region: BankHolidayRegion;
  holiday_date: IsoDate;
  name: string;
  added_by: string;
  created_at: Generated<Date>;
}

export interface EmployerOptInChangesTable {
  id: Generated<string>;
  employer_id: string;
  from_status: 'pending' | 'opted_in' | 'opted_out' | null;
  to_status: 'pending' | 'opted_in' | 'opted_out';
  changed_by: string;
  reason: string | null;
  changed_at: Generated<Date>;
}

/** A live biller's sandbox: its twin client, the simulated provider it sees and that provider's client. */
export interface SandboxesTable {
  id: Generated<string>;
  live_biller_client_id: string;
  biller_client_id: string;
  payroll_provider_id: string;
  provider_client_id: string;
  /** What the directory was generated from (`sandbox create --seed`). */
  seed: string;
  created_by: string;
  created_at: Generated<Date>;
}

export interface EmployersTable {
  id: Generated<string>;
  payroll_provider_id: string;
  external_id: string;
  name: string;
  sic_code: string | null;
  industry_name: string | null;
  salary_deduction_opt_in_status: Generated<'pending' | 'opted_in' | 'opted_out'>;
  /** Overrides PAYOUT_FUNDING for this employer's collections; null follows the installation's. */
  payout_funding: PayoutFunding | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface CollectionAccountsTable {
  id: Generated<string>;
  currency: string;
  account_number: string;
  sort_code: string;
  account_holder_name: string;
  active: Generated<boolean>;
  created_at: Generated<Date>;
  /** When a newer account replaced this one; rows are never changed otherwise (see migration 20261125010000). */
  deactivated_at: Timestamp | null;
}

export interface PayrollsTable {
  id: Generated<string>;
  employer_id: string;
  payroll_provider_id: string;
  external_id: string;
  name: string;
  payment_run_frequency: Generated<'weekly' | 'fortnightly' | 'four_weekly' | 'monthly' | 'unknown'>;
  currency: Generated<string>;
  bank_holiday_region: Generated<BankHolidayRegion>;
  calendar_synced_at: Timestamp | null;
  created_at: Generated<Date>;
  /** Unique, assigned once: the payroll's part of its remittance references (src/cycle/instructions/payment-reference.ts). */
  remittance_reference_number: GeneratedAlways<number>;
  /** Its first pay date to collect: nothing before it is locked; null until it has one (not live). */
  go_live_date: IsoDate | null;
}

export interface PayDatesTable {
  payroll_id: string;
  pay_date: IsoDate;
  payroll_cutoff_date: IsoDate;
  pay_period: string;
  lock_date: IsoDate;
  /** The latest lock's time: a re-run's, once re-run. */
  locked_at: Timestamp | null;
  /** The first lock's time, kept when a re-run locks the pay date again. */
  first_locked_at: Timestamp | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/**
 * A person at a payroll provider. Who they are (national registration number, date of birth) is the
 * person's; the name and contact details here are the ones first recorded: what each payroll says
 * is on its employment (decision 0015).
 */
export interface EmployeesTable {
  id: Generated<string>;
  payroll_provider_id: string;
  national_registration_number: string | null;
  date_of_birth: IsoDate | null;
  given_name: string;
  family_name: string;
  email_address: string | null;
  phone_number: string | null;
  postal_code: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type EmploymentStatus = 'active' | 'leaver' | 'unknown';
export type ContractType = 'full_time' | 'part_time' | 'fixed_term' | 'zero_hours' | 'unknown';

export interface EmploymentsTable {
  id: Generated<string>;
  employee_id: string;
  employer_id: string;
  payroll_id: string;
  payroll_reference: string;
  /** The name as this payroll spells it, stored as given; null when the payroll never named the person (the employee's name stands). */
  given_name: string | null;
  family_name: string | null;
  /** The contact details this employment's employer gave; null when it gave none. */
  email_address: string | null;
  phone_number: string | null;
  postal_code: string | null;
  start_date: IsoDate | null;
  end_date: IsoDate | null;
  employment_status: Generated<EmploymentStatus>;
  contract_type: Generated<ContractType>;
  annualised_salary: MinorUnits | null;
  currency: Generated<string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** Unique, assigned once: the employee's deduction payment reference on this payroll (src/cycle/instructions/payment-reference.ts). */
  deduction_reference_number: GeneratedAlways<number>;
}

/** One bulk CSV import of a payroll's employees that was applied: the file, what it did, who and when. */
export interface EmployeeImportRunsTable {
  id: Generated<string>;
  payroll_id: string;
  file_sha256: string;
  partial: boolean;
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  left_count: number;
  rejected: number;
  error_count: number;
  imported_by: string;
  started_at: Date;
  finished_at: Generated<Date>;
}

export interface ConsumersTable {
  id: Generated<string>;
  biller_client_id: string;
  given_name: string;
  family_name: string;
  email_address: string | null;
  phone_number: string | null;
  date_of_birth: IsoDate | null;
  postal_code: string | null;
  national_registration_number: string | null;
  external_reference: string | null;
  created_at: Generated<Date>;
}

export interface BeneficiaryAccountsTable {
  id: Generated<string>;
  biller_client_id: string;
  currency: string;
  account_number: string;
  sort_code: string;
  account_holder_name: string;
  active: Generated<boolean>;
  created_at: Generated<Date>;
  /** When a newer account replaced this one; rows are never changed otherwise (see migration 20261124320000). */
  deactivated_at: Timestamp | null;
}

export type MandateStatus = 'pending_enablement' | 'active' | 'suspended' | 'revoked' | 'cancelled' | 'expired' | 'failed';

export interface MandatesTable {
  id: Generated<string>;
  biller_client_id: string;
  consumer_id: string;
  employee_id: string;
  payroll_id: string;
  status: Generated<MandateStatus>;
  status_reason: string | null;
  currency: Generated<string>;
  max_amount_per_pay_date: MinorUnits | null;
  max_total_amount: MinorUnits | null;
  valid_from: IsoDate | null;
  valid_to: IsoDate | null;
  authorisation_source: Json;
  reference: string | null;
  metadata: Json | null;
  version: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  revoked_at: Timestamp | null;
}

export type ScheduleStatus = 'active' | 'completed' | 'cancelled' | 'errored';

/** Why a schedule left `active` (src/collections/schedules/schedule-outcome.ts says which reason goes with which status). */
export type ScheduleStatusReason =
  | 'all_instalments_collected'
  | 'instalment_failed'
  | 'instalment_refused'
  | 'instalments_not_collected_in_full'
  | 'instalments_cancelled'
  | 'mandate_revoked'
  | 'mandate_ended'
  | 'cancelled_by_biller';

export interface SchedulesTable {
  id: Generated<string>;
  biller_client_id: string;
  mandate_id: string;
  status: Generated<ScheduleStatus>;
  /** Null while active; set with every move out of it (migration 20261220000000). */
  status_reason: ScheduleStatusReason | null;
  currency: string;
  total_amount: MinorUnits;
  instalment_count: number;
  metadata: Json | null;
  version: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type PaymentStatus = 'pending' | 'instructed' | 'collected' | 'paid_out' | 'cancelled' | 'failed' | 'partially_collected';

export interface PaymentRequestsTable {
  id: Generated<string>;
  biller_client_id: string;
  mandate_id: string;
  schedule_id: string | null;
  instalment_number: number | null;
  payroll_id: string;
  employee_id: string;
  status: Generated<PaymentStatus>;
  currency: string;
  amount: MinorUnits;
  collected_amount: Generated<MinorUnits>;
  paid_out_amount: Generated<MinorUnits>;
  attempts: Generated<number>;
  due_date: IsoDate | null;
  allow_post_due_date_deduction: Generated<boolean>;
  target_pay_date: IsoDate;
  metadata: Json | null;
  version: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  cancelled_at: Timestamp | null;
  /** Why the request is in its status, where the status alone does not say (failed at the lock: over the amount limit). */
  status_reason: string | null;
}

/**
 * Where the nightly lock finds pending payment requests (migration 20261201010000): kept by the
 * database's triggers for every request that is pending, at its payroll and target pay date. A row
 * may outlive its request's pending state until a lock meets it, so readers check the request.
 */
export interface PendingPaymentRequestsTable {
  payment_request_id: string;
  payroll_id: string;
  target_pay_date: IsoDate;
}

export type SnapshotStatus = 'locked' | 'confirmed' | 'reconciled' | 'superseded';

export interface DeductionSnapshotsTable {
  id: Generated<string>;
  payroll_id: string;
  pay_date: IsoDate;
  pay_period: string;
  snapshot_version: number;
  status: Generated<SnapshotStatus>;
  currency: string;
  total_amount: MinorUnits;
  employee_count: number;
  locked_at: Generated<Date>;
  superseded_at: Timestamp | null;
  superseded_by: string | null;
}

export type NightlyRunTrigger = 'schedule' | 'catch_up' | 'manual';

export interface NightlyRunsTable {
  id: string;
  run_date: IsoDate;
  trigger: NightlyRunTrigger;
  triggered_by: string | null;
  pay_dates_due: number;
  started_at: Generated<Date>;
  finished_at: Timestamp | null;
}

export type ReconciliationRunTrigger = 'sweep' | 'request' | 'sandbox' | 'direct';
export type PayoutRunTrigger = 'schedule' | 'cli' | 'direct';
export type RecordedRunOutcome = 'completed' | 'failed';

export interface ReconciliationRunsTable {
  id: string;
  payroll_id: string;
  pay_date: IsoDate;
  trigger: ReconciliationRunTrigger;
  triggered_by: string | null;
  final: boolean;
  started_at: Generated<Date>;
  finished_at: Timestamp | null;
  outcome: RecordedRunOutcome | null;
  failure_reason: string | null;
  snapshot_id: string | null;
  employees: number | null;
  collected: MinorUnits | null;
  exceptions: number | null;
  ledger_entries: number | null;
  payments_updated: number | null;
}

export interface PayoutRunsTable {
  id: string;
  run_date: IsoDate;
  trigger: PayoutRunTrigger;
  triggered_by: string | null;
  settled_through: IsoDate;
  started_at: Generated<Date>;
  finished_at: Timestamp | null;
  outcome: RecordedRunOutcome | null;
  failure_reason: string | null;
  payouts_made: number | null;
  failed_groups: number | null;
  totals_by_currency: Json | null;
  groups: Json | null;
}

/** `skipped`: held back because its payroll was not ready; `failure_reason` says why. */
export type NightlyPayDateOutcome = 'pending' | 'locked' | 'already_locked' | 'failed' | 'skipped';

export interface NightlyRunPayDatesTable {
  run_id: string;
  payroll_id: string;
  pay_date: IsoDate;
  outcome: Generated<NightlyPayDateOutcome>;
  snapshot_id: string | null;
  employee_count: number | null;
  payments_instructed: number | null;
  total_amount: MinorUnits | null;
  currency: string | null;
  failure_reason: string | null;
  job_requeues: Generated<number>;
  resolved_at: Timestamp | null;
}

export interface DeductionLinesTable {
  id: Generated<string>;
  snapshot_id: string;
  employee_id: string;
  payroll_reference: string;
  requested_amount: MinorUnits;
  currency: string;
  payment_reference: string;
}

export interface DeductionLinePaymentsTable {
  snapshot_id: string;
  line_id: string;
  payment_request_id: string;
  requested_amount: MinorUnits;
}

/** The billers whose collections a snapshot carries: who hears of its pay date's remittance. Written by the lock. */
export interface SnapshotBillersTable {
  snapshot_id: string;
  biller_client_id: string;
}

export interface RequestedPaymentsTable {
  id: Generated<string>;
  snapshot_id: string;
  payment_reference: string;
  payment_amount: MinorUnits;
  currency: string;
  account_number: string;
  sort_code: string;
  account_holder_name: string;
}

/** One re-run (a new lock) of a locked pay date; open (completed_at null) until it commits, at most one open per pay date. */
export interface RerunsTable {
  id: Generated<string>;
  payroll_id: string;
  pay_date: IsoDate;
  /** When the first request opened it. */
  requested_at: Generated<Date>;
  previous_snapshot_id: string | null;
  new_snapshot_id: string | null;
  completed_at: Timestamp | null;
}

/** Who asked for a re-run and why: every request that opened or joined it. */
export interface RerunRequestsTable {
  id: Generated<string>;
  rerun_id: string;
  reason: string;
  requested_by: string;
  requested_at: Generated<Date>;
}

export interface InstructionFilesTable {
  id: Generated<string>;
  snapshot_id: string;
  payroll_id: string;
  pay_date: IsoDate;
  file_version: number;
  file_name: string;
  content: Buffer;
  sha256: string;
  item_count: number;
  created_at: Generated<Date>;
}

export type InstructionAction = 'new' | 'amend' | 'stop' | 'continue';

export interface InstructionItemsTable {
  id: Generated<string>;
  instruction_file_id: string;
  employee_id: string;
  payroll_reference: string;
  amount: MinorUnits;
  previous_amount: MinorUnits | null;
  currency: string;
  payment_reference: string | null;
  pay_period: string;
  action: InstructionAction;
}

export interface EmployeeDeductionPushesTable {
  id: Generated<string>;
  instruction_item_id: string;
  payroll_id: string;
  employee_id: string;
  status: Generated<'pending' | 'sent' | 'failed'>;
  attempts: Generated<number>;
  last_error: string | null;
  response: Json | null;
  created_at: Generated<Date>;
  sent_at: Timestamp | null;
}

export interface ConfirmationsTable {
  id: Generated<string>;
  payroll_id: string;
  pay_date: IsoDate;
  deduction_data_id: string;
  /** The provider's client that submitted it; null when an operator imported the provider's return file. */
  submitted_by_client_id: string | null;
  /** The operator who imported the provider's return file (CLI user, or console email); null when a client submitted it. */
  submitted_by: string | null;
  total_amount: MinorUnits;
  employee_count: number;
  currency: string;
  received_at: Generated<Date>;
}

export interface DeductionRecordsTable {
  id: Generated<string>;
  payroll_id: string;
  pay_period: string;
  pay_date: IsoDate;
  employee_id: string;
  record_id: string;
  version: number;
  deduction_amount: MinorUnits;
  currency: string;
  leaver: Generated<boolean>;
  requested_payments: Json;
  content_hash: string;
  source: 'push' | 'confirmation';
  confirmation_id: string | null;
  /** Null only for the records of a confirmation an operator imported (confirmations.submitted_by). */
  received_by_client_id: string | null;
  received_at: Generated<Date>;
  /** The operator's void that stopped this record counting; null while it counts. */
  void_id: string | null;
}

/** An applied import of a deduction return file: the confirmation it became, and the file it came from. */
export interface DeductionReturnImportsTable {
  id: Generated<string>;
  payroll_id: string;
  pay_date: IsoDate;
  instruction_file_id: string;
  confirmation_id: string;
  file_sha256: string;
  partial: boolean;
  rows: number;
  confirmed: number;
  rejected: number;
  error_count: number;
  imported_by: string;
  imported_at: Generated<Date>;
}

export interface DeductionRecordVoidsTable {
  id: string;
  payroll_id: string;
  pay_date: IsoDate;
  reason: string;
  voided_by: string;
  voided_at: Generated<Date>;
  records: number;
  /** numeric: what the voided records added up to, exact however large (read as a BigInt). */
  total_amount: bigint;
}

export type PayDateExceptionStage = 'remittance' | 'funding';

export interface PayDateExceptionsTable {
  id: string;
  payroll_id: string;
  pay_date: IsoDate;
  stage: PayDateExceptionStage;
  detail: string;
  first_seen_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  occurrences: Generated<number>;
  resolved_at: Date | null;
}

export type AttemptOutcome = 'collected' | 'carried' | 'failed' | 'partially_collected';

export interface CollectionAttemptsTable {
  id: Generated<string>;
  payment_request_id: string;
  /** The payment request's, copied when the attempt is written (they never change): the report reads them here. */
  employee_id: string;
  mandate_id: string;
  biller_client_id: string;
  currency: string;
  payroll_id: string;
  pay_date: IsoDate;
  attempt_number: number;
  requested_amount: MinorUnits;
  deducted_amount: MinorUnits | null;
  collected_amount: Generated<MinorUnits>;
  shortfall_amount: Generated<MinorUnits>;
  carried_to_pay_date: IsoDate | null;
  outcome: AttemptOutcome | null;
  push_version: number | null;
  revision: Generated<number>;
  created_at: Generated<Date>;
  reconciled_at: Timestamp | null;
}

export interface ReconciliationExceptionsTable {
  id: Generated<string>;
  payroll_id: string;
  pay_date: IsoDate;
  employee_id: string | null;
  kind: 'unexpected_employee' | 'over_deduction' | 'missing_confirmation';
  amount: MinorUnits | null;
  currency: string | null;
  record_version: number | null;
  detail: string;
  created_at: Generated<Date>;
  /** Set when a later reconciliation found a different figure; only the row without it counts. */
  superseded_at: Generated<Date | null>;
}

export type LedgerEntryKind = 'payment_collected' | 'collection_reversed';

export interface PayoutsTable {
  id: Generated<string>;
  biller_client_id: string;
  currency: string;
  amount: MinorUnits;
  status: Generated<'pending' | 'paid' | 'failed'>;
  payout_date: IsoDate;
  reference: string;
  account_number: string;
  sort_code: string;
  account_holder_name: string;
  failure_reason: string | null;
  version: Generated<number>;
  created_at: Generated<Date>;
  paid_at: Timestamp | null;
  failed_at: Timestamp | null;
}

/**
 * A payout being assembled in chunks (payout-service.ts): what its plan decided, until the transaction
 * that finishes it writes its row in payouts and deletes this one. Entries already attached carry its
 * payout_id meanwhile.
 */
export interface PayoutAssembliesTable {
  payout_id: string;
  biller_client_id: string;
  currency: string;
  /** The day it was planned for; the payout is dated the day of the run that finishes it. */
  payout_date: IsoDate;
  /** Entries with a pay date on or before this are settled: the cutoff of the run that planned it. */
  settled_through: IsoDate;
  chunks: number;
  created_at: Generated<Date>;
}

/**
 * A payment file: a stored document instructing the bank to make payouts, written once
 * (src/settlement/payouts/payment-file-service.ts) and never changed (the table refuses UPDATE and DELETE).
 * Numbered per payout date from 1; sequence 0 is the legacy file recording the payouts that existed
 * before files were stored, which has no MsgId and no bytes.
 */
export interface PaymentFilesTable {
  id: string;
  payout_date: IsoDate;
  sequence: number;
  legacy: Generated<boolean>;
  /** The pain.001 GrpHdr/MsgId. */
  message_id: string | null;
  /** The pain.001 ReqdExctnDt: the payout date, or the next bank business day when it is not one. */
  requested_execution_date: IsoDate | null;
  /** The pain.001 GrpHdr/CreDtTm (whole seconds). */
  created_at: ColumnType<Date, Date | string | undefined, never>;
  created_by: string;
  /** The exact bytes of each rendering, and their SHA-256 (lower-case hex). */
  pain001: Buffer | null;
  pain001_sha256: string | null;
  csv: Buffer | null;
  csv_sha256: string | null;
}

/** Which file instructs a payout: the payout is the key, so it is in one file at most. */
export interface PaymentFilePayoutsTable {
  payout_id: string;
  payment_file_id: string;
}

export interface LedgerEntriesTable {
  id: Generated<string>;
  biller_client_id: string;
  payment_request_id: string;
  collection_attempt_id: string;
  revision: number;
  kind: LedgerEntryKind;
  amount: MinorUnits;
  currency: string;
  pay_date: IsoDate;
  payout_id: string | null;
  created_at: Generated<Date>;
  /** When the entry became payable: its remittance received, or its employer trusted (payout_funding 'deducted'). */
  funded_at: Timestamp | null;
}

export interface PayoutItemsTable {
  id: Generated<string>;
  payout_id: string;
  ledger_entry_id: string;
  payment_request_id: string;
  kind: LedgerEntryKind;
  amount: MinorUnits;
  /** Set when the payout failed and its entries went back to the unpaid pool; the item stays as a record. */
  released_at: Timestamp | null;
}

export type EventType =
  | 'mandate.created'
  | 'mandate.updated'
  | 'payment_request.created'
  | 'payment_request.updated'
  | 'schedule.updated'
  | 'payout.created'
  | 'employee.updated'
  | 'webhook_endpoint.disabled'
  | 'remittance.received'
  | 'remittance.overdue'
  | 'remittance.reversed';

export interface EventsTable {
  id: Generated<string>;
  sequence: ColumnType<number, never, never>;
  type: EventType;
  biller_client_id: string;
  resource_type: string;
  resource_id: string;
  /**
   * The webhook payload as stored; null for a payment_request.updated event written narrow (migration
   * 20261129000000), whose payload is rendered from the payment_* columns and the payment request.
   * Read it through eventPayloadSql, never directly.
   */
  payload: Json | null;
  payment_status: PaymentStatus | null;
  payment_status_reason: string | null;
  payment_collected_amount: MinorUnits | null;
  payment_paid_out_amount: MinorUnits | null;
  payment_attempts: number | null;
  payment_target_pay_date: IsoDate | null;
  payment_version: number | null;
  payment_updated_at: Timestamp | null;
  payment_cancelled_at: Timestamp | null;
  created_at: Generated<Date>;
  dispatched_at: Timestamp | null;
}

export interface WebhookEndpointsTable {
  id: Generated<string>;
  biller_client_id: string;
  url: string;
  description: string | null;
  event_types: string[];
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  status: Generated<'enabled' | 'disabled'>;
  disabled_reason: string | null;
  failing_since: Timestamp | null;
  created_at: Generated<Date>;
  deleted_at: Timestamp | null;
  consecutive_failures: Generated<number>;
  circuit_open_until: Timestamp | null;
  circuit_open_ms: number | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  event_id: string;
  endpoint_id: string;
  status: Generated<'pending' | 'succeeded' | 'failed' | 'abandoned'>;
  attempts: Generated<number>;
  last_status_code: number | null;
  next_attempt_at: Timestamp | null;
  created_at: Generated<Date>;
  succeeded_at: Timestamp | null;
  /** The queue job that holds the delivery while it is admitted; null while it waits in its biller's backlog. */
  job_id: string | null;
  admitted_at: Timestamp | null;
  /** How often it has been admitted: each admission's job id carries its number. */
  admissions: Generated<number>;
  /** Attempts made before the current run of the retry schedule (a redelivery starts a new run). */
  attempts_before_run: Generated<number>;
  /** Creation order (events' order within a dispatch): a biller's backlog goes out oldest due first, then by this. */
  sequence: ColumnType<number | null, never, never>;
}

export interface WebhookDeliveryAttemptsTable {
  id: Generated<string>;
  delivery_id: string;
  attempt_number: number;
  status_code: number | null;
  latency_ms: number;
  response_snippet: string | null;
  error: string | null;
  attempted_at: Generated<Date>;
}

export type AvailabilityLookupOutcome = 'confirmed' | 'not_found' | 'not_eligible' | 'pending_employer_opt_in' | 'rate_limited' | 'failed';

export interface AvailabilityLookupsTable {
  id: Generated<string>;
  biller_client_id: string;
  checked_at: Generated<Date>;
  kind: 'light' | 'full';
  outcome: AvailabilityLookupOutcome;
  /** Hex HMAC-SHA256 of the normalised national registration number (never the number); null without one. */
  national_registration_number_hmac: string | null;
}

export interface IdempotencyKeysTable {
  client_id: string;
  idempotency_key: string;
  fingerprint: string;
  status: Generated<'in_flight' | 'completed'>;
  response_status: number | null;
  response_headers: Json | null;
  response_body: Buffer | null;
  created_at: Generated<Date>;
  expires_at: Timestamp;
}

export type AuditActorKind = 'client' | 'cli' | 'console';

/** One money-moving or credential-changing action: append-only, written with the action itself. */
export interface AuditLogTable {
  id: Generated<string>;
  at: Generated<Date>;
  actor_kind: AuditActorKind;
  /** The API client's id, or the name of the person at the CLI. */
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string;
  reason: string | null;
  before: Json | null;
  after: Json | null;
}

export type ConsoleRole = 'operator' | 'finance' | 'viewer';

export interface ConsoleUsersTable {
  id: string;
  email: string;
  name: string;
  role: ConsoleRole;
  /** `scrypt$N$r$p$salt$hash`: never shown, never logged. */
  password_hash: string;
  created_at: Generated<Date>;
  created_by: string;
  password_changed_at: Generated<Date>;
  disabled_at: Date | null;
  last_signed_in_at: Date | null;
}

export interface ConsoleSessionsTable {
  id: string;
  /** SHA-256 of the cookie's token. */
  token_hash: Buffer;
  user_id: string;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  expires_at: Date;
  signed_out_at: Date | null;
  address: string | null;
  user_agent: string | null;
}

export type StatementFormat = 'camt.053' | 'camt.054' | 'csv';
export type MatchRule = 'exact' | 'normalised' | 'many_to_one' | 'one_to_many' | 'tolerance' | 'manual';
export type RemittanceStatus = 'expected' | 'received' | 'short' | 'over' | 'late' | 'shortfall';
/** open: the rules may match it; held: a person must look first; set_aside: a person said it is no remittance; reversed: the bank took it back. */
export type BankCreditState = 'open' | 'held' | 'set_aside' | 'reversed';
export type SetAsideCategory = 'not_a_remittance' | 'bank_interest' | 'returned_to_sender' | 'duplicate' | 'other';
export type StatementEntryOutcome = 'new' | 'already_known' | 'superseded' | 'conflicting' | 'reversal' | 'unresolved_reversal' | 'held' | 'debit' | 'unusable';
export type PayoutFunding = 'received' | 'deducted';

export interface BankStatementsTable {
  id: string;
  collection_account_id: string;
  format: StatementFormat;
  /** The bank's id of the statement (camt Stmt/Id or Ntfctn/Id; the CSV file's statement_id column). */
  statement_id: string;
  content_sha256: Buffer;
  file_name: string | null;
  currency: string;
  credits: number;
  credits_total: MinorUnits;
  credits_already_imported: number;
  debits_ignored: number;
  imported_at: Generated<Date>;
  imported_by: string;
  page_number: Generated<number>;
  last_page: Generated<boolean>;
  electronic_sequence_number: string | null;
  legal_sequence_number: string | null;
  /** SHA-256 of the statement's parsed content: the same statement in another file is the same statement. */
  parsed_sha256: Buffer | null;
  /** The statement's balances (Bal): type code, signed minor units, currency, date. */
  balances: ColumnType<Array<{ type: string; amount: number; currency: string; date: string | null }>, string | undefined, string>;
  integrity_findings: ColumnType<Array<{ code: string; detail: string }>, string | undefined, string>;
  /** How many of its entries had each outcome (StatementEntryOutcome -> count). */
  entry_outcomes: ColumnType<Record<string, number>, string | undefined, string>;
}

/** What an import made of each entry of a statement. */
export interface BankStatementEntriesTable {
  id: string;
  bank_statement_id: string;
  entry_index: number;
  direction: 'credit' | 'debit';
  amount: MinorUnits;
  currency: string;
  booking_date: IsoDate | null;
  bank_reference: string;
  account_servicer_reference: string | null;
  entry_reference: string | null;
  outcome: StatementEntryOutcome;
  bank_credit_id: string | null;
  detail: string | null;
  resolved_at: Timestamp | null;
  resolved_by: string | null;
}

export interface BankCreditsTable {
  id: string;
  bank_statement_id: string;
  collection_account_id: string;
  bank_reference: string;
  amount: MinorUnits;
  currency: string;
  booking_date: IsoDate;
  value_date: IsoDate | null;
  remittance_information: string | null;
  debtor_name: string | null;
  debtor_account: string | null;
  matched_amount: Generated<MinorUnits>;
  created_at: Generated<Date>;
  account_servicer_reference: string | null;
  entry_reference: string | null;
  transaction_references: Generated<string[]>;
  batch_amount: MinorUnits | null;
  batch_part: number | null;
  batch_parts: number | null;
  /** The camt.053 (or CSV) statement that booked the credit; null while only a camt.054 notified it. */
  booked_statement_id: string | null;
  state: Generated<BankCreditState>;
  state_reason: string | null;
  set_aside_category: SetAsideCategory | null;
  state_changed_at: Timestamp | null;
  state_changed_by: string | null;
}

export interface RemittancesTable {
  id: string;
  payroll_id: string;
  pay_date: IsoDate;
  employer_id: string;
  currency: string;
  payment_reference: string;
  requested: MinorUnits;
  deducted: MinorUnits | null;
  expected: MinorUnits;
  received: Generated<MinorUnits>;
  status: RemittanceStatus;
  due_date: IsoDate;
  overdue_at: Timestamp | null;
  /** Paid out beyond what was received, after the bank reversed a credit already paid out: owed back. */
  shortfall: Generated<MinorUnits>;
  version: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface RemittanceMatchesTable {
  id: string;
  bank_credit_id: string;
  payroll_id: string;
  pay_date: IsoDate;
  amount: MinorUnits;
  rule: MatchRule;
  flagged: Generated<boolean>;
  matched_at: Generated<Date>;
  matched_by: string;
  unmatched_at: Timestamp | null;
  unmatched_by: string | null;
  unmatch_reason: string | null;
}

export interface DB {
  payroll_providers: PayrollProvidersTable;
  clients: ClientsTable;
  api_keys: ApiKeysTable;
  bank_holidays: BankHolidaysTable;
  employers: EmployersTable;
  employer_opt_in_changes: EmployerOptInChangesTable;
  collection_accounts: CollectionAccountsTable;
  payrolls: PayrollsTable;
  pay_dates: PayDatesTable;
  employees: EmployeesTable;
  employments: EmploymentsTable;
  employee_import_runs: EmployeeImportRunsTable;
  consumers: ConsumersTable;
  beneficiary_accounts: BeneficiaryAccountsTable;
  mandates: MandatesTable;
  schedules: SchedulesTable;
  payment_requests: PaymentRequestsTable;
  pending_payment_requests: PendingPaymentRequestsTable;
  deduction_snapshots: DeductionSnapshotsTable;
  deduction_lines: DeductionLinesTable;
  nightly_runs: NightlyRunsTable;
  reconciliation_runs: ReconciliationRunsTable;
  payout_runs: PayoutRunsTable;
  nightly_run_pay_dates: NightlyRunPayDatesTable;
  deduction_line_payments: DeductionLinePaymentsTable;
  snapshot_billers: SnapshotBillersTable;
  requested_payments: RequestedPaymentsTable;
  reruns: RerunsTable;
  rerun_requests: RerunRequestsTable;
  instruction_files: InstructionFilesTable;
  instruction_items: InstructionItemsTable;
  employee_deduction_pushes: EmployeeDeductionPushesTable;
  confirmations: ConfirmationsTable;
  deduction_records: DeductionRecordsTable;
  deduction_record_voids: DeductionRecordVoidsTable;
  deduction_return_imports: DeductionReturnImportsTable;
  pay_date_exceptions: PayDateExceptionsTable;
  collection_attempts: CollectionAttemptsTable;
  reconciliation_exceptions: ReconciliationExceptionsTable;
  payouts: PayoutsTable;
  payout_assemblies: PayoutAssembliesTable;
  payment_files: PaymentFilesTable;
  payment_file_payouts: PaymentFilePayoutsTable;
  ledger_entries: LedgerEntriesTable;
  payout_items: PayoutItemsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  availability_lookups: AvailabilityLookupsTable;
  audit_log: AuditLogTable;
  sandboxes: SandboxesTable;
  console_users: ConsoleUsersTable;
  console_sessions: ConsoleSessionsTable;
  bank_statements: BankStatementsTable;
  bank_credits: BankCreditsTable;
  bank_statement_entries: BankStatementEntriesTable;
  remittances: RemittancesTable;
  remittance_matches: RemittanceMatchesTable;
}

export type Client = Selectable<ClientsTable>;
export type NewClient = Insertable<ClientsTable>;
export type ClientUpdate = Updateable<ClientsTable>;
