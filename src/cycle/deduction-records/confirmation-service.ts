import { describeActor, type Actor } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import { providersPayroll } from '../deduction-data/deduction-data-service.ts';
import { formatMinorUnits, MAX_EXACT_MINOR_UNITS } from '../../platform/money/major-units.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import type { Caller } from '../../platform/shared/caller.ts';
import { ConflictError, InvalidError, NotFoundError, type FieldError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { findCurrentSnapshot, rowLockPayDateForConfirmation } from '../snapshots/snapshot-repository.ts';
import { checkConfirmation, MAX_LISTED_ERRORS } from './confirmation-check.ts';
import { findConfirmationContext, recordConfirmation } from './confirmation-repository.ts';
import { reportedTotalOfOthers } from './reported-records-repository.ts';
import { payDateReportedOverLimitError, payDateWithinReportedLimit, reportedAmountsOverLimitError, type ReportedLimits } from './reported-limits.ts';
import { toConfirmationResponse, type ConfirmationResponse, type ConfirmationSubmission } from './confirmation-resource.ts';

function listedErrors(errors: FieldError[], errorCount: number): string {
  return errorCount > errors.length ? ` (the first ${errors.length} of ${errorCount} are listed)` : '';
}

function totalMismatch(statedTotal: number, linesTotal: number | null, currency: string): InvalidError {
  const stated = formatMinorUnits(statedTotal, currency);
  const lines = linesTotal === null ? `more than ${formatMinorUnits(MAX_EXACT_MINOR_UNITS, currency)}` : formatMinorUnits(linesTotal, currency);
  const linesInWords = linesTotal === null ? `more than ${formatMoney(MAX_EXACT_MINOR_UNITS, currency)}` : formatMoney(linesTotal, currency);
  return new InvalidError(
    'confirmation-total-mismatch',
    `total_amount ${formatMoney(statedTotal, currency)} does not equal the sum of the deducted amounts, ${linesInWords}`,
    {
      errors: [{ pointer: '/confirmation/total_amount', detail: `must equal the sum of deductions[].deducted_amount (${lines})` }],
      members: { stated_total: stated, deducted_total: lines },
    },
  );
}

/**
 * Who hands a confirmation in: the payroll provider's own client (the API), or an operator carrying
 * the provider's report (its deduction return file, imported at the CLI or the console), who may
 * confirm any payroll's pay date and is recorded by name instead of a client.
 */
export type ConfirmationSubmitter = { kind: 'provider'; caller: Caller } | { kind: 'operator'; actor: Actor };

/**
 * Confirmation submission: what payroll deducted for a whole pay date, stored in one transaction as
 * one new record version per employee (set-based, whatever the number of lines), after which the
 * snapshot it answers is confirmed.
 */
export async function submitConfirmation(
  trx: Executor,
  caller: Caller,
  payrollId: string,
  submission: ConfirmationSubmission,
  limits: ReportedLimits,
): Promise<ConfirmationResponse> {
  return confirmPayDate(trx, { kind: 'provider', caller }, payrollId, submission, limits);
}

/**
 * The same confirmation, for whoever submits it: the provider's API call and an imported return file
 * both come here, so they are checked, stored, confirmed and reconciled alike.
 */
export async function confirmPayDate(
  trx: Executor,
  submitter: ConfirmationSubmitter,
  payrollId: string,
  submission: ConfirmationSubmission,
  limits: ReportedLimits,
): Promise<ConfirmationResponse> {
  if (!isUuid(payrollId)) throw new NotFoundError(`Payroll ${payrollId}`);
  const employeeIds = submission.deductions.map((line) => line.employee_id.toLowerCase());
  const found = await findConfirmationContext(trx, payrollId, submission.deduction_data_id, employeeIds);
  const payroll = submitter.kind === 'provider' ? providersPayroll(submitter.caller, payrollId, found.payroll) : found.payroll;
  if (!payroll) throw new NotFoundError(`Payroll ${payrollId}`);
  const located = found.snapshot;
  if (!located || located.payroll_id !== payroll.id) throw new NotFoundError(`Deduction data ${submission.deduction_data_id}`);

  // Checked before taking the pay date, which holds up pushes to it until this transaction ends.
  const check = checkConfirmation(submission, { payPeriod: located.pay_period, currency: payroll.currency, limits });
  if (check.kind === 'invalid') {
    throw new InvalidError('confirmation-invalid', `The confirmation has ${check.errorCount} invalid field(s)${listedErrors(check.errors, check.errorCount)}`, {
      errors: check.errors,
    });
  }
  if (check.kind === 'over-limit') throw reportedAmountsOverLimitError(check.errors, limits, payroll.currency, check.errorCount);
  if (check.kind === 'total-mismatch') throw totalMismatch(check.statedTotal, check.linesTotal, payroll.currency);

  const strangers = found.positionsNotOnPayroll;
  if (strangers.length > 0) {
    const errors = strangers.slice(0, MAX_LISTED_ERRORS).map((position) => ({
      pointer: `/confirmation/deductions/${position}/employee_id`,
      detail: `employee ${employeeIds[position]} is not on payroll ${payroll.id}`,
    }));
    throw new InvalidError('employee-not-on-payroll', `${strangers.length} employee(s) are not on payroll ${payroll.id}${listedErrors(errors, strangers.length)}`, {
      errors,
    });
  }

  // Read again under the row lock: a re-run may have superseded it while we waited.
  const snapshot = await rowLockPayDateForConfirmation(trx, payroll.id, located.pay_date, located.id);
  if (!snapshot) throw new Error(`deduction data ${located.id} vanished under its pay date's lock`);
  if (snapshot.status === 'superseded') {
    const currentId = (await findCurrentSnapshot(trx, payroll.id, snapshot.pay_date))?.id;
    throw new ConflictError(
      'deduction-data-superseded',
      `Deduction data ${snapshot.id} was superseded by a re-run of ${snapshot.pay_date}; confirm against the current deduction data ${currentId ?? 'once it is written'}`,
      { members: { current_deduction_data_id: currentId ?? null } },
    );
  }

  // Exact under the pay date's row lock: no push can add to the others meanwhile.
  const othersTotal = await reportedTotalOfOthers(trx, payroll.id, snapshot.pay_date, employeeIds);
  if (!payDateWithinReportedLimit(othersTotal, BigInt(check.total), limits)) {
    throw payDateReportedOverLimitError(snapshot.pay_date, othersTotal, BigInt(check.total), limits, payroll.currency, '/confirmation/total_amount');
  }

  const confirmation = await recordConfirmation(trx, {
    payrollId: payroll.id,
    payPeriod: snapshot.pay_period,
    payDate: snapshot.pay_date,
    deductionDataId: snapshot.id,
    currency: payroll.currency,
    submittedByClientId: submitter.kind === 'provider' ? submitter.caller.clientId : null,
    submittedBy: submitter.kind === 'operator' ? describeActor(submitter.actor) : null,
    totalAmount: check.total,
    employeeIds,
    amounts: check.amounts,
    leavers: submission.deductions.map((line) => line.leaver),
  });

  return toConfirmationResponse({
    id: confirmation.id,
    payroll_id: payroll.id,
    pay_date: snapshot.pay_date,
    pay_period: snapshot.pay_period,
    deduction_data_id: snapshot.id,
    currency: payroll.currency,
    total_amount: check.total,
    employee_count: employeeIds.length,
    received_at: confirmation.received_at,
  });
}
