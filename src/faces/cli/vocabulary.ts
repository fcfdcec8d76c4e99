import type { BankHolidayRegion, RemittanceStatus, SetAsideCategory } from '../../platform/db/tables.ts';
import type { PaymentFileFormat } from '../../settlement/payouts/payout-file.ts';
import type { RunKind } from '../../cycle/runs/run-history-service.ts';

// The few lists command definitions show in their help or check an option against whose own modules
// load the services (the database layer, date-holidays, the file writers): copied here so that
// `--help` and option parsing load none of that. test/faces/cli/vocabulary.test.ts holds each copy to its
// original, order included (the order is what help and error messages print).

/** = bankHolidayRegions (src/directory/calendars/bank-holidays.ts) */
export const BANK_HOLIDAY_REGIONS = ['england-and-wales', 'scotland', 'northern-ireland'] as const satisfies readonly BankHolidayRegion[];

/** = PAYMENT_FILE_FORMATS (src/settlement/payouts/payout-file.ts) */
export const PAYMENT_FILE_FORMATS = ['csv', 'pain.001'] as const satisfies readonly PaymentFileFormat[];

/** = remittanceStatusSchema.options (src/settlement/cash/remittance-service.ts) */
export const REMITTANCE_STATUSES = ['expected', 'received', 'short', 'over', 'late', 'shortfall'] as const satisfies readonly RemittanceStatus[];

/** = runKindSchema.options (src/cycle/runs/run-history-service.ts) */
export const RUN_KINDS = ['nightly', 'rerun', 'reconciliation', 'payout'] as const satisfies readonly RunKind[];

/** = SANDBOX_LIMITS (src/faces/sandbox/sandbox-setup-service.ts) */
export const SANDBOX_LIMITS = { employers: { min: 1, max: 12 }, employeesPerPayroll: { min: 1, max: 200 } } as const;

/** = SET_ASIDE_CATEGORIES (src/settlement/cash/credit-decision-service.ts) */
export const SET_ASIDE_CATEGORIES = ['not_a_remittance', 'bank_interest', 'returned_to_sender', 'duplicate', 'other'] as const satisfies readonly SetAsideCategory[];

/** Each union is exactly its list: a value added to one of them fails the type check here. */
type Exactly<List extends readonly string[], Union extends string> = [Union] extends [List[number]] ? true : never;
export const vocabularyIsComplete: [
  Exactly<typeof BANK_HOLIDAY_REGIONS, BankHolidayRegion>,
  Exactly<typeof PAYMENT_FILE_FORMATS, PaymentFileFormat>,
  Exactly<typeof REMITTANCE_STATUSES, RemittanceStatus>,
  Exactly<typeof RUN_KINDS, RunKind>,
  Exactly<typeof SET_ASIDE_CATEGORIES, SetAsideCategory>,
] = [true, true, true, true, true];
