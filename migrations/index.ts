import type { Migration } from 'kysely';
import * as initialSchema from './20261122000000_initial_schema.ts';
import * as correctionsAfterPayout from './20261122010000_corrections_after_payout_and_lookup_indexes.ts';
import * as leanNightlyWrites from './20261122020000_lean_nightly_writes.ts';
import * as ledgerWritesWithoutRechecks from './20261122030000_ledger_writes_without_rechecks.ts';
import * as deductionRecordsWithoutRechecks from './20261122031000_deduction_records_without_rechecks.ts';
import * as attemptsInReportOrder from './20261122032000_attempts_in_report_order.ts';
import * as failedPayoutsKeepTheirItems from './20261122033000_failed_payouts_keep_their_items.ts';
import * as eventsSequenceWithoutUniqueIndex from './20261122050000_events_sequence_without_unique_index.ts';
import * as paymentUpdatesInPlace from './20261122060000_payment_updates_in_place.ts';
import * as exceptionsHeldOnce from './20261123000000_exceptions_held_once.ts';
import * as nightlyRuns from './20261123100000_nightly_runs.ts';
import * as rerunRequestsJoinTheOpenRerun from './20261123200000_rerun_requests_join_the_open_rerun.ts';
import * as paymentStatusReason from './20261124000000_payment_status_reason.ts';
import * as pendingRequestsByMandate from './20261124010000_pending_requests_by_mandate.ts';
import * as availabilityLookups from './20261124100000_availability_lookups.ts';
import * as auditLog from './20261124300000_audit_log.ts';
import * as clientSecretVersions from './20261124310000_client_secret_versions.ts';
import * as beneficiaryAccountHistory from './20261124320000_beneficiary_account_history.ts';
import * as administration from './20261125000000_administration.ts';
import * as collectionAccountHistory from './20261125010000_collection_account_history.ts';
import * as employeeImportRuns from './20261125020000_employee_import_runs.ts';
import * as sandboxes from './20261125030000_sandboxes.ts';
import * as paymentReferenceNumbers from './20261125040000_payment_reference_numbers.ts';
import * as reconciliationAndPayoutRuns from './20261125060000_reconciliation_and_payout_runs.ts';
import * as consoleUsers from './20261126000000_console_users.ts';
import * as cash from './20261127000000_cash.ts';
import * as autovacuumForNightlyTables from './20261128000000_autovacuum_for_nightly_tables.ts';
import * as narrowPaymentEvents from './20261129000000_narrow_payment_events.ts';
import * as snapshotBillers from './20261130000000_snapshot_billers.ts';
import * as fundingInPlace from './20261130010000_funding_in_place.ts';
import * as payoutAssemblies from './20261201000000_payout_assemblies.ts';
import * as lockQueue from './20261201010000_lock_queue.ts';
import * as ledgerEntriesWithoutPaymentIndex from './20261201020000_ledger_entries_without_payment_index.ts';
import * as bankCreditIdentity from './20261202000000_bank_credit_identity.ts';
import * as paymentFiles from './20261202010000_payment_files.ts';
import * as reportedRecordVoids from './20261209000000_reported_record_voids.ts';
import * as webhookCircuitBreaker from './20261211000000_webhook_circuit_breaker.ts';
import * as consoleUsersWithoutLockout from './20261213000000_console_users_without_lockout.ts';
import * as webhookDeliveryBacklog from './20261214000000_webhook_delivery_backlog.ts';
import * as deductionReturnFiles from './20261215000000_deduction_return_files.ts';
import * as employmentDetails from './20261216000000_employment_details.ts';
import * as payDateFirstLock from './20261218000000_pay_date_first_lock.ts';
import * as payrollGoLive from './20261219000000_payroll_go_live.ts';
import * as scheduleSettlement from './20261220000000_schedule_settlement.ts';
import * as ledgerReversalsByPayout from './20261221000000_ledger_reversals_by_payout.ts';

// Every migration, by name, in the order they were written. A static list (rather than reading the
// folder) works the same under tsx, vitest and any bundler. Add new ones at the end; never edit old ones.
export const migrations: Record<string, Migration> = {
  '20261122000000_initial_schema': initialSchema,
  '20261122010000_corrections_after_payout_and_lookup_indexes': correctionsAfterPayout,
  '20261122020000_lean_nightly_writes': leanNightlyWrites,
  '20261122030000_ledger_writes_without_rechecks': ledgerWritesWithoutRechecks,
  '20261122031000_deduction_records_without_rechecks': deductionRecordsWithoutRechecks,
  '20261122032000_attempts_in_report_order': attemptsInReportOrder,
  '20261122033000_failed_payouts_keep_their_items': failedPayoutsKeepTheirItems,
  '20261122050000_events_sequence_without_unique_index': eventsSequenceWithoutUniqueIndex,
  '20261122060000_payment_updates_in_place': paymentUpdatesInPlace,
  '20261123000000_exceptions_held_once': exceptionsHeldOnce,
  '20261123100000_nightly_runs': nightlyRuns,
  '20261123200000_rerun_requests_join_the_open_rerun': rerunRequestsJoinTheOpenRerun,
  '20261124000000_payment_status_reason': paymentStatusReason,
  '20261124010000_pending_requests_by_mandate': pendingRequestsByMandate,
  '20261124100000_availability_lookups': availabilityLookups,
  '20261124300000_audit_log': auditLog,
  '20261124310000_client_secret_versions': clientSecretVersions,
  '20261124320000_beneficiary_account_history': beneficiaryAccountHistory,
  '20261125000000_administration': administration,
  '20261125010000_collection_account_history': collectionAccountHistory,
  '20261125020000_employee_import_runs': employeeImportRuns,
  '20261125030000_sandboxes': sandboxes,
  '20261125040000_payment_reference_numbers': paymentReferenceNumbers,
  '20261125060000_reconciliation_and_payout_runs': reconciliationAndPayoutRuns,
  '20261126000000_console_users': consoleUsers,
  '20261127000000_cash': cash,
  '20261128000000_autovacuum_for_nightly_tables': autovacuumForNightlyTables,
  '20261129000000_narrow_payment_events': narrowPaymentEvents,
  '20261130000000_snapshot_billers': snapshotBillers,
  '20261130010000_funding_in_place': fundingInPlace,
  '20261201000000_payout_assemblies': payoutAssemblies,
  '20261201010000_lock_queue': lockQueue,
  '20261201020000_ledger_entries_without_payment_index': ledgerEntriesWithoutPaymentIndex,
  '20261202000000_bank_credit_identity': bankCreditIdentity,
  '20261202010000_payment_files': paymentFiles,
  '20261209000000_reported_record_voids': reportedRecordVoids,
  '20261211000000_webhook_circuit_breaker': webhookCircuitBreaker,
  '20261213000000_console_users_without_lockout': consoleUsersWithoutLockout,
  '20261214000000_webhook_delivery_backlog': webhookDeliveryBacklog,
  '20261215000000_deduction_return_files': deductionReturnFiles,
  '20261216000000_employment_details': employmentDetails,
  '20261218000000_pay_date_first_lock': payDateFirstLock,
  '20261219000000_payroll_go_live': payrollGoLive,
  '20261220000000_schedule_settlement': scheduleSettlement,
  '20261221000000_ledger_reversals_by_payout': ledgerReversalsByPayout,
};
