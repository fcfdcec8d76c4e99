/**
 * The one catalogue of problem codes: every code a refusal of this service can carry, as the `type`
 * of an RFC 9457 problem (`PROBLEM_TYPE_BASE` + code, src/faces/http/problem.ts) or a DomainError's `code`
 * (domain-errors.ts). Codes are stable: clients branch on them, so a code is never renamed, only
 * added (here first: the constructors take a ProblemCode, so an unlisted one does not compile).
 * `title` is the problem's RFC 9457 title, the same for every occurrence. It lives in shared/, not
 * http/, because the areas raise these codes and must not depend on the HTTP layer.
 * test/platform/shared/problem-codes.test.ts keeps the catalogue and the raise sites in step.
 */

/** The edges other than the HTTP API that answer a problem (with HTML, a CLI line, or as the simulated provider). */
export type InternalEdge = 'console' | 'cli' | 'sandbox-provider';

export interface ProblemCodeEntry {
  /** RFC 9457 `title`: a short name for the problem, the same wherever it is raised. */
  readonly title: string;
  /** The HTTP status it is answered with; a list when it has more than one (the first is the usual one). */
  readonly status: number | readonly number[];
  /** When it happens, and what the client should do about it: one line. */
  readonly description: string;
  /**
   * Set only for a problem the HTTP API never answers: the edges that do (the console's pages, the
   * command line, the sandbox payroll provider). Such codes are left out of /openapi.json.
   */
  readonly internal?: readonly InternalEdge[];
}

export const problemCatalogue = {
  // The HTTP layer: what is wrong with the request as HTTP, before any rule of the service.
  'bad-request': {
    title: 'Bad request',
    status: 400,
    description: 'The request is not valid HTTP/1.1, or its Content-Length does not match its body; fix the request before sending it again.',
  },
  'bad-url': {
    title: 'Malformed URL',
    status: 400,
    description: 'The URL path has a malformed percent-encoding; encode path parameters properly.',
  },
  'body-too-large': {
    title: 'Body too large',
    status: 413,
    description: 'The request body (a JSON body, an import file, a bank statement) is larger than the operation accepts; send a smaller one.',
  },
  'empty-body': {
    title: 'Empty body',
    status: 400,
    description: 'An operation that takes a file as its body (a pay calendar CSV) got none; send the file as the body.',
  },
  'headers-too-large': {
    title: 'Headers too large',
    status: 431,
    description: 'The request line and headers are larger than the service accepts; send fewer or shorter headers.',
  },
  'internal-error': {
    title: 'Internal error',
    status: 500,
    description: 'An unexpected failure; it has been logged. Retry later (with the same Idempotency-Key a retry is safe) and report it if it persists.',
  },
  'invalid-value': {
    title: 'Validation failed',
    status: 422,
    description: 'A value in the request is out of range or malformed in a way the request validation did not catch; correct the value.',
  },
  'malformed-json': {
    title: 'Malformed JSON',
    status: 400,
    description: 'The request body is not valid JSON, or is empty where JSON is expected; send a valid JSON body.',
  },
  'not-found': {
    title: 'Not found',
    status: 404,
    description: 'There is no such route or resource, or none this client may see (a payroll provider answering 404 included); check the URL and identifiers.',
  },
  'request-timeout': {
    title: 'Request timeout',
    status: 408,
    description: 'The request did not arrive in full in time; send it again.',
  },
  'service-unavailable': {
    title: 'Service unavailable',
    status: 503,
    description: 'PostgreSQL or Redis is unreachable (`dependency` names which); nothing was done. Retry after `Retry-After`, with the same Idempotency-Key.',
  },
  'unsupported-media-type': {
    title: 'Unsupported media type',
    status: 415,
    description: 'The body is not in a media type the operation takes (JSON; text/csv or camt XML for files); send it with the right Content-Type.',
  },
  'uri-too-long': {
    title: 'URI too long',
    status: 414,
    description: 'A path parameter is longer than any identifier of this API; check the identifier.',
  },
  'validation-failed': {
    title: 'Validation failed',
    status: [422, 400],
    description: 'The body (422), or a path or query parameter (400), is invalid; `errors` names each field by JSON pointer. Fix those fields.',
  },

  // Authentication, authorisation and rate limits.
  'forbidden-role': {
    title: 'Forbidden for this role',
    status: 403,
    description: "The operation is not available to the calling client's role (biller, operator, payroll provider); use a client of the right role.",
  },
  'insufficient-scope': {
    title: 'Insufficient scope',
    status: 403,
    description: 'The credentials lack the scope the operation needs (`required_scope` names it); ask for a token with that scope.',
  },
  'rate-limited': {
    title: 'Rate limited',
    status: 429,
    description: "Over the client's request rate limit, or the availability checks' limit; retry after `Retry-After` seconds.",
  },
  unauthorized: {
    title: 'Unauthorized',
    status: 401,
    description: 'No valid credentials: the bearer token or x-api-key is missing, invalid or expired, or the client is disabled; authenticate again.',
  },

  // Idempotency and concurrency.
  'concurrent-request': {
    title: 'Concurrent request',
    status: 409,
    description: 'Another request changed the same data at the same moment and this one was rolled back; nothing was done, retry after `Retry-After`.',
  },
  'concurrent-update': {
    title: 'Concurrent update',
    status: 409,
    description: 'Another change to the same employee or its identifiers won; read the employee again and retry.',
  },
  'content-digest-mismatch': {
    title: 'Content-Digest mismatch',
    status: 400,
    description: "The uploaded file's SHA-256 is not the one its Content-Digest names; nothing was imported. Send the file and its digest again.",
  },
  'content-digest-required': {
    title: 'Content-Digest required',
    status: 400,
    description: "A streamed body sent with an Idempotency-Key needs a Content-Digest (sha-256) header; add the body's digest.",
  },
  'idempotency-key-in-flight': {
    title: 'Idempotency-Key in flight',
    status: 409,
    description: 'A request with this Idempotency-Key is still being processed; retry after `Retry-After` to get its answer.',
  },
  'idempotency-key-required': {
    title: 'Idempotency-Key required',
    status: 400,
    description: 'The operation requires an Idempotency-Key header; send one (a UUID).',
  },
  'idempotency-key-reused': {
    title: 'Idempotency-Key reused',
    status: 422,
    description: 'This Idempotency-Key was already used for a different request; use a new key for a new request.',
  },
  'idempotency-key-with-all-errors': {
    title: 'Idempotency-Key with full error list',
    status: 400,
    description: 'The full error list of an import is not kept for replays; ask for it without an Idempotency-Key.',
  },
  'invalid-idempotency-key': {
    title: 'Invalid Idempotency-Key',
    status: 400,
    description: 'The Idempotency-Key header is not a UUID; send a UUID.',
  },

  // Paging.
  'invalid-cursor': {
    title: 'Invalid cursor',
    status: 400,
    description: 'A paging cursor is not one this API issued, or both after and before were given; pass the after or before value of a page unchanged.',
  },
  'invalid-paging': {
    title: 'Invalid paging',
    status: 400,
    description: 'Both after and before were given; page in one direction at a time.',
  },

  // Clients.
  'cannot-disable-self': {
    title: 'Cannot disable own client',
    status: 409,
    description: 'An operator client cannot disable the client it is calling with; use another operator client.',
  },
  'client-already-disabled': {
    title: 'Client already disabled',
    status: 409,
    description: 'The client is already disabled; nothing to do.',
  },
  'client-not-disabled': {
    title: 'Client not disabled',
    status: 409,
    description: 'Only a disabled client can be enabled, and this one is not disabled; nothing to do.',
  },
  'reason-required': {
    title: 'Reason required',
    status: 422,
    description: 'The change needs a reason for the audit trail (a client change, an account change, a failed payout, a cash decision); give one.',
  },
  'unknown-payroll-provider': {
    title: 'Unknown payroll provider',
    status: 422,
    description: 'The payroll provider named in the body does not exist; name an existing provider.',
  },

  // Payroll providers and what they answer.
  'incomplete-connection': {
    title: 'Incomplete provider connection',
    status: 422,
    description: 'A provider reached through its API needs every connection field the reference interface uses; `errors` names the missing ones.',
  },
  'nothing-to-change': {
    title: 'Nothing to change',
    status: 422,
    description: 'An update named no field to change; name at least one.',
  },
  'provider-authentication-failed': {
    title: 'Payroll provider authentication failed',
    status: 502,
    description: "The payroll provider refused this service's client credentials or token; an operator must fix the provider's credentials.",
  },
  'provider-bad-response': {
    title: 'Payroll provider bad response',
    status: 502,
    description: 'The payroll provider answered something that is not its reference interface (not JSON, the wrong shape, a redirect); retry later.',
  },
  'provider-calendar-empty': {
    title: 'Payroll provider calendar empty',
    status: 502,
    description: 'The payroll provider lists no pay dates for the payroll, so there is no calendar to sync; ask the provider, or set the calendar another way.',
  },
  'provider-misconfigured': {
    title: 'Payroll provider misconfigured',
    status: 502,
    description: "The payroll provider's connection is incomplete or names a URL the policy refuses; an operator must fix the provider.",
  },
  'provider-not-found': {
    title: 'Employee unknown to payroll provider',
    status: 502,
    description: 'The payroll provider does not know this employee on this payroll; check the employee and payroll, or ask the provider.',
  },
  'provider-rejected': {
    title: 'Payroll provider rejected the request',
    status: 502,
    description: 'The payroll provider refused the request with a 4xx; its detail says why. Correct the data, or ask the provider.',
  },
  'provider-timeout': {
    title: 'Payroll provider timeout',
    status: 504,
    description: 'The payroll provider did not answer in time; retry later.',
  },
  'provider-unavailable': {
    title: 'Payroll provider unavailable',
    status: 502,
    description: 'The payroll provider could not be reached, or answered 5xx, 408 or 429, and no other source knows the answer; retry later.',
  },
  'provider-url-refused': {
    title: 'Payroll provider URL refused',
    status: 422,
    description: "A provider's URLs must be https to a public address; `errors` names the refused ones.",
  },
  'provider-without-api': {
    title: 'Payroll provider without API',
    status: 409,
    description: "The payroll's provider has no API to sync a calendar from; set the calendar by rule or file instead.",
  },
  'sandbox-provider': {
    title: 'Sandbox provider',
    status: 409,
    description: 'A sandbox payroll provider is simulated and never reached, so its connection cannot be changed.',
  },

  // Employers, payrolls and employees.
  'currency-mismatch': {
    title: 'Currency mismatch',
    status: 422,
    description: "The currency is not the mandate's or the payroll's currency; use that currency.",
  },
  'employee-already-left': {
    title: 'Employee already left',
    status: 409,
    description: 'The employee is already a leaver on this payroll; nothing to do.',
  },
  'employee-identity-conflict': {
    title: 'Employee identity conflict',
    status: 409,
    description:
      'The national registration number or date of birth differs from the one on record for an employee another payroll employs too; payrolls disagree on who the person is. An operator corrects the record.',
  },
  'employee-identity-in-use': {
    title: 'Employee identity in use',
    status: 409,
    description: 'An identifier given for the employee belongs to another employee of the provider; `errors` names it.',
  },
  'employee-import-conflict': {
    title: 'Employee import conflict',
    status: 422,
    description: 'An employee or payroll reference in the file was changed by someone else during the import; nothing was imported, import the file again.',
  },
  'employee-import-rejected': {
    title: 'Import rejected',
    status: 422,
    description:
      'Rows of the import file are bad and the import is all-or-nothing; `errors` names every error of every row. Fix them, or apply the good rows alone (`partial=true`, `--partial`).',
  },
  'empty-import-file': {
    title: 'Empty import file',
    status: 422,
    description: 'The import file is empty; it needs at least the header line naming the columns.',
  },
  'employer-exists': {
    title: 'Employer exists',
    status: 409,
    description: 'The payroll provider already has an employer with this external id; use that employer or another id.',
  },
  'end-before-start': {
    title: 'End before start',
    status: 422,
    description: "The employment's end date is before its start date; correct the date.",
  },
  'invalid-bank-account': {
    title: 'Invalid bank account',
    status: 422,
    description: 'The bank account details are invalid (sort code, account number, modulus check, name); `errors` names the fields.',
  },
  'invalid-csv': {
    title: 'Invalid CSV',
    status: 422,
    description: 'The import file is not valid CSV; nothing was imported. `errors` gives the line; fix the file.',
  },
  'invalid-employee': {
    title: 'Invalid employee',
    status: 422,
    description: 'The employee record would be invalid with these changes; `errors` names the fields.',
  },
  'invalid-import-header': {
    title: 'Invalid import header',
    status: 422,
    description: "The import file's header line does not name the import columns; nothing was imported, fix the header.",
  },
  'leaver-without-end-date': {
    title: 'Leaver without end date',
    status: 422,
    description: 'A leaver needs the date the employment ended; give end_date.',
  },
  'national-registration-number-in-use': {
    title: 'National registration number in use',
    status: 409,
    description: "Another employee of the provider has this national registration number; check the employee's number.",
  },
  'not-a-biller': {
    title: 'Not a biller',
    status: 409,
    description: 'Only biller clients are paid out, so only they have beneficiary accounts; name a biller client.',
  },
  'opt-in-status-unchanged': {
    title: 'Opt-in status unchanged',
    status: 409,
    description: 'The employer already has this salary-deduction opt-in status; nothing to do.',
  },
  'payroll-exists': {
    title: 'Payroll exists',
    status: 409,
    description: 'The payroll provider already has a payroll with this external id; use that payroll or another id.',
  },
  'payroll-id-taken': {
    title: 'Payroll id taken',
    status: 409,
    description: "The payroll id is already another provider's payroll; use another id.",
  },
  'payroll-reference-in-use': {
    title: 'Payroll reference in use',
    status: 409,
    description: 'Another employee on this payroll has this payroll reference; use another reference.',
  },
  'unknown-employer': {
    title: 'Unknown employer',
    status: 422,
    description: 'The employer named in the body does not exist; name an existing employer.',
  },

  // Calendars and bank holidays.
  'bank-holiday-exists': {
    title: 'Bank holiday exists',
    status: 409,
    description: 'The date is already a bank holiday (published or added) in the region; nothing to add.',
  },
  'calendar-repeats-itself': {
    title: 'Calendar repeats itself',
    status: 422,
    description: 'The new calendar has a pay date or a pay period twice; `pay_dates` names them. Fix the calendar.',
  },
  'frequency-mismatch': {
    title: 'Frequency mismatch',
    status: 422,
    description: "The calendar rule's frequency is not the payroll's payment run frequency; use the payroll's.",
  },
  'invalid-pay-calendar-file': {
    title: 'Invalid pay calendar file',
    status: 422,
    description: 'Rows of the pay calendar file are bad; nothing was imported. `errors` names them by line.',
  },
  'library-bank-holiday': {
    title: 'Published bank holiday',
    status: 409,
    description: 'The date is a published bank holiday; only added days can be removed.',
  },
  'locked-pay-date': {
    title: 'Locked pay date',
    status: 409,
    description: 'The new calendar removes, alters or moves a locked pay date; `pay_dates` names them. Keep locked pay dates as they are.',
  },
  'pay-date-in-use': {
    title: 'Pay date in use',
    status: 409,
    description: 'The new calendar removes pay dates that payment requests target or that already have deduction data; `pay_dates` names them.',
  },
  'pay-dates-collide': {
    title: 'Pay dates collide',
    status: 422,
    description: 'The calendar rule gives two pay dates on one day (after moving off weekends and bank holidays); change the rule.',
  },
  'pay-period-taken': {
    title: 'Pay period taken',
    status: 409,
    description: "A pay period of the new calendar is already another pay date's, outside the calendar's range; `pay_dates` names them.",
  },

  // Mandates and enablement.
  'authorisation-in-future': {
    title: 'Authorisation in the future',
    status: 422,
    description: "The mandate's authorised_at is in the future; give when the consumer actually authorised it.",
  },
  'consumer-identity-incomplete': {
    title: 'Consumer identity incomplete',
    status: 422,
    description: "The consumer lacks what ties it to the employee's record (date_of_birth, family_name); give them.",
  },
  'consumer-not-employee': {
    title: 'Consumer is not the employee',
    status: 422,
    description: "The consumer's details do not match the employee's record (which one differs is not said); check them.",
  },
  'employee-left-payroll': {
    title: 'Employee left payroll',
    status: 422,
    description: 'The employee has left the payroll, so no mandate can be given for it.',
  },
  'employee-not-on-payroll': {
    title: 'Employee not on payroll',
    status: 422,
    description: 'The employee (of a mandate, or of a confirmation) is not employed on the payroll; check the employee and payroll.',
  },
  'mandate-already-expired': {
    title: 'Mandate already expired',
    status: 422,
    description: "The mandate's valid_to is before today; give a date from today on, or none.",
  },
  'mandate-mismatch': {
    title: 'Mandate mismatch',
    status: 422,
    description: 'The mandate is for another employee or payroll than the enablement names; `errors` names the fields.',
  },
  'mandate-not-pending-enablement': {
    title: 'Mandate not pending enablement',
    status: 409,
    description: 'Only a mandate pending enablement can be enabled; `mandate_status` says what it is.',
  },
  'mandate-not-revocable': {
    title: 'Mandate not revocable',
    status: 409,
    description: 'The mandate can no longer be revoked; `mandate_status` says what it is.',
  },
  'unknown-payroll': {
    title: 'Unknown payroll',
    status: 422,
    description: 'The payroll named in the body does not exist; name an existing payroll.',
  },

  // Payment requests and schedules.
  'amount-over-limit': {
    title: 'Amount over limit',
    status: 422,
    description: 'An amount is over the largest payment request, or the mandate would ask more on one pay date than allowed; `limit` names the limit.',
  },
  'due-date-in-past': {
    title: 'Due date in the past',
    status: 422,
    description: 'The due date is before today; give a due date from today on.',
  },
  'due-date-unreachable': {
    title: 'Due date unreachable',
    status: 422,
    description: 'No open pay date is on or before the due date (`expected_pay_date` is the earliest); allow a post-due-date deduction or move the due date.',
  },
  'instalments-rejected': {
    title: 'Schedule rejected',
    status: 422,
    description: 'Instalments of the schedule cannot be accepted, for different reasons; `rejected_instalments` gives each one and why.',
  },
  'mandate-not-active': {
    title: 'Mandate not active',
    status: 422,
    description: 'Payment requests need an active or pending-enablement mandate; `mandate_status` says what it is.',
  },
  'no-open-pay-date': {
    title: 'No open pay date',
    status: [422, 409],
    description: "The mandate's payroll has no pay date still open for new payment requests (422), or a sandbox payroll none left to lock (409).",
  },
  'payment-not-cancellable': {
    title: 'Payment not cancellable',
    status: 409,
    description: 'Only a pending payment request can be cancelled; `payment_status` says what it is.',
  },
  'schedule-not-cancellable': {
    title: 'Schedule not cancellable',
    status: 409,
    description: 'The schedule can no longer be cancelled; `schedule_status` says what it is.',
  },
  'total-amount-mismatch': {
    title: 'Total amount mismatch',
    status: 422,
    description: 'The stated total_amount is not the sum of the instalment amounts; correct one or the other.',
  },
  'total-amount-too-large': {
    title: 'Total amount too large',
    status: 422,
    description: 'The instalment amounts add up to more than the largest amount accepted; lower them.',
  },

  // Deduction data, deduction records and confirmations.
  'confirmation-invalid': {
    title: 'Confirmation invalid',
    status: 422,
    description: 'Fields of the confirmation are invalid; `errors` names them.',
  },
  'confirmation-total-mismatch': {
    title: 'Confirmation total mismatch',
    status: 422,
    description: 'The confirmation total_amount is not the sum of its deducted amounts; correct one or the other.',
  },
  'deduction-data-not-final': {
    title: 'Deduction data not final',
    status: 409,
    description: 'The pay date is not locked yet, so its deduction data is not final; fetch it on or after `lock_date`.',
  },
  'deduction-data-superseded': {
    title: 'Deduction data superseded',
    status: 409,
    description: 'A re-run superseded this deduction data; confirm against the current one (`current_deduction_data_id`).',
  },
  'deduction-record-rejected': {
    title: 'Deduction record rejected',
    status: 422,
    description: 'The pushed deduction record breaks a rule; `errors` names the fields.',
  },
  'deduction-record-voided': {
    title: 'Deduction record voided',
    status: 409,
    description: 'An operator voided this version of the record; push a version above the current one to report again.',
  },
  'deduction-return-rejected': {
    title: 'Deduction return file rejected',
    status: 422,
    description: 'The return file is refused, nothing confirmed; `errors` names each fault at /lines/{line}/{column}. Fix it, or ask for partial application.',
  },
  'deduction-return-missing': {
    title: 'Deduction return file missing',
    status: 400,
    description: 'Console: the upload form has no deduction return file, or more than one; choose one file.',
    internal: ['console'],
  },
  'deduction-version-conflict': {
    title: 'Deduction version conflict',
    status: 409,
    description: 'A record with this version and other content, or a higher version, is already stored (`current_version`); push a higher version.',
  },
  'nothing-to-void': {
    title: 'Nothing to void',
    status: 409,
    description: 'The payroll has no counting records for the pay date; nothing to void.',
  },
  'pay-period-mismatch': {
    title: 'Pay period mismatch',
    status: 422,
    description: "The pay period does not match the pay date's; use the pay date's pay period.",
  },
  'reported-amount-over-limit': {
    title: 'Reported amount over limit',
    status: 422,
    description: 'A reported deduction is over the most for one employee, or the pay date total would be; `limit` names the limit.',
  },
  'void-invalid': {
    title: 'Void invalid',
    status: 422,
    description: 'A void needs a reason of the allowed length and a valid payroll and pay date; `errors` names the fields.',
  },

  // Re-runs.
  'rerun-refused': {
    title: 'Re-run refused',
    status: 409,
    description: 'The pay date has not been locked: there is no snapshot to re-run.',
  },
  'rerun-confirmation-required': {
    title: 'Re-run needs confirmation',
    status: 409,
    description:
      'The pay date is reconciled or paid out (`pay_date_state`): a re-run would change what payroll is asked for after the money has moved. Send it again with `force: true` once you are sure.',
  },
  'nightly-run-busy': {
    title: 'Another nightly run of the date is going',
    status: 409,
    internal: ['console'],
    description: 'Retrying a nightly run waits for the run of the same date that is going: nothing was retried. Try again once it has finished.',
  },

  // Cash: bank statements, credits, matches and reversals.
  'credit-already-reversed': {
    title: 'Credit already reversed',
    status: 409,
    description: 'The bank already took this credit back; nothing to reverse.',
  },
  'credit-already-set-aside': {
    title: 'Credit already set aside',
    status: 409,
    description: 'The credit is already set aside; restore it first to set it aside differently.',
  },
  'credit-not-open': {
    title: 'Credit not open',
    status: 409,
    description: 'The credit is set aside or reversed, so it cannot be matched; restore it first (`state` says which).',
  },
  'credit-not-restorable': {
    title: 'Credit not restorable',
    status: 409,
    description: 'Only a credit set aside or held can be restored; `state` says what it is.',
  },
  'credit-over-allocated': {
    title: 'Credit over-allocated',
    status: 409,
    description: 'The allocations add up to more than the credit has unmatched (`unmatched_amount`); allocate less.',
  },
  'credit-reversed': {
    title: 'Credit reversed',
    status: 409,
    description: 'The bank took this credit back; there is nothing to set aside.',
  },
  'decision-invalid': {
    title: 'Decision invalid',
    status: 422,
    description: 'A decision on a credit (set aside, restore) needs a reason; give one.',
  },
  'match-invalid': {
    title: 'Match invalid',
    status: 422,
    description: 'The manual match is invalid (no allocation, a repeated pay date, an amount that is not positive, another currency, too much received).',
  },
  'reversal-invalid': {
    title: 'Reversal invalid',
    status: 422,
    description: 'The reversal cannot be placed on this credit (no reason, another account, another amount); choose the right credit.',
  },
  'statement-conflict': {
    title: 'Statement conflict',
    status: 409,
    description: "This statement (or page) was already imported with other content; check which file is the bank's.",
  },
  'statement-rejected': {
    title: 'Bank statement rejected',
    status: 422,
    description: 'The bank statement file cannot be read; nothing was imported. `line` and `column` say where, when known.',
  },
  'unmatch-invalid': {
    title: 'Unmatch invalid',
    status: 422,
    description: 'Taking back a match needs a reason; give one.',
  },
  'unmatch-would-unfund-payouts': {
    title: 'Unmatch would unfund payouts',
    status: 409,
    description: 'Without this match the pay date would have received less than it already paid out (`paid_out`); it is not taken back.',
  },

  // Payouts and payment files.
  'no-collection-account': {
    title: 'No collection account',
    status: 409,
    description: 'There is no active collection account in a currency of the payouts to pay (`currencies`); add one first.',
  },
  'payment-file-not-kept': {
    title: 'Payment file not kept',
    status: 409,
    description: 'The payment file predates stored payment files, so its bytes were not kept; nothing to download.',
  },
  'payout-not-pending': {
    title: 'Payout not pending',
    status: 409,
    description: 'Only a pending payout can be marked paid or failed; `payout_status` says what it is.',
  },

  // Webhooks.
  'webhook-endpoint-limit-reached': {
    title: 'Webhook endpoint limit reached',
    status: 409,
    description: 'The biller has as many webhook endpoints as allowed (`webhook_endpoint_limit`); delete one to register another.',
  },
  'webhook-url-not-allowed': {
    title: 'Webhook URL not allowed',
    status: 422,
    description: 'The webhook URL must be https to a public address; use another URL.',
  },

  // Sandbox billers' simulation operations.
  'employee-not-in-deduction-data': {
    title: 'Employee not in deduction data',
    status: 422,
    description: "Outcomes name employees that are not in the pay date's deduction data; `errors` names them.",
  },
  'nothing-to-confirm': {
    title: 'Nothing to confirm',
    status: 409,
    description: 'The deduction data of the pay date asks for no deductions; there is nothing to confirm.',
  },
  'nothing-to-pay-out': {
    title: 'Nothing to pay out',
    status: 409,
    description: 'Nothing collected is waiting for a payout; confirm a locked pay date first.',
  },
  'pay-date-not-lockable': {
    title: 'Pay date not lockable',
    status: 409,
    description: 'The sandbox pay date cannot be locked (the detail says why, e.g. no collection account in its currency).',
  },

  // The operator console's forms only (answered as HTML pages).
  'amount-invalid': {
    title: 'Amount invalid',
    status: 422,
    description:
      'Console and CLI: a typed amount is not a positive decimal in major units of the currency, or has more decimal places than the currency has; write it like 1250.50.',
    internal: ['console', 'cli'],
  },
  'category-invalid': {
    title: 'Category invalid',
    status: 422,
    description: 'Console: the category a credit is set aside as is not one of the list; choose one from it.',
    internal: ['console'],
  },
  'console-password-too-weak': {
    title: 'Console password too weak',
    status: 422,
    description: "Console and CLI: the console user's password is too weak; choose a longer, less common one.",
    internal: ['console', 'cli'],
  },
  'console-user-exists': {
    title: 'Console user exists',
    status: 409,
    description: 'Console and CLI: a console user with this email already exists.',
    internal: ['console', 'cli'],
  },
  'console-user-invalid': {
    title: 'Console user invalid',
    status: 422,
    description: 'Console and CLI: the console user needs a name, an email address and a known role.',
    internal: ['console', 'cli'],
  },
  'invalid-date': {
    title: 'Invalid date',
    status: 400,
    description: 'Console: a date filter is not a date as YYYY-MM-DD.',
    internal: ['console'],
  },
  'invalid-pay-date': {
    title: 'Invalid pay date',
    status: 400,
    description: 'Console: a pay date in the address is not a date as YYYY-MM-DD.',
    internal: ['console'],
  },
  'invalid-status': {
    title: 'Invalid status',
    status: 400,
    description: 'Console: a status filter is not one of the statuses listed.',
    internal: ['console'],
  },
  invalid_endpoint: {
    title: 'Invalid endpoint',
    status: 422,
    description: 'Console: the webhook endpoint id of a redelivery is not a valid id.',
    internal: ['console'],
  },
  'job-not-failed': {
    title: 'Job not failed',
    status: 409,
    description: 'Console: only a failed job can be retried.',
    internal: ['console'],
  },
  'reason-too-long': {
    title: 'Reason too long',
    status: 422,
    description: 'Console: the reason is longer than allowed; shorten it.',
    internal: ['console'],
  },
  redelivery_refused: {
    title: 'Redelivery refused',
    status: 422,
    description: 'Console: the event cannot be delivered again (the detail says why).',
    internal: ['console'],
  },
  'statement-missing': {
    title: 'Statement missing',
    status: 400,
    description: 'Console: the upload form has no statement file, or more than one; choose one file.',
    internal: ['console'],
  },

  // The command line only.
  'invalid-horizon': {
    title: 'Invalid horizon',
    status: 422,
    description: 'CLI: --until is before --from.',
    internal: ['cli'],
  },
  'invalid-rule': {
    title: 'Invalid rule',
    status: 422,
    description: 'CLI: the pay calendar rule options do not make a rule.',
    internal: ['cli'],
  },
  'invalid-salary': {
    title: 'Invalid salary',
    status: 422,
    description: 'CLI: --annualised-salary is not an amount in the currency.',
    internal: ['cli'],
  },
  'invalid-sandbox-size': {
    title: 'Invalid sandbox size',
    status: 422,
    description: 'CLI: a sandbox size option is not a whole number in its range.',
    internal: ['cli'],
  },
  'not-a-live-biller': {
    title: 'Not a live biller',
    status: 422,
    description: 'CLI: a sandbox is made for a live biller client, and this client is not one.',
    internal: ['cli'],
  },
  'unreadable-file': {
    title: 'Unreadable file',
    status: 422,
    description: 'CLI: the file to import cannot be read.',
    internal: ['cli'],
  },
  'unwritable-file': {
    title: 'Unwritable file',
    status: 422,
    description: 'CLI: the error file cannot be written.',
    internal: ['cli'],
  },

  // The sandbox payroll provider (a simulated provider, answering this service's own adapter).
  'insufficient-identifiers': {
    title: 'Insufficient identifiers',
    status: 422,
    description: 'Sandbox provider: an availability check identifies nobody; give a national registration number, or family name with date of birth.',
    internal: ['sandbox-provider'],
  },
  'invalid-employee-push': {
    title: 'Invalid employee push',
    status: 422,
    description: 'Sandbox provider: the pushed deduction record does not fit the payroll; `errors` names the fields.',
    internal: ['sandbox-provider'],
  },
  'push-version-conflict': {
    title: 'Push version conflict',
    status: 409,
    description: 'Sandbox provider: this version was already received with other content, or is older than the current one; send a higher version.',
    internal: ['sandbox-provider'],
  },
} as const satisfies Record<string, ProblemCodeEntry>;

/** A code of the catalogue: what a DomainError or an HttpProblem may carry. */
export type ProblemCode = keyof typeof problemCatalogue;

/** Every code, in the catalogue's order. */
export const problemCodes = Object.keys(problemCatalogue) as ProblemCode[];

/** The catalogue's entry of a code, typed as an entry (its `status` one number or several). */
export function problemCodeEntry(code: ProblemCode): ProblemCodeEntry {
  return problemCatalogue[code];
}
